// Source freshness classes, /v1/meta/source-quality, /v1/status payload invariants and cache (fresh, stale while
// revalidating, cold 503), and the status history sampled over a simulated clock (surviving a restart).

import { rmSync } from 'node:fs';
import t from 'tap';
import { classify, RequestRate, sourceQuality, statusPayload } from '../engine/status.js';
import { SLA_CLASSES } from '../engine/sla.js';
import { Poller } from '../engine/poller.js';
import { TestClock, startTestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';

const clock = new TestClock();
const T = clock.freeze(Date.UTC(2026, 10, 22, 12, 0, 0));
const ev = { id: 'st_1', sport_key: 'basketball_nba', commence_time: T + 86_400_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
const quote = (book: string, price: number, ts: number) => ({ book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price, ts });

type Quality = { source: string; sla: string; basis: string; age_s: number | null; recommended_poll_s: number };
type Status = {
  sources: { source: string; healthy: boolean; sla_state: string; latest_write_age_seconds: number | null }[];
  tables: Record<string, { source: string; healthy: boolean; sla_state: string; row_healthy: boolean; row_sla_state: string; health_scope: string; source_latest_age_seconds: number | null }[]>;
  data_freshness: { all_sources_healthy: boolean; stale_sources: string[]; suppressed_sources: string[]; retired_sources: string[]; sources_without_rows: string[] | null };
  sla_by_source: Record<string, { sla: string; source_quality_sla: string; source_quality_age_s: number | null; sla_basis: object }>;
  poller_health: { feeds: unknown[] };
  requests: { p50_per_min: number; p95_per_min: number; last_hour: number };
};

t.test('classes - thresholds and the poller state machine (pure)', async (t) => {
  const fast = SLA_CLASSES.fast;
  t.same([0, 15, 15.1, 60, 60.1, 180, 180.1, null].map((a) => classify(a, fast)),
    ['ok', 'ok', 'degraded', 'degraded', 'breach', 'breach', 'stale', 'stale'], 'fast: 15 / 60 / 180 s, no write is stale');
  t.same(SLA_CLASSES.exchange_slow, { name: 'exchange_slow', tight_s: 120, slack_s: 360, stale_s: 900 }, 'exchange_slow 120 / 360 / 900 s');
  // judged on the exact age, shown to a tenth of a second (regression: a write 15.04 s old was rounded to 15.0 first
  // and judged ok, and one 180.04 s old breach while the views had dropped its quotes at 180 s)
  const now = 1_800_000_000_000;
  const facts = (ageMs: number) => ({ key: 'fanduel', kind: 'sportsbook', sla: fast, oddsWrite: now - ageMs, propsWrite: 0, pulse: 0 });
  t.match(sourceQuality(facts(15_040), now), { sla: 'degraded', age_s: 15 }, 'source quality: 15.04 s is degraded, shown as 15');
  t.match(sourceQuality(facts(180_040), now), { sla: 'stale', age_s: 180 }, '180.04 s is stale');
  const st = statusPayload({ now, sources: [facts(15_040)], expected: null, retired: [], pollers: [], requests: { p50_per_min: 0, p95_per_min: 0, last_hour: 0 },
    database: { ok: true, latency_ms: 1 }, analytics: { arbitrage: 0, ev: 0 } });
  t.match(st.sources[0], { sla_state: 'degraded', latest_write_age_seconds: 15 }, '/v1/status alike');

  // request rates over the full minutes since the start (regression: the hour before it counted as quiet minutes,
  // and a node up five minutes with 176 requests answered p50 0)
  const start = Date.UTC(2031, 0, 1, 12, 0, 30);
  const rate = new RequestRate(start);
  for (let minute = 1; minute <= 5; minute++) for (let i = 0; i < 10 * minute; i++) rate.record(start + minute * 60_000);
  rate.record(start + 6 * 60_000);
  // full minutes since the start: 12:01 .. 12:05 with 10, 20, 30, 40, 50; 12:06 is partial (1 so far)
  t.same(rate.summary(start + 6 * 60_000), { p50_per_min: 30, p95_per_min: 50, last_hour: 151 }, 'p50 and p95 of the five full minutes; the hour\'s total');
  t.same(new RequestRate(start).summary(start + 1000), { p50_per_min: 0, p95_per_min: 0, last_hour: 0 }, 'before any full minute: the current one');
  const p = new Poller('x', { failureThreshold: 3, baseBackoffMs: 100, maxBackoffMs: 1000 }, () => 1);
  p.failure(0, 'e1');
  t.same([p.state, p.backoffMs, p.canPoll(99), p.canPoll(100)], ['closed', 100, false, true], 'first failure: backoff base, breaker closed');
  p.failure(100, 'e2');
  p.failure(300, 'e3');
  t.same([p.state, p.backoffMs], ['open', 400], 'third failure opens the breaker; backoff doubles (jitter at its top)');
  t.equal(p.canPoll(700), true, 'after the backoff one trial poll');
  t.equal(p.state, 'half_open', 'half-open during the trial');
  p.failure(700, 'e4');
  t.same([p.state, p.backoffMs], ['open', 800], 'a failed trial opens it again, longer backoff');
  p.failure(1500, 'e5');
  t.equal(p.backoffMs, 1000, 'capped at maxBackoffMs');
  p.pulse(2600, ['pinnacle']);
  t.same([p.state, p.consecutiveFailures, p.backoffMs, p.sourcePulses.get('pinnacle')], ['closed', 0, 0, 2600], 'a pulse closes it');
  const jittered = new Poller('y', { failureThreshold: 5, baseBackoffMs: 100, maxBackoffMs: 10_000 }, () => 0);
  jittered.failure(0, 'e');
  jittered.failure(0, 'e');
  t.equal(jittered.backoffMs, 100, 'full jitter: the bottom of [base, cap]');
});

t.test('status over a simulated clock', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  clock.freeze(T);
  let app = await startTestApp(t, { now: clock.now, dataDir: dir, status: { cacheMs: 90_000, computeTimeoutMs: 100 } });
  const status = () => app.app.services.status!;
  await app.ingest({ events: [ev], prices: [quote('pinnacle', 1.9, T), quote('betfair_ex_uk', 1.95, T),
    { book: 'draftkings', event_id: ev.id, market: 'player_points', player: 'Jayson Tatum', point: 27.5, outcome: 'Over', price: 1.9, ts: T }] });

  await t.test('every class transition of a stalled book, with its timestamps', async (t) => {
    const seen: [number, string, number | null, string][] = [];
    for (const s of [0, 15, 16, 60, 61, 180, 181, 599, 601]) {
      clock.freeze(T + s * 1000);
      const q = ((await (await app.get('/v1/meta/source-quality')).json()) as { sources: Quality[] }).sources.find((x) => x.source === 'pinnacle')!;
      seen.push([s, q.sla, q.age_s, q.basis]);
    }
    t.same(seen, [[0, 'ok', 0, 'write'], [15, 'ok', 15, 'write'], [16, 'degraded', 16, 'write'], [60, 'degraded', 60, 'write'],
      [61, 'breach', 61, 'write'], [180, 'breach', 180, 'write'], [181, 'stale', 181, 'write'], [599, 'stale', 599, 'write'],
      [601, 'stale', null, 'none']], 'ok -> degraded -> breach -> stale, judged on the write, then nothing within 10 minutes');
    status().poller('test').pulse(T + 601_000, ['pinnacle']);
    clock.freeze(T + 605_000);
    const q = ((await (await app.get('/v1/meta/source-quality')).json()) as { sources: Quality[] }).sources.find((x) => x.source === 'pinnacle')!;
    // a poll every 7 s (half tight_s = 15, rounded down) keeps a fast book ok with one missed: 8 let 16 s pass it
    t.match(q, { sla: 'ok', basis: 'pulse', age_s: 4, recommended_poll_s: 7 }, 'no write in the window: judged on the poller pulse');
    const sla = (await (await app.get('/v1/meta/per-book-sla')).json()) as { source: string; tight_s: number; slack_s: number; stale_s: number }[];
    t.match(sla.find((b) => b.source === 'betfair_ex_uk'), { tight_s: 120, slack_s: 360, stale_s: 900 }, 'an exchange is exchange_slow');
    t.match(sla.find((b) => b.source === 'pinnacle'), { tight_s: 15, slack_s: 60, stale_s: 180 }, 'the sharp book is fast');
  });

  await t.test('payload invariants, the cold 503, stale-while-revalidate', async (t) => {
    clock.freeze(T + 100_000);
    // the one embedded connection is busy for 500 ms: the computation's database ping waits past the 100 ms bound
    const busy = app.app.services.db.sql`select pg_sleep(0.5)`.then(() => undefined);
    const cold = await app.get('/v1/status');
    t.equal(cold.status, 503, 'a cold cache whose computation runs over its bound (100 ms here) is 503');
    t.equal(cold.headers.get('retry-after'), '5', 'with Retry-After');
    t.equal(((await cold.json()) as { error_code: string }).error_code, 'SERVICE_UNAVAILABLE', 'error body');
    await busy;
    await new Promise((r) => setTimeout(r, 100));
    let res = await app.get('/v1/status');
    t.equal(res.status, 200, 'the computation went on and filled the cache');
    t.equal(res.headers.get('x-status-cache'), 'fresh', 'fresh');
    t.match(res.headers.get('cache-control'), /max-age=90/, 'Cache-Control max-age=90');
    const body = (await res.json()) as Status;
    const byKey = new Map(body.sources.map((x) => [x.source, x]));
    t.same(Object.fromEntries([...byKey].map(([k, v]) => [k, v.sla_state])), { pinnacle: 'breach', betfair_ex_uk: 'ok', draftkings: 'breach' },
      'one verdict per source at 100 s (fast books breach, the exchange still ok)');
    t.same(body.data_freshness.stale_sources.sort(), body.sources.filter((x) => !x.healthy).map((x) => x.source).sort(), 'stale_sources is exactly the complement of healthy');
    t.equal(body.data_freshness.all_sources_healthy, false, 'not all healthy');
    t.same(Object.keys(body.sla_by_source).sort(), [...byKey.keys()].sort(), 'sla_by_source carries exactly the sources of the arrays');
    for (const [k, v] of Object.entries(body.sla_by_source)) t.equal(v.sla, byKey.get(k)!.sla_state, `${k}: sla quotes the source verdict`);
    t.same(body.tables.odds.map((r) => r.source).sort(), ['betfair_ex_uk', 'pinnacle'], 'odds rows for sources with game-line writes');
    t.same(body.tables.props.map((r) => r.source), ['draftkings'], 'props rows for the prop writer');
    for (const r of [...body.tables.odds, ...body.tables.props]) {
      const src = byKey.get(r.source)!;
      t.same([r.healthy, r.sla_state, r.source_latest_age_seconds, r.health_scope], [src.healthy, src.sla_state, src.latest_write_age_seconds, 'source'], `${r.source}: the row quotes the source verdict`);
    }
    t.equal(body.data_freshness.sources_without_rows, null, 'no feed declares its sources (FEED=none): null, not []');
    t.ok(Array.isArray(body.data_freshness.retired_sources), 'retired_sources');
    t.ok(body.requests.last_hour >= 1, 'requests of the last hour counted');

    clock.freeze(T + 191_000);
    res = await app.get('/v1/status');
    t.same([res.headers.get('x-status-cache'), res.headers.get('age')], ['stale', '91'], 'past 90 s the stale body is served while it revalidates');
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 200));
    res = await app.get('/v1/status');
    const fresh = (await res.json()) as Status;
    t.same([res.headers.get('x-status-cache'), fresh.sources.find((x) => x.source === 'pinnacle')!.sla_state], ['fresh', 'stale'], 'then the revalidated body');
    // regression: after a quiet spell the first reader got the last body whatever its age (Age 322 with max-age 90
    // and stale-while-revalidate 90); past both it is recomputed first
    clock.freeze(T + 191_000 + 181_000);
    res = await app.get('/v1/status');
    t.same([res.headers.get('x-status-cache'), res.headers.get('age')], ['cold', '0'], 'past max-age + stale-while-revalidate: recomputed, Age 0');
    await res.arrayBuffer();
  });

  await t.test('movers and api-info', async (t) => {
    const t1 = clock.freeze(T + 195_000);
    const ev2 = { ...ev, id: 'st_2' };
    const quote2 = (book: string, price: number, ts: number) => ({ ...quote(book, price, ts), event_id: ev2.id });
    await app.ingest({ events: [ev2], prices: [quote2('lowvig', 1.9, t1 - 120_000), quote2('smarkets', 1.95, t1 - 120_000)] });
    await app.ingest({ prices: [quote2('lowvig', 2.0, t1 - 100_000), quote2('smarkets', 1.96, t1 - 20_000)] });
    await app.ingest({ prices: [quote2('lowvig', 2.1, t1 - 10_000), quote2('lowvig', 2.1, t1 - 5_000)] });
    type M = { book: string; from_price: number; to_price: number; moves: number; prob_change_pct: number; outcome: string; last_move_at: string };
    let res = await app.get('/v1/meta/movers?window_s=600');
    let rows = ((await res.json()) as { movers: M[] }).movers;
    t.same(rows.map((r) => [r.book, r.from_price, r.to_price, r.moves, r.prob_change_pct, r.outcome]), [
      ['lowvig', 1.9, 2.1, 2, Math.round((1 / 2.1 - 1 / 1.9) * 1e6) / 1e4, 'Boston Celtics'],
      ['smarkets', 1.95, 1.96, 1, Math.round((1 / 1.96 - 1 / 1.95) * 1e6) / 1e4, 'Boston Celtics'],
    ], 'largest move first; a repeated price is a verification, not a move');
    t.equal(rows[0].last_move_at, new Date(t1 - 10_000).toISOString(), 'when it last moved');
    const cover = async (w: number) => (await (await app.get(`/v1/meta/movers?window_s=${w}`)).json()) as { complete: boolean; covered_since: string };
    const day = await cover(86_400);
    t.equal(day.complete, false, 'a day back reaches before the first price this service saw: complete false');
    t.ok(Date.parse(day.covered_since) > t1 - 86_400_000 && Date.parse(day.covered_since) <= t1, `covered_since says from when (${day.covered_since})`);
    t.equal((await cover(60)).complete, true, 'a minute back: complete');
    rows = ((await (await app.get('/v1/meta/movers?window_s=60')).json()) as { movers: M[] }).movers;
    t.same(rows.map((r) => [r.book, r.from_price, r.to_price]), [['lowvig', 2.0, 2.1], ['smarkets', 1.95, 1.96]], 'a narrower window: the price when it opened');
    // a spread moved to another line at the same price is a move; the away side's point is its own (+, as /odds
    // shows it; regression: the home line on both sides, and the move not seen)
    const ev3 = { ...ev, id: 'st_3' };
    const spread = (point: number, ts: number) => [
      { book: 'betrivers', event_id: ev3.id, market: 'spreads', outcome: ev3.home_team, point, price: 1.91, ts },
      { book: 'betrivers', event_id: ev3.id, market: 'spreads', outcome: ev3.away_team, point: -point, price: 1.91, ts },
    ];
    await app.ingest({ events: [ev3], prices: spread(-4.5, t1 - 50_000) });
    await app.ingest({ prices: spread(-7.5, t1 - 40_000) });
    type P = M & { point: number | null; from_point: number | null };
    const lines = ((await (await app.get('/v1/meta/movers?window_s=600&limit=100')).json()) as { movers: P[] }).movers.filter((r) => r.book === 'betrivers');
    t.same(lines.map((r) => [r.outcome, r.from_point, r.point, r.from_price, r.to_price]).sort(), [
      ['Boston Celtics', -4.5, -7.5, 1.91, 1.91], ['Miami Heat', 4.5, 7.5, 1.91, 1.91],
    ], 'the line move at one price on both sides, each at its own point');
    rows = ((await (await app.get('/v1/meta/movers?sport_key=icehockey_nhl')).json()) as { movers: M[] }).movers;
    t.same(rows, [], 'another sport: none');
    for (const q of ['window_s=59', 'window_s=86401', 'limit=0', 'limit=101', 'sport_key=nosport']) t.equal((await app.get(`/v1/meta/movers?${q}`)).status, 422, `${q}: 422`);
    // open to anyone and a scan of the whole ring: one answer per parameters and second (a loop of callers held the
    // main thread about 90 ms a call)
    const once = await (await app.get('/v1/meta/movers?window_s=600&limit=5')).text();
    await app.ingest({ prices: [quote2('smarkets', 2.3, t1 - 1000)] });
    t.equal(await (await app.get('/v1/meta/movers?window_s=600&limit=5')).text(), once, 'within the second: the same answer');
    clock.freeze(t1 + 1000);
    const later = ((await (await app.get('/v1/meta/movers?window_s=600&limit=5')).json()) as { movers: M[] }).movers;
    t.same(later.find((r) => r.book === 'smarkets')?.to_price, 2.3, 'a second later: the move that came since');
    const page = await app.get('/status');
    t.match(page.headers.get('content-type'), /^text\/html/, '/status is an HTML page');
    const html = await page.text();
    const script = /<script>([\s\S]*)<\/script>/.exec(html)?.[1] ?? '';
    t.doesNotThrow(() => new Function(script), 'its script parses');
    t.match(script, /\/v1\/status\/history\?window_s=86400/, 'it draws the 24-hour strip from /v1/status/history');
    clock.freeze(clock.now() + 100_000);
    const st = (await (await app.get('/v1/status')).json()) as { analytics: { arbitrage: number; ev: number } };
    t.same(Object.keys(st.analytics), ['arbitrage', 'ev'], 'live arbitrage and EV counts in the status');
    res = await app.get('/v1/meta/api-info');
    t.match(await res.json(), { name: 'linewire', api_version: '3.2.0', feed: 'none', simulated: false, documents: { openapi: '/openapi.json' } }, 'api-info');
  });

  await t.test('history sampled every 30 s over a simulated clock, kept across a restart', async (t) => {
    await app.ingest({ prices: [quote('pinnacle', 1.91, T + 200_000)] });
    for (let s = 0; s <= 300; s += 30) {
      clock.freeze(T + 200_000 + s * 1000);
      await status().sample();
    }
    await app.close();
    app = await startTestApp(t, { now: clock.now, dataDir: dir });
    const res = await app.get('/v1/status/history?window_s=3600');
    t.equal(res.status, 200, '200');
    const h = (await res.json()) as { interval_s: number; sources: { source: string; segments: { sla_state: string; samples: number; from: string }[] }[] };
    const pin = h.sources.find((x) => x.source === 'pinnacle')!;
    t.same(pin.segments.map((x) => [x.sla_state, x.samples]), [['ok', 1], ['degraded', 2], ['breach', 4], ['stale', 4]],
      'pinnacle: ok at 0 s, degraded at 30-60 s, breach at 90-180 s, stale from 210 s');
    t.equal(pin.segments[1].from, new Date(T + 210_000).toISOString(), 'each run starts at its first sample\'s slot (T + 230 s on the 30 s grid)');
    t.equal(h.interval_s, 30, 'interval 30 s');
    const narrow = (await (await app.get('/v1/status/history?window_s=60')).json()) as typeof h;
    t.same(narrow.sources.find((x) => x.source === 'pinnacle')!.segments.map((x) => x.samples), [2], 'window_s narrows to the last 60 s (slots T + 450 s and T + 480 s)');
    for (const q of ['window_s=604801', 'window_s=29', 'window_s=abc']) t.equal((await app.get(`/v1/status/history?${q}`)).status, 422, `${q}: 422`);

    // a stretch with no sample (the service down) ends a run; two nodes sampling one slot write one row. Pinnacle
    // writes again at T + 1,095 s (ok at the sample of T + 1,100 s), the service is down ten minutes, then pinnacle
    // writes at T + 1,695 s and is sampled at T + 1,700 s and T + 1,705 s (one slot: a second node at its own phase),
    // and writes again and is sampled at T + 1,720 s (the next slot)
    clock.freeze(T + 1_095_000);
    // (the restarted node holds no event: prices live in memory)
    await app.ingest({ events: [ev], prices: [quote('pinnacle', 1.92, T + 1_095_000)] });
    clock.freeze(T + 1_100_000);
    await status().sample();
    clock.freeze(T + 1_695_000);
    await app.ingest({ prices: [quote('pinnacle', 1.93, T + 1_695_000)] });
    for (const at of [T + 1_700_000, T + 1_705_000]) {
      clock.freeze(at);
      await status().sample();
    }
    clock.freeze(T + 1_718_000);
    await app.ingest({ prices: [quote('pinnacle', 1.94, T + 1_718_000)] });
    clock.freeze(T + 1_720_000);
    await status().sample();
    const later = await app.get('/v1/status/history?window_s=3600');
    t.equal(later.status, 200, '200');
    const h2 = (await later.json()) as { sources: { source: string; segments: { from: string; to: string; sla_state: string; samples: number }[] }[] };
    const pin2 = h2.sources.find((x) => x.source === 'pinnacle')!;
    t.same(pin2.segments.slice(-2).map((x) => [x.sla_state, x.from, x.to, x.samples]), [
      ['ok', new Date(T + 1_080_000).toISOString(), new Date(T + 1_080_000).toISOString(), 1],
      ['ok', new Date(T + 1_680_000).toISOString(), new Date(T + 1_710_000).toISOString(), 2],
    ], 'the ten unsampled minutes split the ok run (regression: one run across the gap); slot T + 1,680 s sampled once');
  });

});

t.test('status - a node with no source yet: ok, and all (none) of its sources healthy, the two signals agreeing', async (t) => {
  const app = await startTestApp(t, { shards: 1 });
  const st = (await (await app.get('/v1/status')).json()) as { status: string; sources: unknown[]; data_freshness: { all_sources_healthy: boolean; stale_sources: string[] } };
  t.same([st.status, st.sources, st.data_freshness.all_sources_healthy, st.data_freshness.stale_sources], ['ok', [], true, []],
    'status ok with all_sources_healthy true (regression: false beside ok)');
});
