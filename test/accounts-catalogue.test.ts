// The credit-cost catalogue is the meter's table, and a quote equals what the call then charges.

import t from 'tap';
import { CREDIT_COSTS, meteredRoute, type Priced } from '../http/credit-costs.js';
import { TIERS } from '../engine/tiers.js';
import { startTestApp } from './helpers/app.js';

interface Quote { credits: number; exact: boolean; endpoint: string; rule: string }

const app = await startTestApp(t, { shards: 1 });

t.test('credit-costs - the catalogue is the table the meter charges by', async (t) => {
  const res = await app.get('/v1/meta/credit-costs');
  t.equal(res.status, 200, 'no key needed');
  t.equal(res.headers.get('x-requests-last'), null, 'not metered');
  const body = (await res.json()) as { costs: { method: string; path: string; credits: number | null; minimum: number; rule: string }[]; free: string[] };
  t.same(body.costs.map((c) => [c.method, c.path, c.credits, c.minimum, c.rule]), CREDIT_COSTS.map((c) => [c.method, c.path, c.credits, c.minimum, c.rule]),
    'every entry of the table, in order');
  t.ok(body.free.includes('GET /v1/bookmakers') && body.free.includes('GET /v1/sports') && body.free.includes('GET /v1/usage'), 'free endpoints listed');
  t.notOk(body.free.some((f) => body.costs.some((c) => `${c.method} ${c.path}` === f)), 'no endpoint is both priced and free');
  t.same(body.costs.filter((c) => c.credits !== null).map((c) => [c.path, c.credits]).filter(([p]) => /arbitrage|\/ev$|best-bets|verdict|props|middles|consensus/.test(String(p))),
    [['/v1/sports/{sport_key}/props', 3], ['/v1/sports/{sport_key}/consensus', 3], ['/v1/sports/{sport_key}/middles', 3],
      ['/v1/sports/{sport_key}/arbitrage', 10], ['/v1/sports/{sport_key}/ev', 10], ['/v1/sports/{sport_key}/best-bets', 10],
      ['/v1/verdict', 5], ['/v1/parlay/verdict', 10]], 'SPEC Limits figures');
});

t.test('credit-costs - the Router takes fixed costs from the table and refuses drift', async (t) => {
  const bound: Priced = meteredRoute({ method: 'GET', path: '/v1/verdict', cost: () => 5 });
  t.equal(bound.cost!({}, undefined as never), 5, 'a fixed entry prices the route');
  t.throws(() => meteredRoute({ method: 'GET', path: '/v1/sports/{sport_key}/arbitrage' }), /no cost rule/, 'a priced route without a cost of its own is refused (never metered twice)');
  t.throws(() => meteredRoute({ method: 'GET', path: '/v1/verdict', cost: () => 4 }), /says 5/, 'a route whose own price disagrees is refused');
  t.throws(() => meteredRoute({ method: 'GET', path: '/v1/new-thing', cost: () => 2 }), /no entry/, 'a priced route missing from the table is refused');
  t.doesNotThrow(() => meteredRoute({ method: 'GET', path: '/v1/free-thing', cost: () => 0 }), 'a free route needs no entry');
  t.throws(() => meteredRoute({ method: 'GET', path: '/v1/sports/{sport_key}/odds' }), /no cost rule/, 'a variable entry needs the route\'s rule');
});

t.test('quote - equals what the call then charges, for a sample of endpoints', async (t) => {
  const key = await app.key('business', 10_000);
  const books = 'draftkings,fanduel,betmgm,williamhill_us,espnbet,betrivers,fanatics,bovada,betonlineag,lowvig,mybookieag';
  const sample: [string, string, string][] = [
    ['GET', '/v1/sports/basketball_nba/odds', ''],
    ['GET', '/v1/sports/basketball_nba/odds', 'markets=h2h,spreads,totals&regions=us,uk'],
    ['GET', '/v1/sports/basketball_nba/odds', `markets=h2h,spreads&bookmakers=${books}`],
    ['GET', '/v4/sports/soccer_epl/odds', 'markets=h2h&regions=eu,uk,us,au'],
    ['GET', '/v1/sports/basketball_nba/props', ''],
    ['GET', '/v1/sports/basketball_nba/live', ''],
    ['GET', '/v1/sports/basketball_nba/consensus', ''],
    ['GET', '/v1/sports/basketball_nba/middles', ''],
    ['GET', '/v1/sports/basketball_nba/arbitrage', ''],
    ['GET', '/v1/sports/basketball_nba/ev', ''],
    ['GET', '/v1/sports/basketball_nba/best-bets', ''],
    ['GET', '/v1/prediction-markets/basketball_nba', ''],
    ['GET', '/v1/historical/sports/basketball_nba/coverage', ''],
    ['GET', '/v1/bookmakers', ''],
    ['GET', '/v1/sports', ''],
  ];
  for (const [method, path, query] of sample) {
    const q = await app.post('/v1/meta/quote', { method, path, query });
    t.equal(q.status, 200, `${path}?${query}: quoted`);
    const quote = (await q.json()) as Quote;
    const res = await app.get(`${path}${query === '' ? '' : '?' + query}`, { 'X-API-Key': key });
    t.equal(res.status, 200, `${path}?${query}: served`);
    await res.arrayBuffer();
    const charged = res.headers.get('x-requests-last');
    t.equal(String(quote.credits), charged ?? '0', `${path}?${query}: quote ${quote.credits} = charged ${charged}`);
    t.equal(quote.exact, true, `${path}: exact`);
  }
  const inline = (await (await app.post('/v1/meta/quote', { path: '/v1/sports/basketball_nba/odds?markets=h2h,spreads&regions=us,uk' })).json()) as Quote;
  t.equal(inline.credits, 4, 'a query string inside path works; method defaults to GET');
  const obj = (await (await app.post('/v1/meta/quote', { path: '/v1/sports/basketball_nba/odds', query: { markets: ['h2h', 'totals'], regions: 'us' } })).json()) as Quote;
  t.equal(obj.credits, 2, 'query as an object of parameters');
  t.equal(obj.endpoint, 'GET /v1/sports/{sport_key}/odds', 'the endpoint template');
  const head = (await (await app.post('/v1/meta/quote', { method: 'HEAD', path: '/v1/sports/basketball_nba/arbitrage' })).json()) as Quote;
  t.equal(head.credits, 0, 'HEAD costs nothing');
  const csv = (await (await app.post('/v1/meta/quote', { path: '/v1/historical/closing-lines.csv', query: 'date=2026-11-01' })).json()) as Quote;
  t.same([csv.credits, csv.exact], [1, true], 'CSV export: 1 per request');
  const rows = (await (await app.post('/v1/meta/quote', { path: '/v1/historical/closing-lines.json', query: 'date=2026-11-01' })).json()) as Quote;
  t.same([rows.credits, rows.exact], [1, false], 'JSON export: the minimum, priced by rows once counted');
  const parlay = (await (await app.post('/v1/meta/quote', { method: 'POST', path: '/v1/parlay/verdict' })).json()) as Quote;
  t.equal(parlay.credits, 10, 'a POST endpoint');
});

t.test('quote - bad requests are 422 naming the field; the quote charges nothing', async (t) => {
  const cases: [string, unknown, unknown[]][] = [
    ['unknown path', { path: '/v1/nothing-here' }, ['body', 'path']],
    ['path not a string', { path: 5 }, ['body', 'path']],
    ['bad method', { method: 'TRACE', path: '/v1/sports' }, ['body', 'method']],
    ['bad query type', { path: '/v1/sports', query: 5 }, ['body', 'query']],
    ['a parameter the call would refuse', { path: '/v1/sports/basketball_nba/odds', query: 'regions=zz' }, ['query', 'regions']],
    // the call would be 404 UNKNOWN_SPORT, free (regression: quoted at 1 credit, exact)
    ['a sport that does not exist', { path: '/v4/sports/nosuch/odds' }, ['body', 'path']],
  ];
  for (const [name, body, loc] of cases) {
    const res = await app.post('/v1/meta/quote', body);
    t.equal(res.status, 422, `${name}: 422`);
    const e = (await res.json()) as { error_code: string; detail: { loc: unknown[] }[] };
    t.same(e.detail[0]?.loc, loc, `${name}: loc ${loc.join('.')}`);
  }
  for (const path of ['/v1/sports/upcoming/odds', '/v1/sports/basketball_nba/odds', '/v1/sports/basketball%5Fnba/odds']) {
    t.equal((await app.post('/v1/meta/quote', { path })).status, 200, `${path}: quoted`);
  }
  t.equal((await app.post('/v1/meta/quote', { path: '/v1/sports/upcoming/arbitrage' })).status, 422, 'upcoming is a sport key of /odds alone');
  t.equal((await app.post('/v1/meta/quote', '{"path":')).status, 400, 'malformed JSON: 400');
  t.equal((await app.post('/v1/meta/quote', { path: '/v1/sports', query: 'x'.repeat(9000) })).status, 413, 'a body above 8 KiB: 413');
});

t.test('pricing - tiers with monthly credits, caps, WebSocket and webhook entitlements', async (t) => {
  const res = await app.get('/v1/pricing');
  t.equal(res.status, 200, 'public');
  const body = (await res.json()) as { tiers: { tier: string; monthly_credits: number; requests_per_second: number | null; websocket: { allowed: boolean; coalesce_ms: number | null; max_streams: number | null }; webhooks: { allowed: boolean; max_webhooks: number | null; max_events_per_minute: number | null } }[] };
  t.same(body.tiers.map((x) => [x.tier, x.monthly_credits]), TIERS.map((x) => [x.tier, x.monthlyCredits]), 'every tier and its allowance');
  const by = Object.fromEntries(body.tiers.map((x) => [x.tier, x]));
  t.equal(by.free!.requests_per_second, 60, 'free: 60 requests/s');
  t.equal(by.pro!.requests_per_second, null, 'paid: no per-second cap');
  t.same([by.pro!.websocket.allowed, by.business!.websocket.coalesce_ms, by.scale!.websocket.coalesce_ms], [false, 1000, 0], 'WebSocket from business');
  t.same(body.tiers.map((x) => [x.tier, x.websocket.max_streams]), TIERS.map((x) => [x.tier, x.wsStreams]), 'open streams per account, from the tier table');
  t.same([by.starter!.webhooks.allowed, by.pro!.webhooks.max_webhooks, by.pro!.webhooks.max_events_per_minute, by.business!.webhooks.max_webhooks], [false, 5, 60, 25], 'webhook limits');
});
