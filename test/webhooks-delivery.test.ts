// Webhook delivery (issue 6) against a real receiver on loopback: both signature schemes checked independently,
// the retry schedule, auto-disable after exactly 5 total failures and re-enable, credits per delivered event,
// out_of_credits, the synchronous test, replay, and rate-limit deferral. Each subtest filters its subscriptions
// to a sport of its own, so their new_event streams do not mix.

import t from 'tap';
import { appDatabases, startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver, startSmtp, verifyA, verifyB, type Received } from './helpers/webhook-receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let seq = 0;
/** n new events of a sport, each with one price: n new_event events */
function newEvents(sport: string, n: number) {
  const now = Date.now();
  const events = [];
  const prices = [];
  for (let i = 0; i < n; i++) {
    const id = `wd_${sport}_${++seq}`;
    events.push({ id, sport_key: sport, commence_time: now + 3_600_000, home_team: `Home ${seq}`, away_team: `Away ${seq}` });
    prices.push({ book: 'draftkings', event_id: id, market: 'h2h', outcome: `Home ${seq}`, price: 1.9 });
  }
  return { events, prices };
}

async function until(pred: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(25);
  }
}

for (const database of appDatabases()) {
  t.test(`webhook delivery (${database})`, async (t) => {
    const smtp = await startSmtp(t);
    const app = await startTestApp(t, {
      database,
      shards: 1,
      webhooks: { allowPrivate: true, retryDelaysMs: [150, 300], pollMs: 25, rateWindowMs: 1500, deferWindows: 1, smtpUrl: smtp.url, mailFrom: 'hooks@linewire.test' },
    });
    const rx = await startReceiver(t);
    const create = async (key: string, body: unknown) => {
      const res = await call(app, 'POST', '/v1/webhooks', key, body);
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      return j(res);
    };
    const deliveries = async (key: string, id: string | number, q = '') => j(await call(app, 'GET', `/v1/webhooks/${id}/deliveries?limit=500${q}`, key));

    t.test('Variant A: signed envelope and headers, verified by the receiver', async (t) => {
      const key = await app.key('business');
      const w = await create(key, { url: rx.url + '?a', events: ['new_event'], sport_filter: ['basketball_nba'] });
      const batch = newEvents('basketball_nba', 1);
      await app.ingest(batch);
      const [r] = await rx.waitFor((x) => x.path.endsWith('?a'));
      t.equal(r.headers['content-type'], 'application/json', 'Content-Type');
      t.match(r.headers['user-agent'], /linewire-webhooks\/1\.0/, 'User-Agent');
      t.equal(r.headers['x-service-event-type'], 'new_event', 'X-Service-Event-Type');
      t.equal(r.headers['x-service-webhook-id'], String(w.id), 'X-Service-Webhook-Id (integer)');
      t.equal(r.headers['x-service-delivery-attempt'], '1', 'X-Service-Delivery-Attempt');
      t.match(r.body.id, /^evt_/, 'evt_ id');
      t.equal(r.body.event_type, 'new_event', 'event_type');
      t.ok(Number.isInteger(r.body.timestamp_ms) && Math.abs(r.body.timestamp_ms - Date.now()) < 10_000, 'timestamp_ms');
      t.same(r.body.data, {
        sport_key: 'basketball_nba', match_id: batch.events[0].id, home_team: batch.events[0].home_team,
        away_team: batch.events[0].away_team, commence_time: new Date(Math.floor(batch.events[0].commence_time / 1000) * 1000).toISOString().replace('.000Z', 'Z'), // to the second, as REST serves it
      }, 'data');
      const sig = r.headers['x-service-signature'] as string;
      t.ok(verifyA(w.secret, sig, r.raw), 'signature verifies');
      const tampered = r.raw.slice(0, 10) + (r.raw[10] === 'a' ? 'b' : 'a') + r.raw.slice(11);
      t.notOk(verifyA(w.secret, sig, tampered), 'a body altered by one byte is rejected');
      const ts = Number(/t=(\d+)/.exec(sig)![1]);
      t.notOk(verifyA(w.secret, sig, r.raw, ts + 301), 'a timestamp 301 s old is rejected');
      t.ok(verifyA(w.secret, sig, r.raw, ts + 300), '300 s is still inside the window');
      t.notOk(verifyA('whsec_' + 'x'.repeat(43), sig, r.raw), 'another secret is rejected');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('Variant B: signed with signing_secret, timestamp and delivery id headers; test endpoint', async (t) => {
      const key = await app.key('pro');
      const w = await create(key, { destination_url: rx.url + '?b', events: ['parser.degraded'] });
      const res = await call(app, 'POST', `/v1/webhooks/${w.id}/test`, key);
      t.equal(res.status, 200, '200');
      const out = await j(res);
      t.equal(out.delivered, true, 'delivered');
      t.equal(out.status_code, 200, 'upstream status');
      const [r] = await rx.waitFor((x) => x.path.endsWith('?b'));
      t.equal(r.headers['x-service-event'], 'test', 'X-Service-Event');
      t.equal(r.headers['x-service-delivery-id'], out.delivery_id, 'X-Service-Delivery-Id');
      t.match(r.headers['x-service-timestamp'], /^\d+$/, 'X-Service-Timestamp');
      t.equal(r.headers['x-service-delivery-attempt'], '1', 'X-Service-Delivery-Attempt on Variant B too');
      t.same(Object.keys(r.body).sort(), ['data', 'event', 'id', 'timestamp'], 'json envelope');
      const sig = r.headers['x-service-signature'] as string;
      const ts = r.headers['x-service-timestamp'] as string;
      t.ok(verifyB(w.signing_secret, sig, ts, r.raw), 'signature verifies');
      t.notOk(verifyB(w.signing_secret, sig, ts, r.raw.replace('test', 'tesT')), 'altered body rejected');
      t.notOk(verifyB(w.signing_secret, sig, ts, r.raw, Number(ts) + 301), '301 s old rejected');
      rx.respond = (x) => (x.path.endsWith('?b') ? 503 : 200);
      const bad = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/test`, key));
      t.same([bad.delivered, bad.status_code], [false, 503], 'a failing receiver: delivered false, its status');
      rx.respond = () => 200;
      const list = await deliveries(key, w.id);
      t.same(list.map((d: { status: string }) => d.status), ['failed', 'delivered'], 'both test deliveries recorded, newest first');
      const rot = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/rotate-secret`, key));
      await call(app, 'POST', `/v1/webhooks/${w.id}/test`, key);
      const [, , r3] = await rx.waitFor((x) => x.path.endsWith('?b'), 3000, 3);
      t.ok(verifyB(rot.signing_secret, r3.headers['x-service-signature'] as string, r3.headers['x-service-timestamp'] as string, r3.raw), 'rotated secret signs');
      t.notOk(verifyB(w.signing_secret, r3.headers['x-service-signature'] as string, r3.headers['x-service-timestamp'] as string, r3.raw), 'the old one no longer does');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('retry schedule: attempts 1, 2, 3 after the delays, same delivery id and body; then delivered or failed', async (t) => {
      const key = await app.key('business');
      const w = await create(key, { url: rx.url + '?r', events: ['new_event'], sport_filter: ['icehockey_nhl'] });
      const fails = new Map<string, number>();
      // first delivery: 500, 500, 200. second: 500 three times.
      rx.respond = (x) => {
        if (!x.path.endsWith('?r')) return 200;
        const id = x.headers['x-service-delivery-id'] as string;
        const n = (fails.get(id) ?? 0) + 1;
        fails.set(id, n);
        return x.body.data.home_team.endsWith('A') && n === 3 ? 200 : 500;
      };
      const a = newEvents('icehockey_nhl', 1);
      a.events[0].home_team += 'A';
      a.prices[0].outcome += 'A';
      await app.ingest(a);
      const b = newEvents('icehockey_nhl', 1);
      await app.ingest(b);
      const got = await rx.waitFor((x) => x.path.endsWith('?r'), 5000, 6);
      const byId = new Map<string, Received[]>();
      for (const r of got) {
        const id = r.headers['x-service-delivery-id'] as string;
        byId.set(id, [...(byId.get(id) ?? []), r]);
      }
      t.equal(byId.size, 2, 'two deliveries');
      for (const [, list] of byId) {
        t.same(list.map((r) => r.headers['x-service-delivery-attempt']), ['1', '2', '3'], 'attempts 1, 2, 3');
        t.ok(list.every((r) => r.raw === list[0].raw), 'the same body on every attempt');
        t.ok(list[1].at - list[0].at >= 140, `attempt 2 after the first delay (${list[1].at - list[0].at} ms)`);
        t.ok(list[2].at - list[1].at >= 290, `attempt 3 after the second delay (${list[2].at - list[1].at} ms)`);
      }
      await until(async () => (await deliveries(key, w.id)).every((d: { status: string }) => d.status === 'delivered' || d.status === 'failed'));
      const list = await deliveries(key, w.id);
      const ok = list.find((d: { event_id: string }) => got.some((r) => r.body.id === d.event_id && r.body.data.home_team.endsWith('A')));
      const bad = list.find((d: { id: string }) => d !== ok);
      t.equal(ok.status, 'delivered', 'the first delivered at attempt 3');
      t.same(ok.attempts.map((x: { status_code: number }) => x.status_code), [500, 500, 200], 'its attempts');
      t.ok(ok.attempts.every((x: { number: number; duration_ms: number; attempted_at: string }, i: number) => x.number === i + 1 && x.duration_ms >= 0 && !Number.isNaN(Date.parse(x.attempted_at))), 'numbers, times, durations');
      t.equal(bad.status, 'failed', 'the second failed after 3 attempts');
      t.same(bad.attempts.map((x: { error: string }) => x.error), ['HTTP 500', 'HTTP 500', 'HTTP 500'], 'errors recorded');
      t.equal(bad.next_attempt_at, null, 'no further attempt');
      const failedOnly = await deliveries(key, w.id, '&status=failed');
      t.same(failedOnly.map((d: { id: string }) => d.id), [bad.id], 'status filter');
      const page = await call(app, 'GET', `/v1/webhooks/${w.id}/deliveries?limit=1`, key);
      t.equal(page.headers.get('x-result-has-more'), 'true', 'paged');
      t.equal((await j(page)).length, 1, 'one per page');

      const replay = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${bad.id}`, key));
      t.same([replay.delivered, replay.status_code, replay.attempt, replay.replay, replay.delivery_id], [false, 500, 4, 1, bad.id],
        'replay: a new attempt of the same delivery, recorded as its fourth, the first replay');
      const first = rx.requests[rx.requests.length - 1];
      t.same([first.headers['x-service-delivery-attempt'], first.headers['x-service-replay']], ['1', '1'],
        'on the wire: attempt 1 of a schedule of its own (the header stays 1 to 3), marked as replay 1');
      rx.respond = () => 200;
      const replay2 = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${bad.id}`, key));
      t.same([replay2.delivered, replay2.attempt, replay2.replay], [true, 5, 2], 'replay delivers');
      const last = rx.requests[rx.requests.length - 1];
      t.equal(last.headers['x-service-delivery-id'], bad.id, 'same delivery id on the wire');
      t.same([last.headers['x-service-delivery-attempt'], last.headers['x-service-replay']], ['1', '2'], 'replay 2, attempt 1');
      t.ok(byId.get(bad.id)!.every((r) => r.headers['x-service-replay'] === undefined), 'scheduled attempts carry no X-Service-Replay');
      t.ok(verifyA(w.secret, last.headers['x-service-signature'] as string, last.raw), 'signed afresh');
      t.equal(last.raw, byId.get(bad.id)![0].raw, 'same body');
      const after = (await deliveries(key, w.id)).find((d: { id: string }) => d.id === bad.id);
      t.equal(after.status, 'delivered', 'recorded as delivered');
      t.equal(after.attempts.length, 5, 'five attempts listed');
      t.same(after.attempts.map((a: { number: number; replay: boolean }) => [a.number, a.replay]), [[1, false], [2, false], [3, false], [4, true], [5, true]],
        'numbered in order, the replays marked');
      const missing = await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=dlv_nope`, key);
      t.equal(missing.status, 404, 'unknown delivery 404');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('auto-disable after exactly 5 consecutive total failures; PATCH is_active resumes', async (t) => {
      const res0 = await app.post('/v1/admin/keys', { tier: 'pro', email: 'owner@example.com' }, { authorization: 'Bearer test-admin-key-0123456789' });
      const key = (await j(res0)).key as string;
      const w = await create(key, { url: rx.url + '?d', events: ['new_event'], sport_filter: ['baseball_mlb'] });
      rx.respond = (x) => (x.path.endsWith('?d') ? 500 : 200);
      const hook = async () => j(await call(app, 'GET', `/v1/webhooks/${w.id}`, key));
      await app.ingest(newEvents('baseball_mlb', 4));
      await until(async () => (await deliveries(key, w.id)).filter((d: { status: string }) => d.status === 'failed').length === 4);
      let h = await hook();
      t.equal(h.is_active, true, 'still active after 4 total failures');
      t.equal(h.consecutive_failures, 4, 'four counted');
      await app.ingest(newEvents('baseball_mlb', 1));
      await until(async () => (await hook()).is_active === false);
      h = await hook();
      t.equal(h.consecutive_failures, 5, 'disabled at the fifth');
      t.ok(h.disabled_at, 'disabled_at set');
      const notes = await app.app.services.db.sql`select * from notifications order by id`;
      t.equal(notes.length, 1, 'one notification recorded');
      t.match(notes[0].subject, new RegExp(`Webhook ${w.id} disabled`), 'about this webhook');
      t.equal(notes[0].channel, 'email', 'an e-mail');
      t.equal(notes[0].recipient, 'owner@example.com', 'to the owner');
      await until(async () => smtp.mails.length === 1);
      t.same([smtp.mails[0].from, smtp.mails[0].to], ['hooks@linewire.test', 'owner@example.com'], 'sent through SMTP_URL');
      t.match(smtp.mails[0].data, /PATCH \/v1\/webhooks\/\d+ \{"is_active": true\}/, 'the mail says how to re-enable');
      await until(async () => (await app.app.services.db.sql`select sent_at from notifications`)[0].sent_at !== null);
      t.pass('marked sent');
      const seen = rx.requests.filter((x) => x.path.endsWith('?d')).length;
      t.equal(seen, 15, '5 deliveries x 3 attempts');
      await app.ingest(newEvents('baseball_mlb', 1));
      await sleep(300);
      t.equal(rx.requests.filter((x) => x.path.endsWith('?d')).length, 15, 'no deliveries while inactive');
      rx.respond = () => 200;
      const res = await call(app, 'PATCH', `/v1/webhooks/${w.id}`, key, { is_active: true });
      t.equal(res.status, 200, 'PATCH 200');
      t.same([(await j(res)).is_active, (await hook()).consecutive_failures], [true, 0], 'active again, count cleared');
      await app.ingest(newEvents('baseball_mlb', 1));
      await until(async () => (await deliveries(key, w.id, '&status=delivered')).length >= 1);
      t.pass('deliveries resume');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('5 credits per delivered event; an owner without credits gets out_of_credits records', async (t) => {
      const key = await app.key('pro', 12);
      const w = await create(key, { url: rx.url + '?c', events: ['new_event'], sport_filter: ['americanfootball_nfl'] });
      rx.respond = () => 200;
      const remaining = async () => Number((await call(app, 'GET', '/v1/webhooks', key)).headers.get('x-ratelimit-remaining'));
      t.equal(await remaining(), 12, 'starts at 12');
      await app.ingest(newEvents('americanfootball_nfl', 1));
      await until(async () => (await deliveries(key, w.id, '&status=delivered')).length === 1);
      t.equal(await remaining(), 7, '5 charged for a delivered event');
      rx.respond = (x) => (x.path.endsWith('?c') ? 500 : 200);
      await app.ingest(newEvents('americanfootball_nfl', 1));
      await until(async () => (await deliveries(key, w.id, '&status=failed')).length === 1);
      t.equal(await remaining(), 7, 'failed attempts are not charged');
      rx.respond = () => 200;
      await app.ingest(newEvents('americanfootball_nfl', 2));
      await until(async () => (await deliveries(key, w.id, '&status=out_of_credits')).length === 1);
      t.equal(await remaining(), 2, 'one more delivered, then the balance cannot cover another');
      const list = await deliveries(key, w.id);
      const oc = list.find((d: { status: string }) => d.status === 'out_of_credits');
      t.same(oc.attempts, [], 'no request was made for it');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('rate limit: events past the per-minute rate wait for the next window, then rate_limited', async (t) => {
      // this app's window is 1.5 s with 1 window of deferral: pro sends 60 per window
      const key = await app.key('pro');
      const w = await create(key, { url: rx.url + '?l', events: ['new_event'], sport_filter: ['basketball_wnba'] });
      rx.respond = () => 200;
      // start just after a window opens, so the first 60 are sent well before it closes
      while (Date.now() % 1500 > 100) await sleep(10);
      await app.ingest(newEvents('basketball_wnba', 130));
      const got = await rx.waitFor((x) => x.path.endsWith('?l'), 6000, 120);
      await until(async () => (await deliveries(key, w.id, '&status=delivered')).length === 120);
      const limited = await deliveries(key, w.id, '&status=rate_limited');
      t.equal(limited.length, 10, 'past the deferral bound: rate_limited, recorded');
      t.ok(limited.every((d: { attempts: unknown[] }) => d.attempts.length === 0), 'never attempted');
      const times = got.map((r) => r.at).sort((a, b) => a - b);
      const firstWindowEnd = (Math.floor(times[0] / 1500) + 1) * 1500;
      t.equal(times.filter((x) => x < firstWindowEnd).length, 60, '60 in the first window');
      t.equal(times.filter((x) => x >= firstWindowEnd).length, 60, '60 deferred to the next');
      await sleep(200);
      t.equal(rx.requests.filter((x) => x.path.endsWith('?l')).length, 120, 'no more than 120 sent');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('rate limit: rate-limited events are recorded up to the tier\'s rate per window, the rest counted only', async (t) => {
      // regression: every event past the rate was a full outbox row (body included), hundreds a second on a busy
      // feed, kept 30 days. 200 events at once to a pro subscription (60 per 1.5 s window, one window of deferral):
      // 120 go out, 60 of the other 80 are recorded rate_limited, 20 only counted
      const key = await app.key('pro');
      const w = await create(key, { url: rx.url + '?u', events: ['new_event'], sport_filter: ['basketball_euroleague'] });
      rx.respond = () => 200;
      const before = app.app.services.webhooks!.stats.rateLimitedUnrecorded;
      while (Date.now() % 1500 > 100) await sleep(10);
      await app.ingest(newEvents('basketball_euroleague', 200));
      await until(async () => (await deliveries(key, w.id, '&status=delivered')).length === 120);
      t.equal((await deliveries(key, w.id, '&status=rate_limited')).length, 60, '60 rate_limited recorded (the tier\'s rate)');
      t.equal(app.app.services.webhooks!.stats.rateLimitedUnrecorded - before, 20, 'the other 20 counted, not written');
      t.match(await (await app.get('/metrics')).text(), /linewire_webhook_deliveries_skipped_total\{reason="rate_limited_unrecorded"\} [1-9]/, 'and in /metrics');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('rate limit: an arbitrage past the rate is recorded rate_limited however many line events took the rate (never only counted)', async (t) => {
      // regression (the webhook audit): a flood of other events filled the rate and the rows recorded past it, and an
      // arbitrage then was neither sent nor recorded (nothing to replay)
      const key = await app.key('pro');
      const w = await create(key, { url: rx.url + '?p', events: ['new_event', 'arb_flagged'], sport_filter: ['basketball_nbl'] });
      rx.respond = () => 200;
      const before = app.app.services.webhooks!.stats.rateLimitedUnrecorded;
      while (Date.now() % 1500 > 100) await sleep(10);
      await app.ingest(newEvents('basketball_nbl', 200));
      const g = { id: 'wd_nbl_arb', sport_key: 'basketball_nbl', commence_time: Date.now() + 3_600_000, home_team: 'Perth Wildcats', away_team: 'Sydney Kings' };
      await app.ingest({ events: [g], prices: [
        { book: 'draftkings', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 2.2 }, { book: 'draftkings', event_id: g.id, market: 'h2h', outcome: g.away_team, price: 1.6 },
        { book: 'fanduel', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 1.6 }, { book: 'fanduel', event_id: g.id, market: 'h2h', outcome: g.away_team, price: 2.2 },
      ] });
      await until(async () => (await deliveries(key, w.id, '&status=delivered')).length === 120);
      t.ok(app.app.services.webhooks!.stats.rateLimitedUnrecorded - before >= 20, 'past the cap, new_event events only counted');
      const limited = (await deliveries(key, w.id, '&status=rate_limited')) as { event_type: string }[];
      t.equal(limited.filter((d) => d.event_type === 'arb_flagged').length, 1, 'the arbitrage is recorded rate_limited, so it can be replayed');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });

    t.test('rate limit: a window across the clock minute holds no more than the rate either', async (t) => {
      // regression: windows were counted per clock window, so 60 just before a window's end and 60 just after its
      // start went out within a few hundred ms. The rate now holds over any 1.5 s.
      const key = await app.key('pro');
      const w = await create(key, { url: rx.url + '?m', events: ['new_event'], sport_filter: ['basketball_ncaab'] });
      rx.respond = () => 200;
      while (Date.now() % 1500 < 1300) await sleep(10);
      await app.ingest(newEvents('basketball_ncaab', 60));
      while (Date.now() % 1500 > 200) await sleep(10);
      await app.ingest(newEvents('basketball_ncaab', 60));
      const got = await rx.waitFor((x) => x.path.endsWith('?m'), 6000, 120);
      const times = got.map((r) => r.at).sort((a, b) => a - b);
      // the 61st goes out a window after the 1st at the earliest (less the first's own delivery time, a few ms here)
      let tightest = Infinity;
      for (let i = 0; i + 60 < times.length; i++) tightest = Math.min(tightest, times[i + 60] - times[i]);
      t.ok(tightest >= 1500 - 250, `any 61 sends span at least about one window (${tightest} ms)`);
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, key);
    });
  });
}
