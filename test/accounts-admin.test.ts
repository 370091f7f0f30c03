// Admin account operations (list, tier, payment ids, credits, revocation at once), an account's own keys, the
// api-key-check subscription block, and webhooks owned by the account so every key of it sees them.

import t from 'tap';
import { ADMIN_KEY, TestClock, startTestApp } from './helpers/app.js';
import { connect } from './helpers/ws-client.js';

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const clock = new TestClock();
clock.freeze(Date.UTC(2031, 2, 10, 8));
const app = await startTestApp(t, { now: clock.now, shards: 1, webhooks: { allowPrivate: false } });

interface Account { id: number; email: string | null; tier: string; credits_remaining: number; credits_used: number; period_start_iso: string; period_end_iso: string; keys: { id: number; prefix: string; revoked: boolean }[] }
interface Issued { key: string; account_id: number; key_id: number; prefix: string }

const send = (method: string, path: string, body: unknown, headers: Record<string, string>) => fetch(app.base + path, {
  method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
});
const issue = async (body: unknown): Promise<Issued> => (await (await app.post('/v1/admin/keys', body, admin)).json()) as Issued;

t.test('admin - accounts listed, tier changed, payment ids and credits set', async (t) => {
  const a = await issue({ tier: 'starter', credits: 50, email: 'billing@example.com' });
  const second = await issue({ account_id: a.account_id });
  t.equal(second.account_id, a.account_id, 'a key added to the account');
  t.equal((await app.post('/v1/admin/keys', { tier: 'pro', email: 'BILLING@example.com' }, admin)).status, 409, 'an e-mail is one account');
  t.equal((await app.post('/v1/admin/keys', { account_id: 999_999 }, admin)).status, 404, 'an unknown account: 404');
  t.equal((await app.post('/v1/admin/keys', { tier: 'pro', email: 'a\u0000b@example.com' }, admin)).status, 422, 'an e-mail with a NUL: 422 (PostgreSQL answered 500)');
  // regression: {account_id, tier: "free"} answered 201 and the key kept the account's tier without a word
  for (const extra of [{ tier: 'free' }, { credits: 5 }, { email: 'x@example.com' }]) {
    const res = await app.post('/v1/admin/keys', { account_id: a.account_id, ...extra }, admin);
    t.equal(res.status, 422, `account_id with ${Object.keys(extra)[0]}: 422 (it belongs to the account)`);
    await res.arrayBuffer();
  }

  const list = await app.get('/v1/admin/accounts?email=billing', admin);
  t.equal(list.status, 200, 'listed');
  const body = (await list.json()) as { total: number; accounts: Account[] };
  t.equal(body.total, 1, 'filtered by e-mail');
  const acc = body.accounts[0]!;
  t.same([acc.id, acc.tier, acc.credits_remaining, acc.keys.length], [a.account_id, 'starter', 50, 2], 'the account and its two keys');
  t.same(acc.keys.map((k) => k.prefix), [a.key.slice(0, 8), second.key.slice(0, 8)], 'prefixes only');
  t.notOk(JSON.stringify(body).includes(a.key), 'never a whole key');
  const user = await app.get('/v1/admin/accounts', { 'X-API-Key': a.key });
  t.equal(user.status, 401, 'an API key is not the admin key');
  t.equal((await app.get('/v1/admin/accounts?limit=0', admin)).status, 422, 'limit is bounded');

  await (await app.get('/v1/sports/basketball_nba/arbitrage', { 'X-API-Key': a.key })).arrayBuffer();
  clock.freeze(Date.UTC(2031, 2, 12, 9));
  const up = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'pro' }, admin);
  t.equal(up.status, 200, 'tier changed');
  const pro = (await up.json()) as Account;
  t.same([pro.tier, pro.credits_remaining, pro.credits_used, pro.period_start_iso, pro.period_end_iso],
    ['pro', 100_000, 0, '2031-03-12T09:00:00Z', '2031-04-12T09:00:00Z'], 'a new period starts now with the new allowance');
  const seen = await app.get('/v1/bookmakers', { 'X-API-Key': second.key });
  t.equal(seen.headers.get('x-ratelimit-remaining'), '100000', 'every key of the account sees it at once');
  await seen.arrayBuffer();

  const paid = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { payment_customer_id: 'cus_ABCDEFGHIJKL', payment_subscription_id: 'sub_1234567890' }, admin);
  t.equal(paid.status, 200, 'payment ids set');
  await paid.arrayBuffer();
  const check = await app.get('/v1/meta/api-key-check', { 'X-API-Key': a.key });
  t.equal(check.headers.get('x-requests-last'), '0', 'api-key-check charges nothing');
  const c = (await check.json()) as { valid: boolean; tier: string; key_prefix: string; subscription: Record<string, unknown> };
  t.same([c.valid, c.tier, c.key_prefix], [true, 'pro', a.key.slice(0, 8)], 'valid, tier, prefix');
  t.same(c.subscription, {
    state: 'active', tier: 'pro', billing: 'payment_provider', period_start_iso: '2031-03-12T09:00:00Z', period_end_iso: '2031-04-12T09:00:00Z',
    payment_customer_id_prefix: 'cus_ABCD', payment_subscription_id_prefix: 'sub_1234', last_request_at_iso: '2031-03-12T09:00:00Z',
  }, 'the subscription block: state, period end, id prefixes, last request');
  const bad = await app.get('/v1/meta/api-key-check', { 'X-API-Key': 'lw_00000000000000000000000000000000' });
  t.equal(bad.status, 401, 'a key that does not validate: 401');
  await bad.arrayBuffer();

  const grant = await app.post(`/v1/admin/accounts/${a.account_id}/credits`, { credits: 500 }, admin);
  t.equal(((await grant.json()) as Account).credits_remaining, 100_500, 'credits granted to the period');
  for (const [name, path, b, status] of [
    ['zero credits', `/v1/admin/accounts/${a.account_id}/credits`, { credits: 0 }, 422],
    ['unknown account', '/v1/admin/accounts/999999/credits', { credits: 5 }, 404],
    ['non-numeric account', '/v1/admin/accounts/abc/credits', { credits: 5 }, 404],
  ] as const) {
    const r = await app.post(path, b, admin);
    t.equal(r.status, status, `${name}: ${status}`);
    await r.arrayBuffer();
  }
  const badTier = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'gold' }, admin);
  t.equal(badTier.status, 422, 'an unknown tier: 422');
  await badTier.arrayBuffer();

  // the tier it has already, sent with a payment id (a billing sync sending the whole record): no new period
  // (regression: its allowance was refilled and its usage wiped)
  const before = (await (await app.get(`/v1/admin/accounts/${a.account_id}`, admin)).json()) as Account;
  clock.freeze(Date.UTC(2031, 2, 13, 9));
  const same = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'pro', payment_customer_id: 'cus_ZYXWVUTSRQPO' }, admin);
  const kept = (await same.json()) as Account;
  t.same([kept.tier, kept.credits_remaining, kept.credits_used, kept.period_start_iso], [before.tier, before.credits_remaining, before.credits_used, before.period_start_iso],
    'the same tier again: balance, usage and period unchanged');
  // a misspelt field is a 422, not ignored with its default taken (regression: {"credit": 5} gave the whole allowance)
  for (const [method, path, b] of [
    ['POST', '/v1/admin/keys', { tier: 'pro', credit: 5 }],
    ['PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'pro', payment_customer: 'cus_1' }],
    ['POST', `/v1/admin/accounts/${a.account_id}/credits`, { credits: 5, note: 'goodwill' }],
  ] as const) {
    const res = await send(method, path, b, admin);
    t.equal(res.status, 422, `${method} ${path} with ${Object.keys(b).at(-1)}: 422`);
    const err = (await res.json()) as { detail: { loc: unknown[] }[] };
    t.same(err.detail[0].loc, ['body', Object.keys(b).at(-1)], 'naming the field');
  }
  const after = (await (await app.get(`/v1/admin/accounts/${a.account_id}`, admin)).json()) as Account;
  t.equal(after.credits_remaining, kept.credits_remaining, 'and none of them took effect');
});

t.test('tier - an account moved between streaming tiers has its open stream moved to the new tier\'s window', async (t) => {
  // regression (the WebSocket audit): an enterprise key moved to business kept streaming every 500 ms
  const a = await issue({ tier: 'enterprise' });
  const ws = await connect(app, `/ws/odds/icehockey_nhl?apiKey=${a.key}`);
  const first = await ws.until((f) => f.type === 'snapshot');
  t.match(first.epoch, /-500$/, 'enterprise: the 500 ms channel');
  const down = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'business' }, admin);
  t.equal(down.status, 200, 'moved to business');
  await down.arrayBuffer();
  const moved = await ws.until((f) => f.type === 'snapshot' && f.reason === 'tier_changed', 5000);
  t.match(moved.epoch, /-1000$/, 'a snapshot of the business channel (1 s), reason tier_changed');
  const fast = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${a.key}`);
  const before = (await fast.until((f) => f.type === 'snapshot')).epoch;
  const up = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'scale' }, admin);
  await up.arrayBuffer();
  const again = await ws.until((f) => f.type === 'snapshot' && f.reason === 'tier_changed' && f.epoch !== moved.epoch, 5000);
  t.match(again.epoch, /-0$/, 'moved up to scale: the channel with no window');
  await new Promise((r) => setTimeout(r, 1500));
  t.notOk(fast.frames.some((f) => f.type === 'snapshot' && f.reason === 'tier_changed'), `odds-fast (one channel for every tier, ${before}) is left as it is`);
  ws.ws.close();
  fast.ws.close();
});

t.test('tier - an account moved below business has its open streams closed with 4003', async (t) => {
  const a = await issue({ tier: 'business' });
  const ws = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${a.key}`);
  await ws.until((f) => f.type === 'snapshot');
  const down = await send('PATCH', `/v1/admin/accounts/${a.account_id}`, { tier: 'pro' }, admin);
  t.equal(down.status, 200, 'moved to pro');
  await down.arrayBuffer();
  const closed = await ws.closedWith(5000);
  t.same([closed.code, closed.reason], [4003, 'WebSocket streams need the business tier or above (this key is now pro)'], 'closed with 4003');
  const metrics = await (await app.get('/metrics')).text();
  t.match(metrics, /^linewire_ws_server_closes_total\{cause="tier"\} 1$/m, 'counted in /metrics');
});

t.test('revocation - takes effect at once, for admin and for the account itself', async (t) => {
  const a = await issue({ tier: 'business' });
  const b = await issue({ account_id: a.account_id });
  t.equal((await app.get('/v1/bookmakers', { 'X-API-Key': a.key })).status, 200, 'works before (and is cached)');
  const ws = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${a.key}`);
  await ws.until((f) => f.type === 'snapshot');
  const del = await send('DELETE', `/v1/admin/keys/${a.key_id}`, undefined, admin);
  t.equal(del.status, 200, 'revoked');
  await del.arrayBuffer();
  const after = await app.get('/v1/bookmakers', { 'X-API-Key': a.key });
  t.equal(after.status, 401, 'the next request is refused');
  t.equal(((await after.json()) as { error_code: string }).error_code, 'INVALID_KEY', 'INVALID_KEY');
  t.equal((await app.get('/v1/bookmakers', { 'X-API-Key': b.key })).status, 200, 'the account\'s other key still works');
  const closed = await ws.closedWith(5000);
  t.same([closed.code, closed.reason], [4001, 'API key revoked'], 'its open WebSocket is closed with 4001');
  const metrics = await (await app.get('/metrics')).text();
  t.match(metrics, /^linewire_ws_server_closes_total\{cause="revoked"\} 1$/m, 'counted in /metrics as a close for a revoked key');
  t.equal((await send('DELETE', '/v1/admin/keys/999999', undefined, admin)).status, 404, 'an unknown key: 404');

  // an account's own keys
  const own = await app.get('/v1/keys', { 'X-API-Key': b.key });
  const keys = (await own.json()) as { id: number; prefix: string; revoked: boolean; current?: boolean }[];
  t.same(keys.map((k) => [k.id, k.revoked, k.current === true]), [[a.key_id, true, false], [b.key_id, false, true]], 'listed with prefixes, revoked marked');
  t.notOk(JSON.stringify(keys).includes(b.key), 'never a whole key');
  const made = await app.post('/v1/keys', {}, { 'X-API-Key': b.key });
  t.equal(made.status, 201, 'a new key');
  const fresh = (await made.json()) as { api_key: string; id: number };
  t.equal((await app.get('/v1/bookmakers', { 'X-API-Key': fresh.api_key })).status, 200, 'it works');
  const other = await issue({ tier: 'business' });
  t.equal((await send('DELETE', `/v1/keys/${other.key_id}`, undefined, { 'X-API-Key': b.key })).status, 404, 'another account\'s key: 404');
  t.equal((await app.get('/v1/bookmakers', { 'X-API-Key': other.key })).status, 200, 'and it still works');
  t.equal((await send('DELETE', `/v1/keys/${fresh.id}`, undefined, { 'X-API-Key': b.key })).status, 200, 'revoke one\'s own');
  t.equal((await app.get('/v1/bookmakers', { 'X-API-Key': fresh.api_key })).status, 401, 'at once');
});

t.test('keys - requests made at once cannot pass the 20 active keys of an account (regression: 27 were made)', async (t) => {
  const a = await issue({ tier: 'pro' });
  const made = await Promise.all(Array.from({ length: 30 }, async () => {
    const res = await app.post('/v1/keys', {}, { 'X-API-Key': a.key });
    await res.arrayBuffer();
    return res.status;
  }));
  t.same([made.filter((s) => s === 201).length, made.filter((s) => s === 409).length], [19, 11], '19 made beside the first, 11 refused with KEY_LIMIT');
  const keys = (await (await app.get('/v1/keys', { 'X-API-Key': a.key })).json()) as { revoked: boolean }[];
  t.equal(keys.filter((k) => !k.revoked).length, 20, 'the account holds 20 active keys');
});

t.test('webhooks - owned by the account: every key of it sees and manages them', async (t) => {
  const a = await issue({ tier: 'pro' });
  const b = await issue({ account_id: a.account_id });
  const stranger = await issue({ tier: 'pro' });
  const made = await app.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['arb_flagged'] }, { 'X-API-Key': a.key });
  t.equal(made.status, 201, 'created with key A');
  const w = (await made.json()) as { id: number };
  const listB = (await (await app.get('/v1/webhooks', { 'X-API-Key': b.key })).json()) as { id: number }[];
  t.same(listB.map((x) => x.id), [w.id], 'key B of the same account lists it');
  t.equal((await app.get(`/v1/webhooks/${w.id}`, { 'X-API-Key': b.key })).status, 200, 'and reads it');
  t.equal((await app.get(`/v1/webhooks/${w.id}`, { 'X-API-Key': stranger.key })).status, 404, 'another account: 404');
  const [row] = await app.app.services.db.sql`select owner_id from webhooks where id = ${w.id}`;
  t.equal(Number(row!.owner_id), a.account_id, 'owner_id is the account id');
  await send('DELETE', `/v1/admin/keys/${a.key_id}`, undefined, admin);
  const still = (await (await app.get('/v1/webhooks', { 'X-API-Key': b.key })).json()) as { id: number }[];
  t.same(still.map((x) => x.id), [w.id], 'revoking the creating key leaves the account\'s subscription');
});
