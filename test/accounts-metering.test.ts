// Metering: every key of an account draws on one balance that never goes below zero under concurrent requests,
// refused calls charge nothing, /v1/usage splits the period by endpoint template, and the meter is written to
// the database at least every second and at shutdown.

import { rmSync } from 'node:fs';
import t from 'tap';
import { hashKey } from '../sql/keys.js';
import { ADMIN_KEY, TestClock, startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const clock = new TestClock();
const app = await startTestApp(t, { now: clock.now, shards: 1 });

interface Usage { account_id: number; used: number; remaining: number; calls: number; by_endpoint?: { endpoint: string; calls: number; credits: number }[] }

async function accountWithTwoKeys(a: TestApp, tier: string, credits: number): Promise<{ k1: string; k2: string; id: number }> {
  const first = (await (await a.post('/v1/admin/keys', { tier, credits }, admin)).json()) as { key: string; account_id: number };
  const second = (await (await a.post('/v1/admin/keys', { account_id: first.account_id }, admin)).json()) as { key: string; account_id: number };
  return { k1: first.key, k2: second.key, id: first.account_id };
}

async function usage(a: TestApp, key: string): Promise<Usage> {
  return (await (await a.get('/v1/usage?by_endpoint=true', { 'X-API-Key': key })).json()) as Usage;
}

async function dbBalance(a: TestApp, accountId: number): Promise<{ remaining: number; used: number }> {
  const [row] = await a.app.services.db.sql`select credits_remaining, credits_used from accounts where id = ${accountId}`;
  return { remaining: Number(row!.credits_remaining), used: Number(row!.credits_used) };
}

t.test('metering - 400 parallel requests on two keys of one account never overspend', async (t) => {
  const { k1, k2, id } = await accountWithTwoKeys(app, 'starter', 150);
  // 1-credit and 3-credit calls interleaved on both keys
  const calls = Array.from({ length: 400 }, (_, i) => {
    const key = i % 2 === 0 ? k1 : k2;
    const path = i % 4 < 2 ? '/v1/sports/basketball_nba/odds' : '/v1/sports/basketball_nba/props';
    return app.get(path, { 'X-API-Key': key });
  });
  const responses = await Promise.all(calls);
  await Promise.all(responses.map((r) => r.arrayBuffer()));
  const served = responses.filter((r) => r.status === 200);
  const refused = responses.filter((r) => r.status !== 200);
  t.ok(refused.every((r) => r.status === 401), 'every refusal is 401 (OUT_OF_USAGE_CREDITS)');
  const charged = served.reduce((n, r) => n + Number(r.headers.get('x-requests-last')), 0);
  t.ok(charged <= 150, `charged ${charged} of 150`);
  t.ok(responses.every((r) => Number(r.headers.get('x-ratelimit-remaining')) >= 0), 'no response shows a negative balance');
  t.ok(refused.every((r) => r.headers.get('x-requests-last') === '0'), 'a refused call charges 0');
  const u = await usage(app, k2);
  t.equal(u.account_id, id, 'both keys are one account');
  t.equal(u.used, charged, 'used is the sum of what each served call was charged');
  t.equal(u.remaining, 150 - charged, 'remaining is the rest');
  t.equal(u.remaining, 0, 'every credit spent before a refusal (the last call served for what was left)');
  await app.app.services.accounts.flush();
  t.same(await dbBalance(app, id), { remaining: 150 - charged, used: charged }, 'the database agrees');
});

t.test('metering - refused calls never charge', async (t) => {
  t.teardown(() => clock.release());
  const { k1, id } = await accountWithTwoKeys(app, 'starter', 10);
  const free = await app.key('free', 1000);
  const h = { 'X-API-Key': k1 };
  const refusals: [string, () => Promise<Response>, number][] = [
    ['422 bad parameter', () => app.get('/v1/sports/basketball_nba/odds?regions=zz', h), 422],
    ['404 unknown sport', () => app.get('/v1/sports/curling_xyz/arbitrage', h), 404],
    ['405 wrong method', () => fetch(`${app.base}/v1/sports/basketball_nba/odds`, { method: 'DELETE', headers: h }), 405],
    ['HEAD of a priced endpoint', () => fetch(`${app.base}/v1/sports/basketball_nba/arbitrage`, { method: 'HEAD', headers: h }), 200],
  ];
  for (const [name, call, status] of refusals) {
    const res = await call();
    await res.arrayBuffer();
    t.equal(res.status, status, `${name}: ${status}`);
  }
  const u = await usage(app, k1);
  t.same([u.used, u.remaining, u.calls, u.by_endpoint], [0, 10, 0, []], 'nothing charged, nothing counted');
  // out of credits: the last credit served a call of 12 (SPEC: the balance reaches 0 first); the next is refused
  const last = await app.key('starter', 1);
  const twelve = () => app.get('/v1/sports/basketball_nba/odds?markets=h2h,spreads,totals&regions=us,uk,eu,au', { 'X-API-Key': last });
  const served = await twelve();
  await served.arrayBuffer();
  t.same([served.status, served.headers.get('x-requests-last')], [200, '1'], 'a call of 12 with 1 left: served for 1');
  const refused = await twelve();
  await refused.arrayBuffer();
  t.same([refused.status, refused.headers.get('x-requests-last')], [401, '0'], 'then 401, charging nothing');
  const lu = await usage(app, last);
  t.same([lu.used, lu.remaining, lu.calls], [1, 0, 1], 'the refused call not counted');
  // the free cap: 429s charge nothing either
  const second = clock.freeze(Math.floor(Date.now() / 1000) * 1000 + 200);
  const burst = await Promise.all(Array.from({ length: 70 }, () => app.get('/v1/sports/basketball_nba/odds', { 'X-API-Key': free })));
  await Promise.all(burst.map((r) => r.arrayBuffer()));
  const limited = burst.filter((r) => r.status === 429);
  t.equal(limited.length, 10, '10 over the cap');
  t.ok(limited.every((r) => r.headers.get('retry-after') === '1'), 'Retry-After: 1');
  clock.freeze(second + 1000);
  const fu = await usage(app, free);
  t.same([fu.used, fu.calls], [60, 60], 'only the 60 served calls are charged and counted');
  await app.app.services.accounts.flush();
  t.same(await dbBalance(app, id), { remaining: 10, used: 0 }, 'the database agrees');
});

t.test('usage - by endpoint template, /v4 counted with /v1, webhook-free calls listed at 0', async (t) => {
  const { k1, k2 } = await accountWithTwoKeys(app, 'pro', 1000);
  const calls: [string, string][] = [
    ['/v1/sports/basketball_nba/odds?markets=h2h,spreads', k1],
    ['/v4/sports/soccer_epl/odds', k2],
    ['/v1/sports/basketball_nba/arbitrage', k1],
    ['/v1/sports/basketball_nba/arbitrage', k2],
    ['/v1/bookmakers', k1],
  ];
  for (const [path, key] of calls) await (await app.get(path, { 'X-API-Key': key })).arrayBuffer();
  const plain = (await (await app.get('/v1/usage', { 'X-API-Key': k1 })).json()) as Usage;
  t.equal(plain.by_endpoint, undefined, 'no split unless asked');
  const u = await usage(app, k1);
  t.same(u.by_endpoint, [
    { endpoint: 'GET /v1/sports/{sport_key}/arbitrage', calls: 2, credits: 20 },
    { endpoint: 'GET /v1/sports/{sport_key}/odds', calls: 2, credits: 3 },
    { endpoint: 'GET /v1/bookmakers', calls: 1, credits: 0 },
  ], 'per template, both keys, most credits first');
  t.equal(u.used, 23, 'used');
  t.equal(u.by_endpoint!.reduce((n, e) => n + e.credits, 0), u.used, 'the split adds up to used');
  t.equal(u.calls, 5, 'calls this period');
  t.equal((await app.get('/v1/usage?by_endpoint=maybe', { 'X-API-Key': k1 })).status, 422, 'a bad boolean is 422');
  t.equal((await app.get('/v1/usage')).status, 401, 'a key is needed');
});

t.test('usage - every keyed call counts, free ones at 0, but reading the meter does not move it', async (t) => {
  // regression from the API audit: free calls counted only where the route had a price (0 for /v1/bookmakers), so
  // calculators left no trace and api-key-check's last_request_at_iso stayed null after them
  const { k1, k2 } = await accountWithTwoKeys(app, 'pro', 1000);
  const check = async () => ((await (await app.get('/v1/meta/api-key-check', { 'X-API-Key': k2 })).json()) as { subscription: { last_request_at_iso: string | null } }).subscription.last_request_at_iso;
  t.equal(await check(), null, 'a new account: no request yet');
  await usage(app, k1);
  t.equal(await check(), null, 'reading the usage and checking the key are not requests');
  const calc = await app.get('/v1/calc/kelly?price=2.1&fair_prob_pct=50', { 'X-API-Key': k1 });
  t.equal(calc.status, 200, 'a calculator call');
  t.notOk((await check()) === null, 'it moves last_request_at');
  t.equal((await app.get('/v1/calc/kelly?price=0.5&fair_prob_pct=50', { 'X-API-Key': k1 })).status, 422, 'a refused call');
  const u = await usage(app, k1);
  t.same(u.by_endpoint, [{ endpoint: 'GET /v1/calc/kelly', calls: 1, credits: 0 }], 'the calculator counted once at 0 credits; the 422, the usage reads and the key checks not at all');
  t.same([u.used, u.calls], [0, 1], 'nothing charged, one call');
});

t.test('metering - written at least every second without a flush call, and at shutdown', async (t) => {
  const { k1, id } = await accountWithTwoKeys(app, 'starter', 500);
  await (await app.get('/v1/sports/basketball_nba/arbitrage', { 'X-API-Key': k1 })).arrayBuffer();
  const deadline = Date.now() + 3000;
  let seen = await dbBalance(app, id);
  while (seen.used !== 10 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await dbBalance(app, id);
  }
  t.same(seen, { remaining: 490, used: 10 }, 'the periodic write persisted the charge');
  const [u] = await app.app.services.db.sql`select calls, credits from account_usage where account_id = ${id}`;
  t.same([Number(u!.calls), Number(u!.credits)], [1, 10], 'and its usage row');

  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestApp(t, { dataDir, shards: 1 });
  const own = await accountWithTwoKeys(first, 'starter', 100);
  for (let i = 0; i < 3; i++) await (await first.get('/v1/sports/basketball_nba/ev', { 'X-API-Key': own.k1 })).arrayBuffer();
  // closed at once: the charges of the last second go out with the shutdown write
  await first.close();
  const second = await startTestApp(t, { dataDir, shards: 1 });
  const after = await usage(second, own.k2);
  t.same([after.used, after.remaining], [30, 70], 'the balance survived the restart');
  t.same(after.by_endpoint, [{ endpoint: 'GET /v1/sports/{sport_key}/ev', calls: 3, credits: 30 }], 'and the usage split');
  const [row] = await second.app.services.db.sql`select last_request_at from api_keys where key_hash = ${hashKey(own.k1)}`;
  t.ok(row!.last_request_at instanceof Date, 'the key\'s last request time is kept');
});

t.test('metering - a call is charged once delivered: credits held meanwhile are never written (a crash kept them charged)', async (t) => {
  // a call running past the meter's once-a-second write had its credits written as used; when it then failed or its
  // client left, the refund lived in memory only, and a kill -9 before the next write kept the charge
  const { k1, id } = await accountWithTwoKeys(app, 'starter', 100);
  const accounts = app.app.services.accounts;
  const k = accounts.resolve(k1)!;
  t.equal(accounts.reserveUpTo(k, 10, clock.now()), 10, 'reserved');
  t.same([k.remaining, k.used], [90, 0], 'held: off the balance, not used yet');
  await accounts.flush();
  t.same(await dbBalance(app, id), { remaining: 100, used: 0 }, 'a write while the call runs holds nothing of it: a crash now charges nothing');
  accounts.refund(k, 10);
  t.same([k.remaining, k.used], [100, 0], 'a failed call: the credits come back');
  await accounts.flush();
  t.same(await dbBalance(app, id), { remaining: 100, used: 0 }, 'nothing written');
  t.equal(accounts.reserveUpTo(k, 10, clock.now()), 10, 'reserved again');
  accounts.settle(k, 10, clock.now());
  await accounts.flush();
  t.same(await dbBalance(app, id), { remaining: 90, used: 10 }, 'delivered: charged and written');
  const res = await app.get('/v1/sports/basketball_nba/arbitrage', { 'X-API-Key': k1 });
  await res.arrayBuffer();
  t.same([res.headers.get('x-requests-remaining'), res.headers.get('x-requests-used'), res.headers.get('x-requests-last')], ['80', '20', '10'], 'a delivered call over HTTP: the headers after its charge');
  t.equal(k.account.held, 0, 'nothing left held');
});
