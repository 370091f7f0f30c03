// Authentication, key issuance, credit metering and the free-tier rate cap over a real socket; key storage and
// credit persistence across a restart on every database of appDatabases().

import { rmSync } from 'node:fs';
import t from 'tap';
import { hashKey } from '../sql/keys.js';
import { ADMIN_KEY, TestClock, appDatabases, startTestApp, type TestApp, type TestAppOptions } from './helpers/app.js';
import { freshDataDir, testSchemaName } from './helpers/db.js';

interface ErrBody { message: string; error_code: string; detail?: { loc: unknown[] }[] }

const clock = new TestClock();
const app = await startTestApp(t, { now: clock.now });
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

function odds(a: TestApp, query: string, headers: Record<string, string>): Promise<Response> {
  return a.get(`/v1/sports/basketball_nba/odds${query === '' ? '' : '?' + query}`, headers);
}

async function balanceRow(a: TestApp, key: string): Promise<{ remaining: number; used: number }> {
  await a.app.services.accounts.flush();
  // balances belong to the key's account (issue 8)
  const [row] = await a.app.services.db.sql`
    select a.credits_remaining, a.credits_used from api_keys k join accounts a on a.id = k.account_id where k.key_hash = ${hashKey(key)}`;
  return { remaining: Number(row.credits_remaining), used: Number(row.credits_used) };
}

t.test('auth - X-API-Key, Authorization: Bearer and apiKey are accepted', async (t) => {
  const k = await app.key('starter', 100);
  const forms: [string, string, Record<string, string>][] = [
    ['X-API-Key', '', { 'X-API-Key': k }],
    ['Authorization: Bearer', '', { authorization: `Bearer ${k}` }],
    ['lowercase bearer scheme', '', { authorization: `bearer ${k}` }],
    ['apiKey query parameter', `apiKey=${k}`, {}],
    ['apiKey among other parameters', `markets=h2h&apiKey=${encodeURIComponent(k)}&regions=us`, {}],
  ];
  let remaining = 100;
  for (const [name, q, headers] of forms) {
    const res = await odds(app, q, headers);
    remaining--;
    t.equal(res.status, 200, `${name}: 200`);
    t.equal(res.headers.get('x-ratelimit-remaining'), String(remaining), `${name}: charged to the key`);
    await res.arrayBuffer();
  }
});

t.test('auth - precedence: X-API-Key, then Bearer, then apiKey', async (t) => {
  const a = await app.key('starter', 100);
  const b = await app.key('starter', 200);
  const wrong = 'lw_ffffffffffffffffffffffffffffffff';
  const cases: [string, string, Record<string, string>, number, string][] = [
    ['X-API-Key wins over a wrong apiKey', `apiKey=${wrong}`, { 'X-API-Key': a }, 200, '99'],
    ['X-API-Key wins over a valid apiKey of another key', `apiKey=${b}`, { 'X-API-Key': a }, 200, '98'],
    ['X-API-Key wins over Bearer', '', { 'X-API-Key': a, authorization: `Bearer ${b}` }, 200, '97'],
    ['Bearer wins over apiKey', `apiKey=${a}`, { authorization: `Bearer ${b}` }, 200, '199'],
    ['a wrong X-API-Key is not rescued by a valid apiKey', `apiKey=${a}`, { 'X-API-Key': wrong }, 401, ''],
  ];
  for (const [name, q, headers, status, remaining] of cases) {
    const res = await odds(app, q, headers);
    t.equal(res.status, status, `${name}: ${status}`);
    if (status === 200) t.equal(res.headers.get('x-ratelimit-remaining'), remaining, `${name}: charged to the winning key`);
    else t.equal(((await res.json()) as ErrBody).error_code, 'INVALID_KEY', `${name}: INVALID_KEY`);
    await res.arrayBuffer().catch(() => undefined);
  }
});

t.test('auth - missing and invalid keys are 401 and carry no usage headers', async (t) => {
  const cases: [string, string, Record<string, string>, string][] = [
    ['no key', '', {}, 'MISSING_KEY'],
    ['Basic scheme is not a key', '', { authorization: 'Basic dXNlcjpwYXNz' }, 'MISSING_KEY'],
    ['empty apiKey', 'apiKey=', {}, 'MISSING_KEY'],
    ['unknown key', '', { 'X-API-Key': 'lw_00000000000000000000000000000000' }, 'INVALID_KEY'],
    ['the admin key is not an API key', '', { 'X-API-Key': ADMIN_KEY }, 'INVALID_KEY'],
  ];
  for (const [name, q, headers, code] of cases) {
    const res = await odds(app, q, headers);
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(((await res.json()) as ErrBody).error_code, code, `${name}: ${code}`);
    t.equal(res.headers.get('x-ratelimit-remaining'), null, `${name}: no X-RateLimit-Remaining`);
  }
});

t.test('auth - two different apiKey values: 401, neither key charged; the same key twice works', async (t) => {
  const a = await app.key('starter', 10);
  const b = await app.key('free', 10);
  const res = await odds(app, `apiKey=${a}&apiKey=${b}`, {});
  t.equal(res.status, 401, '401');
  const body = (await res.json()) as ErrBody;
  t.same([body.error_code, /more than once/.test(body.message)], ['INVALID_KEY', true], 'INVALID_KEY, saying why');
  for (const k of [a, b]) {
    const check = await odds(app, `apiKey=${k}`, {});
    t.equal(check.headers.get('x-ratelimit-remaining'), '9', 'neither key was charged for it');
    await check.arrayBuffer();
  }
  const same = await odds(app, `apiKey=${a}&apiKey=${a}`, {});
  t.equal(same.status, 200, 'the same key twice: 200');
  await same.arrayBuffer();
  const mixed = await odds(app, `apiKey=${a}&api_key=${b}`, {});
  t.same([mixed.status, ((await mixed.json()) as ErrBody).error_code], [401, 'INVALID_KEY'], 'apiKey and api_key naming two keys: 401 too');
});

t.test('auth - api_key, as The Odds API sample code sends it, is the apiKey parameter', async (t) => {
  const k = await app.key('starter', 10);
  const res = await odds(app, `api_key=${k}`, {});
  t.equal(res.status, 200, '200');
  t.equal(res.headers.get('x-requests-remaining'), '9', 'charged to that key');
  await res.arrayBuffer();
  const bad = await odds(app, 'api_key=lw_00000000000000000000000000000000', {});
  t.same([bad.status, ((await bad.json()) as ErrBody).error_code], [401, 'INVALID_KEY'], 'an unknown api_key is INVALID_KEY, not MISSING_KEY');
  const sports = await app.get('/v4/sports?api_key=lw_00000000000000000000000000000000');
  t.equal(sports.status, 401, 'a free endpoint checks a key given as api_key as it checks apiKey');
  await sports.arrayBuffer();
});

t.test('admin keys - POST /v1/admin/keys needs the admin key', async (t) => {
  const user = await app.key('business');
  const cases: [string, Record<string, string>][] = [
    ['no key', {}],
    ['an API key', { 'X-API-Key': user }],
    ['an API key as Bearer', { authorization: `Bearer ${user}` }],
    ['a wrong admin key', { authorization: 'Bearer not-the-admin-key' }],
  ];
  for (const [name, headers] of cases) {
    const res = await app.post('/v1/admin/keys', { tier: 'pro' }, headers);
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(((await res.json()) as ErrBody).error_code, 'ADMIN_KEY_REQUIRED', `${name}: ADMIN_KEY_REQUIRED`);
  }
  const viaHeader = await app.post('/v1/admin/keys', { tier: 'pro' }, { 'X-API-Key': ADMIN_KEY });
  t.equal(viaHeader.status, 201, 'the admin key works in X-API-Key too');
  await viaHeader.arrayBuffer();
  for (const q of ['apiKey', 'api_key']) {
    const inUrl = await app.post(`/v1/admin/keys?${q}=${ADMIN_KEY}`, { tier: 'pro' }, {});
    t.equal(inUrl.status, 401, `the admin key in the URL (${q}): 401 (regression: 201, the master key in access logs)`);
    const err = (await inUrl.json()) as ErrBody;
    t.same([err.error_code, /never in the URL/.test(err.message)], ['ADMIN_KEY_REQUIRED', true], 'ADMIN_KEY_REQUIRED, saying where to send it');
  }
});

t.test('admin keys - 201 with key, tier and credits; bad bodies are 422 or 400', async (t) => {
  const res = await app.post('/v1/admin/keys', { tier: 'pro' }, admin);
  t.equal(res.status, 201, '201');
  const body = (await res.json()) as { key: string; tier: string; credits: number };
  t.match(body.key, /^lw_[0-9a-f]{32}$/, 'a generated key');
  t.equal(body.tier, 'pro', 'tier echoed');
  t.equal(body.credits, 100_000, 'credits default to the tier allowance');
  const use = await app.get('/v1/bookmakers', { 'X-API-Key': body.key });
  t.equal(use.status, 200, 'the new key works at once');
  t.equal(use.headers.get('x-ratelimit-remaining'), '100000', 'with its balance');
  await use.arrayBuffer();

  const custom = (await (await app.post('/v1/admin/keys', { tier: 'free', credits: 5, email: 'ops@example.com' }, admin)).json()) as { tier: string; credits: number };
  t.same([custom.tier, custom.credits], ['free', 5], 'explicit credits');
  const zero = await app.post('/v1/admin/keys', { tier: 'starter', credits: 0, email: null }, admin);
  t.equal(zero.status, 201, 'zero credits and a null email are accepted');
  await zero.arrayBuffer();

  const bad: [string, unknown, string][] = [
    ['unknown tier', { tier: 'gold' }, 'tier'],
    ['missing tier', { credits: 5 }, 'tier'],
    ['negative credits', { tier: 'pro', credits: -1 }, 'credits'],
    ['fractional credits', { tier: 'pro', credits: 1.5 }, 'credits'],
    ['credits as a string', { tier: 'pro', credits: '5' }, 'credits'],
    ['bad email', { tier: 'pro', email: 'not-an-email' }, 'email'],
    ['email not a string', { tier: 'pro', email: 42 }, 'email'],
  ];
  for (const [name, payload, field] of bad) {
    const r = await app.post('/v1/admin/keys', payload, admin);
    t.equal(r.status, 422, `${name}: 422`);
    const e = (await r.json()) as ErrBody;
    t.equal(e.error_code, 'VALIDATION_ERROR', `${name}: VALIDATION_ERROR`);
    t.same(e.detail?.map((d) => d.loc), [['body', field]], `${name}: loc names body.${field}`);
  }
  const malformed: [string, string][] = [
    ['malformed JSON', '{"tier": "pro"'],
    ['a JSON array', '[{"tier": "pro"}]'],
    ['a JSON string', '"pro"'],
    ['JSON null', 'null'],
    ['an empty body', ''],
  ];
  for (const [name, raw] of malformed) {
    const r = await app.post('/v1/admin/keys', raw, admin);
    t.equal(r.status, 400, `${name}: 400`);
    t.equal(((await r.json()) as ErrBody).error_code, 'MALFORMED_BODY', `${name}: MALFORMED_BODY`);
  }
});

t.test('credits - a refused call leaves the balance untouched, X-RateLimit-Remaining reaches 0', async (t) => {
  const k = await app.key('starter', 5);
  const h = { 'X-API-Key': k };
  const step = async (q: string, status: number, last: string, remaining: string, why: string) => {
    const res = await odds(app, q, h);
    t.equal(res.status, status, `${why}: ${status}`);
    t.equal(res.headers.get('x-requests-last'), last, `${why}: x-requests-last ${last}`);
    t.equal(res.headers.get('x-ratelimit-remaining'), remaining, `${why}: X-RateLimit-Remaining ${remaining}`);
    return res.json() as Promise<unknown>;
  };
  await step('markets=h2h', 200, '1', '4', '1 credit of 5');
  await step('markets=h2h,spreads,totals', 200, '3', '1', '3 credits of 4');
  // the period's last credit serves a call that costs more: the balance reaches 0 before any refusal (SPEC; a call
  // costing more than was left was refused with the balance shown above 0)
  await step('markets=h2h,spreads,totals', 200, '1', '0', '3 credits of 1: served for the 1 left');
  const refused = (await step('markets=h2h,spreads,totals', 401, '0', '0', '3 credits of 0')) as ErrBody;
  t.equal(refused.error_code, 'OUT_OF_USAGE_CREDITS', 'OUT_OF_USAGE_CREDITS');
  t.match(refused.message, /3 credits/, 'the message states the cost');
  const empty = (await step('markets=h2h', 401, '0', '0', '1 credit of 0')) as ErrBody;
  t.equal(empty.error_code, 'OUT_OF_USAGE_CREDITS', 'still OUT_OF_USAGE_CREDITS at 0');
  t.match(empty.message, /costs 1 credit and/, 'one credit in the singular');
  const free = await app.get('/v1/bookmakers', h);
  t.equal(free.status, 200, 'a free endpoint still answers at 0 credits');
  await free.arrayBuffer();
  const bad = await odds(app, 'regions=zz', h);
  t.equal(bad.status, 422, 'validation comes before the credit check: a bad request is 422, not 401');
  await bad.arrayBuffer();
  t.same(await balanceRow(app, k), { remaining: 0, used: 5 }, 'the database agrees once flushed');
});

t.test('credits - 50 concurrent 1-credit calls on 20 credits charge exactly 20', async (t) => {
  const k = await app.key('starter', 20);
  const responses = await Promise.all(Array.from({ length: 50 }, () => odds(app, '', { 'X-API-Key': k })));
  const statuses = responses.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 200).length, 20, '20 served');
  t.equal(statuses.filter((s) => s === 401).length, 30, '30 refused');
  const codes = await Promise.all(responses.filter((r) => r.status === 401).map(async (r) => ((await r.json()) as ErrBody).error_code));
  t.same([...new Set(codes)], ['OUT_OF_USAGE_CREDITS'], 'refused for credits');
  await Promise.all(responses.filter((r) => r.status === 200).map((r) => r.arrayBuffer()));
  const remaining = responses.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
  t.ok(remaining.every((n) => n >= 0), 'no response shows a negative balance');
  t.same(responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i), 'each served call saw its own balance, 19 down to 0');
  t.same(await balanceRow(app, k), { remaining: 0, used: 20 }, 'the database holds 0 remaining and 20 used');
  const after = await odds(app, '', { 'X-API-Key': k });
  t.equal(after.status, 401, 'nothing left');
  await after.arrayBuffer();
});

t.test('rate cap - a free key gets 429 EXCEEDED_FREQ_LIMIT above 60 requests in one second', async (t) => {
  t.teardown(() => clock.release());
  const free = await app.key('free', 1000);
  const paid = await app.key('starter', 1000);
  const second = clock.freeze(Math.floor(Date.now() / 1000) * 1000 + 250);
  const burst = await Promise.all(Array.from({ length: 80 }, () => odds(app, '', { 'X-API-Key': free })));
  const limited = burst.filter((r) => r.status === 429);
  t.equal(burst.filter((r) => r.status === 200).length, 60, '60 served within the second');
  t.equal(limited.length, 20, '20 refused');
  t.ok(limited.every((r) => r.headers.get('retry-after') === '1'), 'Retry-After: 1 on each 429');
  const bodies = await Promise.all(limited.map((r) => r.json() as Promise<ErrBody>));
  t.ok(bodies.every((b) => b.error_code === 'EXCEEDED_FREQ_LIMIT'), 'EXCEEDED_FREQ_LIMIT');
  t.ok(limited.every((r) => r.headers.get('x-requests-last') === '0'), 'a 429 costs nothing');
  await Promise.all(burst.filter((r) => r.status === 200).map((r) => r.arrayBuffer()));
  t.same(await balanceRow(app, free), { remaining: 940, used: 60 }, 'only the served calls were charged');

  const paidBurst = await Promise.all(Array.from({ length: 80 }, () => odds(app, '', { 'X-API-Key': paid })));
  t.ok(paidBurst.every((r) => r.status === 200), 'a paid tier has no per-second cap');
  await Promise.all(paidBurst.map((r) => r.arrayBuffer()));

  clock.freeze(second + 1000);
  const next = await odds(app, '', { 'X-API-Key': free });
  t.equal(next.status, 200, 'the next second serves the free key again');
  await next.arrayBuffer();

  // regression: the cap counted clock seconds, so 60 at x.90 and 60 at (x+1).02 all passed: now any second holds 60
  const edge = await app.key('free', 1000);
  clock.freeze(second + 5_900);
  const late = await Promise.all(Array.from({ length: 60 }, () => odds(app, '', { 'X-API-Key': edge })));
  t.ok(late.every((r) => r.status === 200), '60 at x.90: served');
  clock.freeze(second + 6_020);
  const early = await Promise.all(Array.from({ length: 10 }, () => odds(app, '', { 'X-API-Key': edge })));
  t.ok(early.every((r) => r.status === 429), '10 more at (x+1).02, 120 ms later: 429');
  clock.freeze(second + 6_900);
  const again = await odds(app, '', { 'X-API-Key': edge });
  t.equal(again.status, 200, 'a full second after the first of the 60: served');
  await Promise.all([...late, ...early, again].map((r) => r.arrayBuffer()));
});

for (const database of appDatabases()) {
  t.test(`keys and credits survive a restart, keys stored as hashes - ${database}`, async (t) => {
    const dataDir = database === 'embedded' ? await freshDataDir() : undefined;
    const schema = database === 'postgres' ? testSchemaName() : undefined;
    const opts = (last: boolean): TestAppOptions => (database === 'embedded'
      ? { database, dataDir, shards: 1 }
      : { database, schema, dropSchemaOnClose: last, shards: 1 });
    const apps: TestApp[] = [];
    t.teardown(async () => {
      for (const a of apps) await a.close();
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    });

    const first = await startTestApp(t, opts(false));
    apps.push(first);
    const issued = await first.post('/v1/admin/keys', { tier: 'starter', credits: 50, email: 'persist@example.com' }, admin);
    t.equal(issued.status, 201, 'key issued');
    const { key } = (await issued.json()) as { key: string };
    const spend: [string, number][] = [['markets=h2h,spreads,totals', 3], ['markets=h2h,spreads', 2], ['', 1], ['regions=uk', 1]];
    for (const [q, cost] of spend) {
      const res = await odds(first, q, { 'X-API-Key': key });
      t.equal(res.headers.get('x-requests-last'), String(cost), `spent ${cost}`);
      await res.arrayBuffer();
    }
    const rows = await first.app.services.db.sql`select * from api_keys`;
    t.ok(rows.length >= 2, 'the demo key and ours');
    const dump = JSON.stringify(rows);
    t.notOk(dump.includes(key), 'the plaintext key appears in no column');
    t.notOk(dump.includes(ADMIN_KEY), 'nor does the admin key');
    const mine = rows.find((r) => r.key_hash === hashKey(key));
    t.ok(mine, 'the row is found by sha256(key)');
    t.equal(mine?.prefix, key.slice(0, 8), 'only an 8-character prefix is kept');
    const [account] = await first.app.services.db.sql`select * from accounts where id = ${mine?.account_id ?? 0}`;
    t.equal(account?.email, 'persist@example.com', 'email stored on the key\'s account');
    const settings = JSON.stringify(await first.app.services.db.sql`select * from settings`);
    t.notOk(settings.includes(ADMIN_KEY), 'settings hold the admin key hash, not the key');
    t.ok(settings.includes(hashKey(ADMIN_KEY)), 'the admin key hash is stored');
    const count = rows.length;
    await first.close();

    const second = await startTestApp(t, opts(true));
    apps.push(second);
    const check = await second.get('/v1/bookmakers', { 'X-API-Key': key });
    t.equal(check.status, 200, 'the key still validates after the restart');
    t.equal(check.headers.get('x-ratelimit-remaining'), '43', '50 - 7 credits remain');
    t.equal(check.headers.get('x-requests-used'), '7', '7 used');
    await check.arrayBuffer();
    const more = await odds(second, 'markets=h2h,spreads', { 'X-API-Key': key });
    t.equal(more.headers.get('x-ratelimit-remaining'), '41', 'charging continues from the restored balance');
    await more.arrayBuffer();
    t.same(await balanceRow(second, key), { remaining: 41, used: 9 }, 'and is persisted');
    t.equal((await second.app.services.db.sql`select count(*)::int as n from api_keys`)[0].n, count, 'no key issued again at the second start');
    const again = await second.post('/v1/admin/keys', { tier: 'pro' }, admin);
    t.equal(again.status, 201, 'the admin key works after the restart');
    await again.arrayBuffer();
  });
}
