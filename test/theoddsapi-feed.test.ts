// FEED=theoddsapi against a local v4 server (test/helpers/theoddsapi-server.ts) on 127.0.0.1. One app (one shard,
// a frozen clock) runs the connector from FEED: its first cycle is served back by our own REST API and shows in
// /v1/status. The other subtests drive connectors by hand on the same app's ingest path, each with its own API
// key (own credits at the server), its own clock and a deterministic Poller, so backoff, breaker and quota waits
// are stepped through without sleeping.

import t from 'tap';
import { Poller } from '../engine/poller.js';
import { cadence } from '../engine/upstream-quota.js';
import { MAX_BODY_BYTES, TheOddsApiFeed, type TheOddsApiConfig, type TickResult } from '../workers/theoddsapi-feed.js';
import { startTestApp } from './helpers/app.js';
import { fixture, startOddsServer } from './helpers/theoddsapi-server.js';

const T = Date.parse('2026-11-23T18:00:00Z');
const E1 = 'e912304de2b2ce35b473ce2ecd3d1502';
const E2 = '0a6b3d5e7f9c1b2d4e6f8a0c2e4b6d8f';
const OUTRIGHT = '4f1c7c0e1f2a3b4c5d6e7f8091a2b3c4';

const up = await startOddsServer(t);
const base: TheOddsApiConfig = {
  apiKey: 'app', base: up.base, sports: ['basketball_nba', 'icehockey_nhl', 'basketball_nba_championship_winner'],
  markets: ['h2h', 'spreads', 'totals', 'player_points'], regions: ['us'], minIntervalMs: 60_000, timeoutMs: 5_000,
  resetDay: 1, reserve: 0, propsWithinMs: 24 * 3_600_000, sportsRefreshMs: 3_600_000, exhaustedProbeMs: 3_600_000,
};
const app = await startTestApp(t, { now: () => T, shards: 1, feeds: ['theoddsapi'], theOddsApi: base });
t.teardown(() => app.close());
const services = app.app.services;

/** A connector driven by hand on the app's ingest path, on its own clock. */
function handFeed(key: string, over: Partial<TheOddsApiConfig> = {}, random = () => 0) {
  const clock = { t: T };
  const poller = new Poller(`theoddsapi-${key}`, { failureThreshold: 3, baseBackoffMs: 1000, maxBackoffMs: 8000 }, random);
  const feed = new TheOddsApiFeed({ ...base, apiKey: key, sports: ['basketball_nba'], markets: ['h2h', 'spreads', 'totals'], ...over }, {
    ingest: async (batch, now) => {
      const r = await services.hub.ingest(batch, now, 'theoddsapi');
      await services.webhooks!.settled();
      return r;
    },
    poller,
    now: () => clock.t,
  });
  const at = (ms: number) => {
    clock.t = T + ms;
    return feed.tick();
  };
  return { feed, poller, clock, at };
}

t.test('theoddsapi feed - one poll is served by our own API: game lines, player props, outrights, status', async (t) => {
  const feed = app.app.theOddsApi!;
  t.ok(feed, 'FEED=theoddsapi started the connector');
  if (feed.cycles === 0 && services.status!.poller('theoddsapi').totalFailures === 0) await new Promise<TickResult>((resolve) => { feed.onTick = resolve; });
  t.equal(feed.cycles, 1, 'one cycle ran');
  const paths = up.paths('app');
  t.same(paths, [
    '/v4/sports',
    '/v4/sports/basketball_nba/odds',
    `/v4/sports/basketball_nba/events/${E1}/odds`,
    `/v4/sports/basketball_nba/events/${E2}/odds`,
    '/v4/sports/basketball_nba_championship_winner/odds',
  ], 'the sports list, the featured markets, props per event, the outright sport; nothing for the NHL (out of season)');
  const odds = up.requests.find((r) => r.key === 'app' && r.path === '/v4/sports/basketball_nba/odds')!.query;
  t.same(Object.fromEntries(odds), { apiKey: 'app', regions: 'us', markets: 'h2h,spreads,totals', oddsFormat: 'decimal', dateFormat: 'iso' }, 'odds query');
  t.equal(up.requests.find((r) => r.path.endsWith(`${E1}/odds`))!.query.get('markets'), 'player_points', 'props asked per event');
  t.equal(up.requests.find((r) => r.path.includes('championship'))!.query.get('markets'), 'outrights', 'an outright sport is asked for outrights');

  const key = await app.key('business');
  const res = await app.get(`/v4/sports/basketball_nba/odds?regions=us,uk&markets=h2h,spreads&oddsFormat=decimal&apiKey=${key}`);
  t.equal(res.status, 200, 'served');
  t.equal(res.headers.get('x-data-source'), 'theoddsapi', 'labelled as The Odds API data, not simulated');
  const docs = await res.json() as { id: string; bookmakers: { key: string; markets: { key: string; outcomes: { name: string; price: number; point?: number }[] }[]; raw_json: { feed: string } }[] }[];
  const ev = docs.find((d) => d.id === E1)!;
  const dk = ev.bookmakers.find((b) => b.key === 'draftkings')!;
  t.same(dk.markets.find((m) => m.key === 'h2h')!.outcomes.map((o) => [o.name, o.price]), [['Boston Celtics', 1.5], ['Miami Heat', 2.75]], 'h2h prices');
  t.same(dk.markets.find((m) => m.key === 'spreads')!.outcomes.map((o) => [o.name, o.point]), [['Boston Celtics', -6.5], ['Miami Heat', 6.5]], 'spread points');
  t.equal(dk.raw_json.feed, 'theoddsapi', 'raw_json names the source');
  t.ok(ev.bookmakers.some((b) => b.key === 'betfair_ex_uk'), 'the exchange back prices are there');
  t.notOk(ev.bookmakers.some((b) => b.key === 'examplebook_zz'), 'no unknown book');
  t.ok(docs.some((d) => d.id === E2), 'the second game');

  const props = await app.get(`/v1/sports/basketball_nba/props?markets=player_points&oddsFormat=decimal&apiKey=${key}`);
  const rows = await props.json() as { player: string; bookmaker: string; line: number; over_price: number; under_price: number }[];
  t.match(rows.find((r) => r.player === 'Jayson Tatum' && r.bookmaker === 'draftkings'), { line: 27.5, over_price: 1.83, under_price: 1.95 }, 'a player prop from the event endpoint');
  t.equal(rows.filter((r) => r.player === 'Jayson Tatum').length, 2, 'two books quote Tatum');
  t.match(services.hub.event(OUTRIGHT), { kind: 'futures', title: 'NBA Championship Winner' }, 'the outright event is a futures event');

  t.equal(feed.totals.rejected, 1, 'the outcome without its point was rejected by ingest and counted');
  t.ok(services.hub.counters.rejected >= 1, "in the hub's counters that parser.degraded reads");

  const status = await (await app.get('/v1/status')).json() as { poller_health: { feeds: Record<string, any>[] } };
  const ph = status.poller_health.feeds.find((f) => f.feed === 'theoddsapi')!;
  t.match(ph, {
    circuit: 'closed', pulses: 1, consecutive_failures: 0, source: 'theoddsapi', simulated: false,
    quota: { remaining: 994, used: 6, last: 1, exhausted: false, period_ends_at: '2026-12-01T00:00:00.000Z' },
    cadence: { cycle_cost: 6, min_interval_ms: 60_000, cycles: 1 },
    unknown_books: ['examplebook_zz'],
    totals: { lay_markets_skipped: 1, rejected: 1 },
  }, 'poller_health shows the breaker, the quota and the cadence');
  t.same(ph.sports.map((s: { key: string; state: string }) => [s.key, s.state]),
    [['basketball_nba', 'in_season'], ['icehockey_nhl', 'out_of_season'], ['basketball_nba_championship_winner', 'in_season']], 'sports and their season');
});

t.test('theoddsapi feed - quota headers are tracked and the cadence follows what is left', async (t) => {
  up.credits.set('cad', 20_000);
  const { feed, at } = handFeed('cad');
  t.equal(await at(0), 'polled', 'first cycle');
  t.match(feed.quota.snapshot(T), { remaining: 19_997, used: 3, last: 3 }, 'x-requests-* read');
  const periodEnd = Date.parse('2026-12-01T00:00:00Z');
  const first = cadence({ remaining: 19_997, reserve: 0, cycleCost: 3, msLeft: periodEnd - T, minMs: 60_000 }).intervalMs;
  t.equal(feed.intervalMs, first, 'interval = time left x cycle cost / remaining');
  t.equal(feed.nextCycleAt, T + first, 'next cycle then');
  const n = up.paths('cad').length;
  t.equal(await at(first - 1), 'not_due', 'not before');
  t.equal(up.paths('cad').length, n, 'no request meanwhile');
  up.credits.set('cad', 2_000);
  t.equal(await at(first), 'polled', 'second cycle');
  const second = cadence({ remaining: 1_997, reserve: 0, cycleCost: 3, msLeft: periodEnd - (T + first), minMs: 60_000 }).intervalMs;
  t.equal(feed.intervalMs, second, 'recomputed from the new remaining');
  t.ok(second > first * 5, 'a tenth of the credits: a much longer interval');
  t.same(up.paths('cad').slice(n), ['/v4/sports/basketball_nba/odds'], 'the sports list is reused within the hour');
});

t.test('theoddsapi feed - quota exhaustion stops polling until the period rolls over', async (t) => {
  up.credits.set('dry', 0);
  up.script('dry', { status: 401, error: 'error-out-of-usage-credits.json', headers: { 'x-requests-remaining': '0' } });
  const { feed, poller, at } = handFeed('dry', { resetDay: 24 });
  t.equal(await at(0), 'exhausted', '401 OUT_OF_USAGE_CREDITS');
  t.match(feed.quota.snapshot(T), { exhausted: true, exhausted_reason: 'OUT_OF_USAGE_CREDITS', resumes_at: '2026-11-24T00:00:00.000Z' }, 'until the period rolls over');
  t.equal(poller.totalFailures, 0, 'a spent quota is not a breaker failure');
  const n = up.paths('dry').length;
  t.equal(await at(30 * 60_000), 'exhausted', 'half an hour later');
  t.equal(up.paths('dry').length, n, 'no request');
  t.equal(await at(3_600_000), 'exhausted', 'an hour later: the free probe');
  t.same(up.paths('dry').slice(n), ['/v4/sports'], 'only the free sports call, which reports 0 credits left');
  up.credits.set('dry', 500);
  t.equal(await at(6 * 3_600_000), 'polled', 'the period rolled over: polling resumes');
  t.match(feed.quota.snapshot(T + 6 * 3_600_000), { exhausted: false, remaining: 497 }, 'fresh credits');

  // what is left cannot pay a cycle: stop before the upstream refuses
  up.credits.set('low', 4);
  const low = handFeed('low', { resetDay: 24, sportsRefreshMs: 86_400_000 });
  t.equal(await low.at(0), 'polled', 'the cycle it could pay');
  t.match(low.feed.quota.snapshot(T), { remaining: 1, exhausted: true, exhausted_reason: 'remaining' }, '1 credit left < 3 a cycle: stopped');
  const m = up.paths('low').length;
  t.equal(await low.at(60 * 60_000 - 1), 'exhausted', 'no polling');
  t.equal(up.paths('low').length, m, 'no request');
  up.credits.set('low', 500);
  t.equal(await low.at(6 * 3_600_000), 'polled', 'the new period: the old remaining does not block the first paid call');
  t.same(up.paths('low').slice(m), ['/v4/sports/basketball_nba/odds'], 'straight to the odds (the sports list is still fresh)');
});

t.test('theoddsapi feed - 429 backs off for Retry-After', async (t) => {
  up.script('busy', { status: 429, error: 'error-exceeded-freq-limit.json', headers: { 'retry-after': '120' } });
  const { poller, at } = handFeed('busy');
  t.equal(await at(0), 'failed', 'rate-limited');
  t.match(poller.lastError, /HTTP 429 EXCEEDED_FREQ_LIMIT/, 'the upstream code');
  t.equal(poller.backoffMs, 120_000, 'the wait asked for (longer than the jittered backoff)');
  const n = up.paths('busy').length;
  t.equal(await at(119_999), 'backoff', 'not before');
  t.equal(up.paths('busy').length, n, 'no request while backing off');
  t.equal(await at(120_000), 'polled', 'then again');
  t.equal(poller.state, 'closed', 'closed');
});

t.test('theoddsapi feed - a 429 on one sport ends the cycle: the frequency limit is the key\'s', async (t) => {
  // the ingest audit: the sport that got 429 (Retry-After 30) was asked again every cycle while another succeeded
  up.script('busy2', { pass: true }, { status: 429, error: 'error-exceeded-freq-limit.json', headers: { 'retry-after': '120' } });
  const { poller, at } = handFeed('busy2', { sports: ['basketball_nba', 'basketball_nba_championship_winner'] });
  t.equal(await at(0), 'failed', 'the cycle fails at the 429');
  t.same(up.paths('busy2'), ['/v4/sports', '/v4/sports/basketball_nba/odds'], 'no call for the next sport');
  t.equal(poller.backoffMs, 120_000, 'the wait asked for');
  t.equal(await at(119_999), 'backoff', 'not before');
  t.equal(await at(120_000), 'polled', 'then both sports again');
  t.ok(up.paths('busy2').includes('/v4/sports/basketball_nba_championship_winner/odds'), 'the second sport polled');
});

t.test('theoddsapi feed - repeated 5xx opens the breaker; the half-open trial closes it', async (t) => {
  const err = { status: 503, body: '<html>upstream unavailable</html>', headers: { 'content-type': 'text/html' } };
  up.script('flaky', err, err, err, err);
  const { poller, at } = handFeed('flaky');
  t.equal(await at(0), 'failed', '1st');
  t.equal(await at(1000), 'failed', '2nd');
  t.equal(poller.state, 'closed', 'below the threshold');
  t.equal(await at(2000), 'failed', '3rd');
  t.equal(poller.state, 'open', 'open after 3');
  t.match(poller.lastError, /HTTP 503/, 'the status');
  const n = up.paths('flaky').length;
  t.equal(await at(2999), 'backoff', 'open: no poll');
  t.equal(up.paths('flaky').length, n, 'no request');
  t.equal(await at(3000), 'failed', 'the half-open trial fails');
  t.equal(poller.state, 'open', 'open again');
  t.equal(await at(4000), 'polled', 'the next trial works');
  t.equal(poller.state, 'closed', 'closed');
  t.equal(poller.consecutiveFailures, 0, 'reset');
});

t.test('theoddsapi feed - a body that is not JSON is a failure, not a crash', async (t) => {
  up.script('garbled', { status: 200, body: '[{"key": "basketball_nba", "act' }, { status: 200, body: '{"message": "not a list"}' });
  const { poller, at } = handFeed('garbled');
  t.equal(await at(0), 'failed', 'truncated JSON');
  t.match(poller.lastError, /GET \/v4\/sports: response is not JSON/, 'said so');
  t.equal(await at(1000), 'failed', 'JSON of the wrong shape');
  t.match(poller.lastError, /did not answer an array/, 'said so');
  t.equal(await at(2000), 'polled', 'the next answer is used');
});

t.test('theoddsapi feed - a request that does not answer times out', async (t) => {
  up.script('slow', { hang: true });
  const { poller, at } = handFeed('slow', { timeoutMs: 150 });
  t.equal(await at(0), 'failed', 'gave up');
  t.match(poller.lastError, /GET \/v4\/sports: timed out after 150 ms/, 'said so');
  t.equal(await at(1000), 'polled', 'the next one works');
});

t.test('theoddsapi feed - one sport failing leaves the others polled, and says so per sport', async (t) => {
  // regression from the connector audit: the first sport's failure failed the cycle, and every sport after it was
  // never polled while it lasted
  up.script('split', { pass: true }, { status: 500, body: '<html>oops</html>', headers: { 'content-type': 'text/html' } });
  const { feed, poller, at } = handFeed('split', { sports: ['basketball_nba_championship_winner', 'basketball_nba'] });
  t.equal(await at(0), 'polled', 'the cycle counts: a sport was polled');
  t.ok(up.paths('split').includes('/v4/sports/basketball_nba/odds'), 'the sport after the failing one was asked');
  t.equal(poller.state, 'closed', 'no failure counted against the feed');
  const sports = (feed.describe(T).sports as { key: string; last_error: string | null; prices: number }[]);
  t.match(sports[0].last_error, /HTTP 500/, 'the failing sport carries its error');
  t.same([sports[1].last_error, sports[1].prices > 0], [null, true], 'the other its prices');
});

t.test('theoddsapi feed - a failed cycle that was charged waits the shortest interval, not the backoff', async (t) => {
  // regression from the connector audit: a cycle failing after a charged call was retried at the backoff's pace
  // (1 to 60 s), each retry charged again; one that cost nothing (a 5xx, above) still retries at that pace
  up.script('charged', { pass: true }, { status: 200, body: '[{"id": "x", "bookm', headers: { 'x-requests-last': '3' } });
  const { at } = handFeed('charged');
  t.equal(await at(0), 'failed', 'charged, then the body is not JSON');
  t.equal(await at(1000), 'not_due', 'not at the backoff');
  t.equal(await at(59_999), 'not_due', 'nor before the shortest interval');
  t.equal(await at(60_000), 'polled', 'then again');
});

t.test('theoddsapi feed - a body past the cap is refused as it streams, not read into memory', async (t) => {
  // regression from the connector audit: a 700 MB answer was read whole (1.4 GB of memory kept)
  up.script('huge', { pass: true }, { status: 200, body: `[${' '.repeat(MAX_BODY_BYTES)}]` });
  const { poller, at } = handFeed('huge');
  t.equal(await at(0), 'failed', 'refused');
  t.match(poller.lastError, /passed 33554432 bytes/, 'said so');
});

t.test('theoddsapi feed - an event gone upstream before its start is final once its start passes', async (t) => {
  // regression from the connector audit: a game that vanished before its start (cancelled, postponed) stayed listed,
  // in play with no price, for max_age_hours
  const all = JSON.parse(fixture('odds-basketball_nba.json')) as { id: string }[];
  const without = JSON.stringify(all.filter((e) => e.id !== E2));
  const { at } = handFeed('vanish');
  t.equal(await at(0), 'polled', 'both events listed');
  const listed = () => [...services.hub.readModel.sportEvents('basketball_nba')].filter((e) => e.status !== 'final').map((e) => e.id);
  t.ok(listed().includes(E2), 'E2 held');
  up.script('vanish', { pass: true }, { status: 200, body: without }, { pass: true }, { status: 200, body: without });
  t.equal(await at(3_600_000), 'polled', 'E2 gone upstream an hour later, before its start');
  t.ok(listed().includes(E2), 'not final before its start (it may come back)');
  t.equal(await at(9 * 3_600_000), 'polled', 'polled again after its start, still gone');
  t.notOk(listed().includes(E2), 'final now');
});

t.test('theoddsapi feed - a book or market missing from the next answer is withdrawn from every view', async (t) => {
  // regression from the connector audit: a line the book pulled stayed in /odds (and in an arbitrage) until the event
  // ended. Each /odds answer is the complete set of the markets asked for, so what is missing was pulled.
  const all = JSON.parse(fixture('odds-basketball_nba.json')) as { id: string; bookmakers: { key: string; markets: { key: string }[] }[] }[];
  const pulled = structuredClone(all);
  const e1 = pulled.find((e) => e.id === E1)!;
  e1.bookmakers = e1.bookmakers.filter((b) => b.key !== 'fanduel');
  const dk = e1.bookmakers.find((b) => b.key === 'draftkings')!;
  dk.markets = dk.markets.filter((m) => m.key !== 'spreads');
  const key = await app.key('business');
  const books = async () => {
    const docs = (await (await app.get(`/v1/sports/basketball_nba/odds?markets=h2h,spreads,totals&bookmakers=draftkings,fanduel&apiKey=${key}`)).json()) as
      { id: string; bookmakers: { key: string; markets: { key: string }[] }[] }[];
    return docs.find((d) => d.id === E1)!.bookmakers.map((b) => `${b.key}:${b.markets.map((m) => m.key).join('+')}`).sort();
  };
  const { at } = handFeed('pull');
  t.equal(await at(0), 'polled', 'the full answer');
  // (fanduel's totals are one-sided in the fixture: /odds holds them back, as it does any incomplete market)
  t.same(await books(), ['draftkings:h2h+spreads+totals', 'fanduel:h2h'], 'both books, every market');
  up.script('pull', { pass: true }, { status: 200, body: JSON.stringify(pulled) });
  t.equal(await at(3_600_000), 'polled', 'an answer without fanduel and without draftkings\' spreads');
  t.same(await books(), ['draftkings:h2h+totals'], 'fanduel and draftkings\' spreads withdrawn');
  t.equal(await at(7_200_000), 'polled', 'the full answer again');
  t.same(await books(), ['draftkings:h2h+spreads+totals', 'fanduel:h2h'], 'back when offered again');
});
