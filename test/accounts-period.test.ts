// Billing periods on a simulated clock: at the period end the balance becomes the tier's allowance, usage
// counters start again (the ended period's are kept in the database), and an exhausted account works again.

import { rmSync } from 'node:fs';
import t from 'tap';
import { ADMIN_KEY, TestClock, startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';

const admin = { authorization: `Bearer ${ADMIN_KEY}` };

interface Usage { used: number; remaining: number; monthly_credits: number; period_start_iso: string; period_end_iso: string; calls: number; by_endpoint?: { endpoint: string; credits: number }[] }

const usage = async (a: TestApp, key: string): Promise<Usage> => (await (await a.get('/v1/usage?by_endpoint=true', { 'X-API-Key': key })).json()) as Usage;
const spend = async (a: TestApp, key: string, path = '/v1/sports/basketball_nba/arbitrage'): Promise<Response> => {
  const res = await a.get(path, { 'X-API-Key': key });
  await res.arrayBuffer();
  return res;
};

t.test('period - the balance resets at the period end, on the injected clock', async (t) => {
  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const clock = new TestClock();
  clock.freeze(Date.UTC(2031, 0, 31, 12));
  const app = await startTestApp(t, { now: clock.now, dataDir, shards: 1 });
  const issued = (await (await app.post('/v1/admin/keys', { tier: 'starter', credits: 25 }, admin)).json()) as { key: string; account_id: number };
  const key = issued.key;

  let u = await usage(app, key);
  t.same([u.period_start_iso, u.period_end_iso], ['2031-01-31T12:00:00Z', '2031-02-28T12:00:00Z'], 'a calendar month from the start, clamped');
  t.equal((await spend(app, key)).status, 200, '10 credits');
  t.equal((await spend(app, key)).status, 200, '10 more');
  // the third costs 10 with 5 left: served for the last 5, so X-RateLimit-Remaining reaches 0 before a refusal
  // (SPEC; it was refused with 5 shown left)
  const last = await spend(app, key);
  t.same([last.status, last.headers.get('x-requests-last'), last.headers.get('x-ratelimit-remaining')], [200, '5', '0'], 'the third: served for the 5 left');
  const refused = await spend(app, key);
  t.same([refused.status, refused.headers.get('x-ratelimit-remaining')], [401, '0'], 'then refused, the balance shown at 0');
  t.equal(((await usage(app, key)).used), 25, 'used 25 of 25');

  clock.freeze(Date.UTC(2031, 1, 28, 11, 59, 59, 999));
  t.equal((await spend(app, key)).status, 401, 'a millisecond before the end: still the old period');

  clock.freeze(Date.UTC(2031, 1, 28, 12));
  const renewed = await spend(app, key);
  t.equal(renewed.status, 200, 'at the end: the new period serves the call');
  t.equal(renewed.headers.get('x-ratelimit-remaining'), String(20_000 - 10), 'from the tier\'s full allowance');
  u = await usage(app, key);
  t.same([u.period_start_iso, u.period_end_iso, u.used, u.remaining, u.calls], ['2031-02-28T12:00:00Z', '2031-03-28T12:00:00Z', 10, 19_990, 1], 'the new period');
  t.same(u.by_endpoint, [{ endpoint: 'GET /v1/sports/{sport_key}/arbitrage', calls: 1, credits: 10 }], 'usage counts start again');

  // a clock that jumps months lands in the period that holds it; a read alone renews the balance
  clock.freeze(Date.UTC(2031, 5, 2));
  u = await usage(app, key);
  t.same([u.period_start_iso, u.period_end_iso, u.used, u.remaining, u.calls], ['2031-05-28T12:00:00Z', '2031-06-28T12:00:00Z', 0, 20_000, 0], 'three months later');
  const check = (await (await app.get('/v1/meta/api-key-check', { 'X-API-Key': key })).json()) as { subscription: { period_end_iso: string } };
  t.equal(check.subscription.period_end_iso, '2031-06-28T12:00:00Z', 'api-key-check shows the current period');

  await app.app.services.accounts.flush();
  const periods = await app.app.services.db.sql`
    select period_start, calls::int, credits::int from account_usage where account_id = ${issued.account_id} order by period_start`;
  t.same(periods.map((p) => [(p.period_start as Date).toISOString(), p.calls, p.credits]), [
    ['2031-01-31T12:00:00.000Z', 3, 25],
    ['2031-02-28T12:00:00.000Z', 1, 10],
  ], 'each ended period\'s usage is kept');
  const [acc] = await app.app.services.db.sql`select period_start, period_end, credits_remaining::int from accounts where id = ${issued.account_id}`;
  t.same([(acc!.period_start as Date).toISOString(), (acc!.period_end as Date).toISOString(), acc!.credits_remaining],
    ['2031-05-28T12:00:00.000Z', '2031-06-28T12:00:00.000Z', 20_000], 'the account row holds the current period');
  await app.close();

  // a restart inside the period keeps it; one after its end renews at the first use
  clock.freeze(Date.UTC(2031, 5, 10));
  const again = await startTestApp(t, { now: clock.now, dataDir, shards: 1 });
  t.equal((await spend(again, key)).headers.get('x-ratelimit-remaining'), '19990', 'after a restart: the stored period continues');
  clock.freeze(Date.UTC(2031, 5, 28, 12));
  t.equal((await spend(again, key)).headers.get('x-ratelimit-remaining'), '19990', 'and renews at its end');
});

t.test('period - credits held across the period end go back to the new period, not above its allowance', async (t) => {
  // a refund took back credits charged in the ended period: 40 left, 10 reserved, renewed to 1,000, refunded: 1,010
  // remaining and -10 used
  const clock = new TestClock();
  clock.freeze(Date.UTC(2031, 0, 10, 12));
  const app = await startTestApp(t, { now: clock.now, shards: 1 });
  const issued = (await (await app.post('/v1/admin/keys', { tier: 'free', credits: 40 }, admin)).json()) as { key: string };
  const accounts = app.app.services.accounts;
  const k = accounts.resolve(issued.key)!;
  t.equal(accounts.reserveUpTo(k, 10, clock.now()), 10, 'reserved 10 of 40');
  clock.freeze(Date.UTC(2031, 1, 10, 12));
  t.ok(accounts.affords(k, 1, clock.now()), 'the next period begins');
  t.same([k.remaining, k.account.used], [990, 0], 'started without the held credits');
  accounts.refund(k, 10);
  t.same([k.remaining, k.used], [1000, 0], 'refunded: the allowance, no negative use');
  t.equal(accounts.reserveUpTo(k, 10, clock.now()), 10, 'another call');
  accounts.settle(k, 10, clock.now());
  const u = await usage(app, issued.key);
  t.same([u.used, u.remaining], [10, 990], 'a delivered one is charged to the new period');
});
