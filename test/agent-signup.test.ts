// Agent sign-up, magic links, claim links and checkout links: a key shown once and never again, 5 sign-ups per
// address per hour (X-Forwarded-For only through TRUSTED_PROXIES), the magic link's one answer for every address,
// mails through SMTP_URL, and the upgrade URL from CHECKOUT_URL_TEMPLATE or a local page.

import t from 'tap';
import { ADMIN_KEY, TestClock, startTestApp, type TestApp } from './helpers/app.js';
import { startSmtp } from './helpers/webhook-receiver.js';

interface Signup { api_key: string; account_id: number; claim_url: string; upgrade_url: string; instructions: string; tier: string; credits: number }
interface ErrBody { error_code: string; message: string; detail?: { loc: unknown[] }[] }

const smtp = await startSmtp(t);
const clock = new TestClock();
// the middle of an hour: the sign-up window cannot roll over during the test
const mid = clock.freeze(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 1_800_000);
const app = await startTestApp(t, { now: clock.now, shards: 1, trustedProxies: '127.0.0.1, ::1', publicUrl: 'https://odds.example.test', webhooks: { smtpUrl: smtp.url } });

let ipCounter = 0;
/** a fresh client address (through the trusted loopback proxy) for each test */
const nextIp = () => `198.51.100.${++ipCounter}`;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function mailTo(to: string, match: RegExp, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = smtp.mails.find((x) => x.to === to && match.test(x.data));
    if (m !== undefined) return m.data;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${match}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('signup - a free account and its key, shown once; the same e-mail never gets a key again', async (t) => {
  const ip = nextIp();
  const res = await app.post('/v1/agent/signup', { email: 'agent.one@example.com', intended_use: 'odds research', agent_id: 'agent-7' }, from(ip));
  t.equal(res.status, 201, '201');
  const s = (await res.json()) as Signup;
  t.match(s.api_key, /^lw_[0-9a-f]{32}$/, 'a key');
  t.same([s.tier, s.credits], ['free', 1000], 'free tier, 1,000 credits');
  t.match(s.claim_url, /^https:\/\/odds\.example\.test\/v1\/agent\/claim\?token=[A-Za-z0-9_-]{32}$/, 'a claim link on PUBLIC_URL');
  t.equal(s.upgrade_url, 'https://odds.example.test/v1/agent/billing?tier=starter', 'billing not configured: the local page');
  t.match(s.instructions, /X-API-Key/, 'instructions say how to send the key');
  const check = await app.get('/v1/meta/api-key-check', { 'X-API-Key': s.api_key });
  t.equal(check.status, 200, 'the key works at once');
  const body = (await check.json()) as { subscription: { state: string }; account_id: number };
  t.same([body.account_id, body.subscription.state], [s.account_id, 'free'], 'its account, free');
  // the caller's agent_id reaches any mailbox: quoted as the program's own, unverified name (regression: a sentence
  // of ours, "by agent <text>", which carried a phishing line)
  const mail = await mailTo('agent.one@example.com', /claim\?token=/);
  t.match(mail, /by a program that gave its name as "agent-7" \(not verified\)/, 'the agent id quoted and marked unverified');

  const again = await app.post('/v1/agent/signup', { email: 'Agent.One@Example.com' }, from(ip));
  t.equal(again.status, 409, 'the same address in another case: 409');
  const raw = await again.text();
  const e = JSON.parse(raw) as ErrBody;
  t.equal(e.error_code, 'ACCOUNT_EXISTS', 'ACCOUNT_EXISTS');
  t.match(e.message, /magic-link/, 'points to the magic link');
  t.notOk(raw.includes(s.api_key) || raw.includes(s.api_key.slice(3)) || /lw_[0-9a-f]{8}/.test(raw), 'no key, nor part of one, in the answer');
  const [n] = await app.app.services.db.sql`select count(*)::int as n from accounts where lower(email) = 'agent.one@example.com'`;
  t.equal(n!.n, 1, 'one account');

  const dump = JSON.stringify(await app.app.services.db.sql`
    select row_to_json(x)::text from (select * from accounts a join api_keys k on k.account_id = a.id) x`)
    + JSON.stringify(await app.app.services.db.sql`select * from login_tokens`);
  const claimToken = new URL(s.claim_url).searchParams.get('token')!;
  t.notOk(dump.includes(s.api_key), 'the plaintext key is stored nowhere');
  t.notOk(dump.includes(claimToken), 'nor the claim token');
  await mailTo('agent.one@example.com', /claim\?token=/);
  t.pass('the owner of the address is mailed the claim link');

  // the claim link: a page (opening it uses nothing), then the button's form post
  const page = await app.get(`/v1/agent/claim?token=${claimToken}`);
  t.equal(page.status, 200, 'claim page');
  t.match(page.headers.get('content-type') ?? '', /text\/html/, 'HTML');
  t.match(await page.text(), /method="post" action="\/v1\/agent\/claim"/, 'a form that posts the token');
  const claimed = await app.post('/v1/agent/claim', `token=${claimToken}`, { 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(claimed.status, 200, 'claimed');
  t.same(((await claimed.json()) as { claimed: boolean; account_id: number }).account_id, s.account_id, 'that account');
  const twice = await app.post('/v1/agent/claim', { token: claimToken });
  t.equal(twice.status, 400, 'a link works once');
  t.equal(((await twice.json()) as ErrBody).error_code, 'INVALID_LOGIN_TOKEN', 'INVALID_LOGIN_TOKEN');
});

t.test('signup - validation: e-mail, field bounds, body size', async (t) => {
  const cases: [string, unknown, string][] = [
    ['no e-mail', {}, 'email'],
    ['not an e-mail', { email: 'nobody' }, 'email'],
    ['e-mail with spaces', { email: 'a b@example.com' }, 'email'],
    // a NUL reached PostgreSQL and answered 500
    ['e-mail with a NUL', { email: 'nul\u0000user@example.com' }, 'email'],
    ['intended_use too long', { email: 'ok1@example.com', intended_use: 'x'.repeat(501) }, 'intended_use'],
    ['agent_id with a space', { email: 'ok2@example.com', agent_id: 'my agent' }, 'agent_id'],
    // regression: ignored, as the OpenAPI document declares the body closed
    ['a misspelt field', { email: 'ok3@example.com', intended_usage: 'odds research' }, 'intended_usage'],
  ];
  for (const [name, body, field] of cases) {
    // each from its own address: the hourly sign-up limit counts every attempt
    const res = await app.post('/v1/agent/signup', body, from(nextIp()));
    t.equal(res.status, 422, `${name}: 422`);
    t.same(((await res.json()) as ErrBody).detail?.[0]?.loc, ['body', field], `${name}: names body.${field}`);
  }
  const big = await app.post('/v1/agent/signup', { email: 'big@example.com', intended_use: 'x'.repeat(5000) }, from(nextIp()));
  t.equal(big.status, 413, 'a body above 4 KiB: 413');
  t.equal(((await big.json()) as ErrBody).error_code, 'BODY_TOO_LARGE', 'BODY_TOO_LARGE');
  const bad = await app.post('/v1/agent/signup', '{"email":', from(nextIp()));
  t.equal(bad.status, 400, 'malformed JSON: 400');
});

t.test('signup - 5 per address per hour, 429 with Retry-After; X-Forwarded-For only from a trusted proxy', async (t) => {
  const ip = nextIp();
  for (let i = 0; i < 5; i++) {
    const res = await app.post('/v1/agent/signup', { email: `limit${i}@example.com` }, from(ip));
    t.equal(res.status, 201, `sign-up ${i + 1}: 201`);
    await res.arrayBuffer();
  }
  const sixth = await app.post('/v1/agent/signup', { email: 'limit5@example.com' }, from(ip));
  t.equal(sixth.status, 429, 'the 6th in the hour: 429');
  t.equal(((await sixth.json()) as ErrBody).error_code, 'EXCEEDED_FREQ_LIMIT', 'EXCEEDED_FREQ_LIMIT');
  t.equal(sixth.headers.get('retry-after'), '1800', 'Retry-After: the rest of the hour');
  const forged = await app.post('/v1/agent/signup', { email: 'limit5@example.com' }, { 'x-forwarded-for': `203.0.113.77, ${ip}` });
  t.equal(forged.status, 429, 'a forged address left of the proxy\'s entry changes nothing');
  await forged.arrayBuffer();
  const other = await app.post('/v1/agent/signup', { email: 'limit5@example.com' }, from(nextIp()));
  t.equal(other.status, 201, 'another client address is counted apart');
  await other.arrayBuffer();
  clock.freeze(mid + 1_800_000);
  t.teardown(() => { clock.freeze(mid); });
  const next = await app.post('/v1/agent/signup', { email: 'limit6@example.com' }, from(ip));
  t.equal(next.status, 201, 'the next hour starts afresh');
  await next.arrayBuffer();

  // without TRUSTED_PROXIES the header is the client's own word and is ignored
  const plain = await startTestApp(t, { now: clock.now, shards: 1 });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await plain.post('/v1/agent/signup', { email: `plain${i}@example.com` }, from(`192.0.2.${i + 1}`));
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  t.same(statuses, [201, 201, 201, 201, 201, 429], 'every request counts against the socket\'s address');
  // this app has no SMTP_URL: the magic link's answer does not claim a mail went out
  const link = (await (await plain.post('/v1/agent/magic-link', { email: 'plain0@example.com' })).json()) as { message: string };
  t.match(link.message, /sends no mail \(SMTP_URL is not set\), so no login link was sent/, 'without SMTP_URL: says no mail was sent');
});

async function timeIt(a: TestApp, email: string): Promise<{ ms: number; status: number; body: string }> {
  const t0 = performance.now();
  const res = await a.post('/v1/agent/magic-link', { email }, from('192.0.2.200'));
  const body = await res.text();
  return { ms: performance.now() - t0, status: res.status, body };
}

t.test('magic link - one answer for every address, a mail only to an account, a new key once', async (t) => {
  const s = (await (await app.post('/v1/agent/signup', { email: 'owner@example.com' }, from(nextIp()))).json()) as Signup;
  const known = await timeIt(app, 'owner@example.com');
  const unknown = await timeIt(app, 'stranger@example.com');
  t.same([known.status, unknown.status], [200, 200], 'both 200');
  t.equal(known.body, unknown.body, 'byte-identical bodies');
  t.match(JSON.parse(known.body).message, /has been sent to it/, 'with SMTP_URL: sent');
  // alternate to share the machine's noise; compare medians
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 4; i++) {
    a.push((await timeIt(app, 'owner@example.com')).ms);
    b.push((await timeIt(app, `stranger${i}@example.com`)).ms);
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const ratio = median(a) / median(b);
  t.ok(ratio > 0.1 && ratio < 10, `same order of magnitude (known ${median(a).toFixed(1)} ms, unknown ${median(b).toFixed(1)} ms)`);

  const mail = await mailTo('owner@example.com', /login\?token=/);
  t.notOk(smtp.mails.some((m) => m.to.startsWith('stranger')), 'no mail to an address without an account');
  const token = /login\?token=([A-Za-z0-9_-]+)/.exec(mail)![1]!;
  const rows = await app.app.services.db.sql`select account_id, token_hash from login_tokens where purpose = 'login'`;
  t.ok(rows.some((r) => r.account_id === null && r.token_hash === null), 'a request for an unknown address is recorded without a token');
  t.notOk(JSON.stringify(rows).includes(token), 'only the token\'s hash is stored');

  const page = await app.get(`/v1/agent/login?token=${token}`);
  t.equal(page.status, 200, 'the link opens a page');
  await page.arrayBuffer();
  const login = await app.post('/v1/agent/login', { token });
  t.equal(login.status, 201, 'the button issues a key');
  const fresh = (await login.json()) as { api_key: string; account_id: number };
  t.not(fresh.api_key, s.api_key, 'a new key, never the old one');
  t.equal(fresh.account_id, s.account_id, 'for the same account');
  const use = (await (await app.get('/v1/usage', { 'X-API-Key': fresh.api_key })).json()) as { account_id: number };
  t.equal(use.account_id, s.account_id, 'the new key draws on the account');
  t.equal((await app.get('/v1/usage', { 'X-API-Key': s.api_key })).status, 200, 'the old key keeps working');
  t.equal((await app.post('/v1/agent/login', { token })).status, 400, 'a login link works once');
  t.equal((await app.post('/v1/agent/login', { token: 'x'.repeat(32) })).status, 400, 'an unknown token: 400');
  t.equal((await app.post('/v1/agent/magic-link', { email: 'not-an-address' })).status, 422, 'a bad address is 422 (says nothing about accounts)');

  // a link expires after 15 minutes
  await (await app.post('/v1/agent/magic-link', { email: 'owner@example.com' })).arrayBuffer();
  const second = await mailTo('owner@example.com', new RegExp(`login\\?token=(?!${token})`));
  const token2 = /login\?token=([A-Za-z0-9_-]+)/.exec(second)![1]!;
  clock.freeze(mid + 16 * 60_000);
  t.teardown(() => { clock.freeze(mid); });
  t.equal((await app.post('/v1/agent/login', { token: token2 })).status, 400, 'an expired link: 400');
});

t.test('magic link - 30 per client address an hour; expired tokens are deleted (each request for a new address added a row for good)', async (t) => {
  const ip = nextIp();
  for (let i = 0; i < 30; i++) {
    const res = await app.post('/v1/agent/magic-link', { email: `flood${i}@example.com` }, from(ip));
    t.equal(res.status, 200, `request ${i + 1}: 200`);
    await res.arrayBuffer();
  }
  const over = await app.post('/v1/agent/magic-link', { email: 'flood30@example.com' }, from(ip));
  t.equal(over.status, 429, 'the 31st from one client: 429');
  t.ok(Number(over.headers.get('retry-after')) > 0, 'with Retry-After');
  t.equal(((await over.json()) as ErrBody).error_code, 'EXCEEDED_FREQ_LIMIT', 'EXCEEDED_FREQ_LIMIT');
  const another = await app.post('/v1/agent/magic-link', { email: 'flood30@example.com' }, from(nextIp()));
  t.equal(another.status, 200, 'another client: 200');
  await another.arrayBuffer();
  const count = async () => Number((await app.app.services.db.sql`select count(*)::int as n from login_tokens where email_hash is not null and purpose = 'login' and account_id is null`)[0]!.n);
  t.ok((await count()) >= 31, 'the bare requests are recorded');
  // two hours later the next request deletes what expired over an hour ago
  clock.freeze(mid + 2 * 3_600_000);
  t.teardown(() => { clock.freeze(mid); });
  await (await app.post('/v1/agent/magic-link', { email: 'later@example.com' }, from(nextIp()))).arrayBuffer();
  const deadline = Date.now() + 5000;
  while ((await count()) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.equal(await count(), 1, 'only the new request is left');
});

t.test('signup - a stranger who signed up with the address cannot revoke the owner\'s keys once the owner logged in', async (t) => {
  // regression (security audit): anyone can sign up with any address and gets the key; after the owner logged in by
  // the mailed link, the stranger's key listed and revoked the owner's
  const email = 'victim@example.com';
  const stranger = (await (await app.post('/v1/agent/signup', { email }, from(nextIp()))).json()) as Signup;
  const k1 = { 'X-API-Key': stranger.api_key };
  const spare = (await (await app.post('/v1/keys', {}, k1)).json()) as { api_key: string; id: number };
  t.ok(spare.api_key, 'before the owner shows up, a sign-up key manages keys (the agent flow)');
  await (await app.post('/v1/agent/magic-link', { email }, from(nextIp()))).arrayBuffer();
  const token = /login\?token=([A-Za-z0-9_-]+)/.exec(await mailTo(email, /login\?token=/))![1]!;
  const owner = (await (await app.post('/v1/agent/login', { token })).json()) as { api_key: string };
  const k2 = { 'X-API-Key': owner.api_key };
  const keys = (await (await app.get('/v1/keys', k2)).json()) as { id: number; current?: boolean; verified: boolean }[];
  const ownerId = keys.find((k) => k.current === true)!.id;
  t.same(keys.map((k) => k.verified), [false, false, true], 'GET /v1/keys says which keys are verified: the sign-up\'s, the one it made, the owner\'s');
  for (const [what, res] of [
    ['revoke the owner\'s key', await fetch(`${app.base}/v1/keys/${ownerId}`, { method: 'DELETE', headers: k1 })],
    ['make a key', await app.post('/v1/keys', {}, k1)],
    ['a key made by it before revoke one', await fetch(`${app.base}/v1/keys/${ownerId}`, { method: 'DELETE', headers: { 'X-API-Key': spare.api_key } })],
  ] as const) {
    t.equal(res.status, 403, `the sign-up key may not ${what}: 403`);
    t.equal(((await res.json()) as ErrBody).error_code, 'KEY_NOT_VERIFIED', 'KEY_NOT_VERIFIED');
  }
  t.equal((await app.get('/v1/usage', k1)).status, 200, 'it still reads data (the account\'s credits)');
  // nor change the owner's webhook subscriptions (the account made pro by the operator for them)
  const up = await fetch(`${app.base}/v1/admin/accounts/${stranger.account_id}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ tier: 'pro' }) });
  t.equal(up.status, 200, 'made pro');
  const hook = (await (await app.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['arb_flagged'] }, k2)).json()) as { id: number };
  t.ok(hook.id, 'the owner subscribes');
  for (const [what, res] of [
    ['pause it', await fetch(`${app.base}/v1/webhooks/${hook.id}`, { method: 'PATCH', headers: { ...k1, 'content-type': 'application/json' }, body: JSON.stringify({ is_active: false }) })],
    ['delete it', await fetch(`${app.base}/v1/webhooks/${hook.id}`, { method: 'DELETE', headers: k1 })],
  ] as const) {
    t.equal(res.status, 403, `the sign-up key may not ${what}: 403`);
    t.equal(((await res.json()) as ErrBody).error_code, 'KEY_NOT_VERIFIED', 'KEY_NOT_VERIFIED');
  }
  const ids = ((await (await app.get('/v1/keys', k1)).json()) as { id: number; current?: boolean }[]).filter((k) => k.current === true).map((k) => k.id);
  const gone = await fetch(`${app.base}/v1/keys/${ids[0]}`, { method: 'DELETE', headers: k2 });
  t.equal(gone.status, 200, 'the owner revokes the stranger\'s key');
  t.equal((await app.get('/v1/usage', k1)).status, 401, 'which then fails');
  t.equal((await app.get('/v1/usage', k2)).status, 200, 'the owner\'s key works');
});

t.test('checkout link - the local page when billing is not configured, the template when it is', async (t) => {
  const res = await app.post('/v1/agent/checkout-link', { email: 'owner@example.com', tier: 'pro' });
  t.equal(res.status, 200, '200');
  const body = (await res.json()) as { checkout_url: string; configured: boolean; tier: string };
  t.same([body.checkout_url, body.configured, body.tier], ['https://odds.example.test/v1/agent/billing?tier=pro', false, 'pro'], 'the local page');
  const page = await app.get('/v1/agent/billing?tier=pro');
  t.equal(page.status, 200, 'the page is served');
  t.match(await page.text(), /Billing is not configured/, 'and says so');
  for (const [name, b, field] of [['free is not sold', { email: 'a@example.com', tier: 'free' }, 'tier'], ['unknown tier', { email: 'a@example.com', tier: 'gold' }, 'tier'], ['bad e-mail', { email: 'x', tier: 'pro' }, 'email']] as const) {
    const r = await app.post('/v1/agent/checkout-link', b);
    t.equal(r.status, 422, `${name}: 422`);
    t.same(((await r.json()) as ErrBody).detail?.[0]?.loc, ['body', field], `${name}: body.${field}`);
  }
  const billed = await startTestApp(t, { shards: 1, checkoutUrlTemplate: 'https://pay.example.test/checkout?plan={tier}&prefill={email}' });
  const r = (await (await billed.post('/v1/agent/checkout-link', { email: 'a+b@example.com', tier: 'business' })).json()) as { checkout_url: string; configured: boolean };
  t.same([r.checkout_url, r.configured], ['https://pay.example.test/checkout?plan=business&prefill=a%2Bb%40example.com', true], 'the template, URL-encoded');
  const signup = (await (await billed.post('/v1/agent/signup', { email: 'up@example.com' })).json()) as Signup;
  t.equal(signup.upgrade_url, 'https://pay.example.test/checkout?plan=starter&prefill=up%40example.com', 'sign-up\'s upgrade_url uses it too');
});
