// Headers every response carries, the error body, unknown paths and methods, the error catalogue and its
// OpenAPI listing, /openapi.json, /metrics, /health and /v1/meta/errors, over a real socket on one app.

import t from 'tap';
import { ERRORS } from '../engine/errors.js';
import { ADMIN_KEY, TestClock, startTestApp } from './helpers/app.js';

interface ErrBody { message: string; error_code: string; details_url: string; request_id: string; detail?: unknown[] }
interface OpenApiOp { parameters: { name: string; in: string; required: boolean }[]; security: object[]; responses: Record<string, unknown> }
interface OpenApi {
  openapi: string;
  info: { version: string; title: string };
  paths: Record<string, Record<string, OpenApiOp>>;
  'x-error-codes': { code: string; status: number; message: string }[];
}

const clock = new TestClock();
const app = await startTestApp(t, { now: clock.now });
const key = await app.key('business');
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

const ERROR_FIELDS = ['details_url', 'error_code', 'message', 'request_id'];

async function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Response> {
  return fetch(app.base + path, { method, headers, body });
}

/** the assertions errorOf uses, from any (sub)test */
type Tap = Pick<typeof t, 'equal' | 'match' | 'same' | 'ok'>;

/** checks the error body and its tie to the headers; returns it */
async function errorOf(t: Tap, res: Response, status: number, code: string, what: string): Promise<ErrBody> {
  t.equal(res.status, status, `${what}: ${status}`);
  t.match(res.headers.get('content-type'), /^application\/json/, `${what}: JSON`);
  const body = (await res.json()) as ErrBody;
  t.equal(body.error_code, code, `${what}: ${code}`);
  t.same(Object.keys(body).sort(), status === 422 ? [...ERROR_FIELDS, 'detail'].sort() : ERROR_FIELDS, `${what}: exactly the error fields`);
  t.equal(body.request_id, res.headers.get('x-request-id'), `${what}: request_id equals X-Request-ID`);
  t.equal(body.details_url, `/v1/meta/errors#${code}`, `${what}: details_url points into the catalogue`);
  t.ok(typeof body.message === 'string' && body.message.length > 0, `${what}: a message`);
  t.equal(ERRORS[code as keyof typeof ERRORS]?.status, status, `${what}: status as catalogued`);
  return body;
}

t.test('health - database ok, feed, and no freshness before any data', async (t) => {
  const res = await app.get('/health');
  t.equal(res.status, 200, '200');
  const h = (await res.json()) as Record<string, any>;
  t.equal(h.status, 'ok', 'ok');
  t.equal(h.database.ok, true, 'database ok');
  t.equal(h.database.kind, 'embedded', 'embedded database');
  t.equal(typeof h.database.latency_ms, 'number', 'ping latency reported');
  t.equal(h.feed, 'none', 'feed none');
  t.equal(h.simulated, false, 'not simulated');
  t.same(h.data, { events: 0, quotes: 0, newest_write: null, newest_write_age_seconds: null, fresh: null }, 'no data yet: freshness is null, not stale');
  t.same(h.reasons, [], 'no reasons');
  t.equal(h.shards.count, 2, 'two shards');
  t.equal(h.shards.restarts, 0, 'no restarts');
  t.equal(typeof h.version, 'string', 'version');
});

t.test('health - judges data freshness: fresh data ok, data past 900 s degraded (still 200)', async (t) => {
  const clock = new TestClock();
  const T = clock.freeze(Date.now());
  const own = await startTestApp(t, { now: clock.now });
  t.teardown(() => own.close());
  const game = { id: 'h1', sport_key: 'basketball_nba', commence_time: T + 86_400_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  // 899 s old: within the longest stale threshold of any priced book (exchanges, 900 s)
  await own.ingest({ events: [game], prices: [{ book: 'draftkings', event_id: 'h1', market: 'h2h', outcome: 'Boston Celtics', price: 1.9, ts: T - 899_000 }] });
  let res = await own.get('/health');
  let h = await res.json() as Record<string, any>;
  t.same([res.status, h.status, h.data.fresh, h.reasons], [200, 'ok', true, []], '899 s old: fresh');
  clock.freeze(T + 51_000);
  res = await own.get('/health');
  h = await res.json() as Record<string, any>;
  t.equal(res.status, 200, 'stale data is still 200: the process is alive, its feed is not');
  t.same([h.status, h.data.fresh, h.data.newest_write_age_seconds], ['degraded', false, 950], '950 s old: degraded, not fresh');
  t.match(h.reasons.join(' '), /newest price is 950 s old/, 'the reason names the age');
});

t.test('errors - every response carries X-Request-ID and X-Response-Time', async (t) => {
  const free = await app.key('free', 1000);
  const sports = await app.get('/v1/sports');
  const etag = sports.headers.get('etag')!;
  await sports.arrayBuffer();
  const responses: [string, number, () => Promise<Response>][] = [
    ['200 sports', 200, () => app.get('/v1/sports')],
    ['200 odds', 200, () => app.get('/v1/sports/basketball_nba/odds', { 'X-API-Key': key })],
    ['202 ingest', 202, () => app.post('/v1/ingest', {}, admin)],
    ['304 sports', 304, () => app.get('/v1/sports', { 'If-None-Match': etag })],
    ['400 ingest', 400, () => app.post('/v1/ingest', '{', admin)],
    ['401 odds', 401, () => app.get('/v1/sports/basketball_nba/odds')],
    ['404 path', 404, () => app.get('/v1/nothing/here')],
    ['404 sport', 404, () => app.get('/v1/sports/curling_world/odds', { 'X-API-Key': key })],
    ['405 method', 405, () => send('DELETE', '/v1/sports')],
    ['415 ingest', 415, () => app.post('/v1/ingest', 'x', { ...admin, 'content-type': 'text/csv' })],
    ['422 odds', 422, () => app.get('/v1/sports/basketball_nba/odds?regions=zz', { 'X-API-Key': key })],
    ['200 health', 200, () => app.get('/health')],
    ['200 metrics', 200, () => app.get('/metrics')],
    ['200 openapi', 200, () => app.get('/openapi.json')],
  ];
  const ids = new Set<string>();
  for (const [name, status, call] of responses) {
    const res = await call();
    await res.arrayBuffer();
    t.equal(res.status, status, `${name}: ${status}`);
    const id = res.headers.get('x-request-id') ?? '';
    t.match(id, /^[0-9a-f]{32}$/, `${name}: X-Request-ID is 32 hex`);
    ids.add(id);
    t.match(res.headers.get('x-response-time'), /^\d+(\.\d+)?$/, `${name}: X-Response-Time in milliseconds`);
    t.equal(res.headers.get('uwebsockets'), '20', `${name}: served by native uWebSockets.js`);
  }

  t.teardown(() => clock.release());
  clock.freeze(Math.floor(Date.now() / 1000) * 1000 + 500);
  const burst = await Promise.all(Array.from({ length: 61 }, () => app.get('/v1/bookmakers', { 'X-API-Key': free })));
  await Promise.all(burst.map((r) => r.arrayBuffer()));
  const limited = burst.filter((r) => r.status === 429);
  t.equal(limited.length, 1, 'the 61st request in one second is 429');
  t.match(limited[0]?.headers.get('x-request-id'), /^[0-9a-f]{32}$/, '429: X-Request-ID');
  t.match(limited[0]?.headers.get('x-response-time'), /^\d+(\.\d+)?$/, '429: X-Response-Time');
  t.equal(limited[0]?.headers.get('retry-after'), '1', '429: Retry-After');
  for (const r of burst) ids.add(r.headers.get('x-request-id') ?? '');
  t.equal(ids.size, responses.length + burst.length, 'every request got its own id');
});

t.test('errors - bodies: exactly message, error_code, details_url, request_id (and detail on 422)', async (t) => {
  await errorOf(t, await app.get('/v1/sports/basketball_nba/odds'), 401, 'MISSING_KEY', 'missing key');
  await errorOf(t, await app.get('/v1/sports/basketball_nba/odds', { 'X-API-Key': 'lw_0' }), 401, 'INVALID_KEY', 'invalid key');
  await errorOf(t, await app.post('/v1/admin/keys', { tier: 'pro' }), 401, 'ADMIN_KEY_REQUIRED', 'admin key');
  await errorOf(t, await app.get('/v1/sports/curling_world/events'), 404, 'UNKNOWN_SPORT', 'unknown sport');
  await errorOf(t, await app.post('/v1/ingest', '[]', admin), 400, 'MALFORMED_BODY', 'malformed body');
  await errorOf(t, await app.post('/v1/ingest', 'a,b', { ...admin, 'content-type': 'text/csv' }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'media type');
  const big = await fetch(`${app.base}/v1/ingest`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: Buffer.alloc(16 * 1024 * 1024 + 1, 32) });
  await errorOf(t, big, 413, 'BODY_TOO_LARGE', 'body too large');
  const v = await errorOf(t, await app.get('/v1/sports/basketball_nba/odds?oddsFormat=fractional&markets=h2h', { 'X-API-Key': key }), 422, 'VALIDATION_ERROR', 'validation');
  t.same(v.detail, [{ loc: ['query', 'oddsFormat'], msg: 'must be one of decimal, american', type: 'enum', input: 'fractional' }], '422 detail item: loc, msg, type, input');
  const missing = await errorOf(t, await app.post('/v1/admin/keys', { tier: 'gold' }, admin), 422, 'VALIDATION_ERROR', 'body validation');
  t.same((missing.detail as { loc: unknown[] }[])[0].loc, ['body', 'tier'], 'body fields are located in the body');
});

t.test('errors - a deeply nested body is refused and the service stays up (it ended the process)', async (t) => {
  // a 422 echoes the caller's value in detail[].input: 6,000 nested arrays (12 KB) overflowed JSON.stringify's stack
  // inside uWebSockets.js' callback, which ended the process for any key
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const pro = await app.key('pro');
  const cases: [string, string, Record<string, string>][] = [
    ['/v1/verdict/prefs', `{"books":${deep(6000)}}`, { 'X-API-Key': key }],
    ['/v1/parlay/verdict', `{"legs":${deep(6000)}}`, { 'X-API-Key': key }],
    ['/v1/webhooks', `{"url":"https://example.com/h","events":${deep(6000)}}`, { 'X-API-Key': pro }],
    ['/v1/admin/keys', `{"tier":${deep(6000)}}`, admin],
  ];
  for (const [path, body, headers] of cases) {
    await errorOf(t, await send('POST', path, { ...headers, 'content-type': 'application/json' }, body), 400, 'MALFORMED_BODY', `${path}, 6,000 levels`);
    // within the nesting bound: a 422 whose echo is cut to a few levels and items
    const res = await send('POST', path, { ...headers, 'content-type': 'application/json' }, body.replace(deep(6000), `[${deep(30)},${'1,'.repeat(500)}1]`));
    const e = await errorOf(t, res, 422, 'VALIDATION_ERROR', `${path}, 31 levels`);
    const input = JSON.stringify((e.detail as { input: unknown }[])[0].input);
    t.ok(input.length < 300, `${path}: the echoed input is a bounded preview (${input})`);
  }
  t.equal((await app.get('/health')).status, 200, 'the service still answers');
  const inString = await send('POST', '/v1/admin/keys', { ...admin, 'content-type': 'application/json' }, JSON.stringify({ tier: '[{\\"'.repeat(100) }));
  await errorOf(t, inString, 422, 'VALIDATION_ERROR', 'brackets, quotes and escapes inside a string do not count as nesting');
  const long = await errorOf(t, await send('POST', '/v1/admin/keys', { ...admin, 'content-type': 'application/json' }, JSON.stringify({ tier: 'x'.repeat(5000) })), 422, 'VALIDATION_ERROR', 'a long string');
  t.equal((long.detail as { input: string }[])[0].input, 'x'.repeat(256) + '...', 'a long string is echoed cut at 256 characters');
});

t.test('errors - a body field left out is type missing with input null, as a query parameter is', async (t) => {
  const e = await errorOf(t, await send('POST', '/v1/admin/keys', { ...admin, 'content-type': 'application/json' }, '{}'), 422, 'VALIDATION_ERROR', 'no tier');
  t.same(e.detail, [{ loc: ['body', 'tier'], msg: (e.detail as { msg: string }[])[0].msg, type: 'missing', input: null }], 'missing, input null (input was left out)');
  const sent = await errorOf(t, await send('POST', '/v1/admin/keys', { ...admin, 'content-type': 'application/json' }, '{"tier":null}'), 422, 'VALIDATION_ERROR', 'tier null');
  t.equal((sent.detail as { type: string }[])[0].type, 'value_error', 'a field sent as null is a value error');
});

t.test('errors - a JSON body route refuses a body of another media type (415); JSON text under fetch and curl defaults is read', async (t) => {
  const body = JSON.stringify({ tier: 'pro' });
  for (const type of ['application/msgpack', 'multipart/form-data; boundary=x', 'application/xml']) {
    await errorOf(t, await send('POST', '/v1/admin/keys', { ...admin, 'content-type': type }, body), 415, 'UNSUPPORTED_MEDIA_TYPE', type);
  }
  for (const type of ['application/json; charset=utf-8', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'application/merge-patch+json']) {
    t.equal((await send('POST', '/v1/admin/keys', { ...admin, 'content-type': type }, body)).status, 201, `${type}: read as JSON`);
  }
  t.equal((await send('POST', '/v1/admin/keys', admin, body)).status, 201, 'no Content-Type: read as JSON');
  const doc = (await (await app.get('/openapi.json')).json()) as OpenApi;
  t.ok(doc.paths['/v1/admin/keys'].post.responses['415'], '415 documented for a body route');
});

t.test('errors - unknown paths are 404 NOT_FOUND, a wrong method on a known path is 405', async (t) => {
  const notFound: [string, string][] = [
    ['GET', '/v1/nothing'],
    ['GET', '/v1/sports/basketball_nba/no-such-view'],
    ['GET', '/v2/sports'],
    ['PUT', '/v1/nothing'],
    ['GET', '/v4/nothing'],
    ['GET', '/'],
  ];
  for (const [method, path] of notFound) {
    const body = await errorOf(t, await send(method, path), 404, 'NOT_FOUND', `${method} ${path}`);
    t.match(body.message, path, `${method} ${path}: the message names the path`);
  }
  const wrong: [string, string, string][] = [
    // every GET route answers HEAD too, so Allow names both
    ['POST', '/v1/sports', 'GET, HEAD'],
    ['DELETE', '/v1/sports/basketball_nba/odds', 'GET, HEAD'],
    ['PUT', '/v1/sports/basketball_nba/events', 'GET, HEAD'],
    ['GET', '/v1/admin/keys', 'POST'],
    ['GET', '/v1/ingest', 'POST'],
    ['PATCH', '/health', 'GET, HEAD'],
    ['POST', '/v4/sports', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of wrong) {
    const res = await send(method, path, { 'X-API-Key': key });
    t.equal(res.headers.get('allow'), allow, `${method} ${path}: Allow names ${allow}`);
    await errorOf(t, res, 405, 'METHOD_NOT_ALLOWED', `${method} ${path}`);
  }
  // a stream's path without an upgrade (a browser, curl) was 404 "No endpoint": it is one, as a WebSocket
  for (const path of ['/v1/ws/odds-fast/basketball_nba', '/ws/odds/basketball_nba', '/v4/ws/live/basketball_nba']) {
    const res = await app.get(path, { 'X-API-Key': key });
    t.equal(res.headers.get('upgrade'), 'websocket', `GET ${path}: Upgrade: websocket`);
    await errorOf(t, res, 426, 'UPGRADE_REQUIRED', `GET ${path}`);
  }
  await errorOf(t, await app.get('/v1/ws/odds/basketball_nba'), 404, 'NOT_FOUND', 'a stream path not served: 404');
  for (const path of ['/v1/sports/%ZZ/odds', '/v1/sports/%E0%A4%A/events', '/v4/sports/%/odds']) {
    const res = await app.get(path, { 'X-API-Key': key });
    await errorOf(t, res, 404, 'UNKNOWN_SPORT', `malformed escape ${path}`);
  }
  const alive = await app.get('/healthz');
  t.equal(alive.status, 200, 'the server survives malformed escapes');
  await alive.arrayBuffer();
});

t.test('errors - the catalogue: unique codes, listed in /openapi.json and /v1/meta/errors', async (t) => {
  const defs = Object.values(ERRORS);
  const codes = defs.map((d) => d.code);
  t.equal(new Set(codes).size, codes.length, 'codes are unique');
  for (const [name, d] of Object.entries(ERRORS)) {
    t.equal(d.code, name, `${name}: key and code agree`);
    t.match(d.code, /^[A-Z][A-Z0-9_]+$/, `${name}: upper snake case`);
    t.ok(d.status >= 400 && d.status <= 599, `${name}: an error status`);
    t.ok(d.message.length > 0, `${name}: a message`);
  }
  const doc = (await (await app.get('/openapi.json')).json()) as OpenApi;
  const listed = new Map(doc['x-error-codes'].map((e) => [e.code, e]));
  for (const d of defs) t.same(listed.get(d.code), { code: d.code, status: d.status, message: d.message }, `${d.code} is in x-error-codes`);
  t.equal(listed.size, defs.length, 'x-error-codes lists nothing else');

  const res = await app.get('/v1/meta/errors');
  t.equal(res.status, 200, '/v1/meta/errors is public');
  t.same(await res.json(), defs.map((d) => ({ code: d.code, status: d.status, message: d.message })), '/v1/meta/errors lists the catalogue');
});

t.test('openapi - 3.1.0, version 3.2.0, every served path with its parameters', async (t) => {
  const res = await app.get('/openapi.json');
  t.equal(res.status, 200, 'public');
  t.match(res.headers.get('content-type'), /^application\/json/, 'JSON');
  const doc = (await res.json()) as OpenApi;
  t.equal(doc.openapi, '3.1.0', 'OpenAPI 3.1.0');
  t.equal(doc.info.version, '3.2.0', 'API version 3.2.0');
  const odds = ['regions', 'markets', 'oddsFormat', 'dateFormat', 'bookmakers', 'eventIds', 'commenceTimeFrom', 'commenceTimeTo',
    'date', 'include', 'verified', 'live', 'include_live'];
  const expected: Record<string, { method: string; query: string[]; path?: string[]; security: 'none' | 'optional' | 'key' | 'admin' }> = {
    '/health': { method: 'get', query: [], security: 'none' },
    '/healthz': { method: 'get', query: [], security: 'none' },
    '/v1/health': { method: 'get', query: [], security: 'none' },
    '/v1/sports': { method: 'get', query: ['all'], security: 'optional' },
    '/v1/bookmakers': { method: 'get', query: ['all', 'include_endpoints'], security: 'key' },
    '/v1/sports/{sport_key}/events': { method: 'get', query: ['dateFormat', 'eventIds', 'commenceTimeFrom', 'commenceTimeTo'], path: ['sport_key'], security: 'optional' },
    '/v1/sports/{sport_key}/odds': { method: 'get', query: odds, path: ['sport_key'], security: 'key' },
    '/v1/ingest': { method: 'post', query: [], security: 'admin' },
    '/v1/admin/keys': { method: 'post', query: [], security: 'admin' },
    '/openapi.json': { method: 'get', query: [], security: 'none' },
    '/metrics': { method: 'get', query: [], security: 'none' },
    '/v1/meta/errors': { method: 'get', query: [], security: 'none' },
  };
  for (const [path, want] of Object.entries(expected)) {
    const op = doc.paths[path]?.[want.method];
    t.ok(op, `${want.method.toUpperCase()} ${path} is documented`);
    if (op === undefined) continue;
    t.same(op.parameters.filter((p) => p.in === 'query').map((p) => p.name), want.query, `${path}: query parameters`);
    t.same(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.required]), (want.path ?? []).map((n) => [n, true]), `${path}: path parameters`);
    const secured = op.security.length > 0;
    t.equal(secured, want.security !== 'none', `${path}: security ${want.security}`);
    if (want.security === 'admin') t.same(op.security, [{ AdminBearer: [] }], `${path}: admin bearer`);
    if (want.security === 'key') t.same(op.security.map((s) => Object.keys(s)[0]).sort(), ['ApiKeyHeader', 'ApiKeyQuery', 'Bearer'], `${path}: the three key forms`);
    // free and open, a key optional: the empty requirement first, then the three key forms
    if (want.security === 'optional') t.same(op.security.map((s) => Object.keys(s)[0] ?? '(none)'), ['(none)', 'ApiKeyHeader', 'ApiKeyQuery', 'Bearer'], `${path}: no key, or one of the three forms`);
  }
  const evParams = doc.paths['/v1/sports/{sport_key}/ev'].get.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  t.ok(evParams.includes('minEdge') && evParams.includes('min_edge_pct'), 'ev: the alias min_edge_pct is listed beside minEdge (SPEC lists both)');
  const oddsOp = doc.paths['/v1/sports/{sport_key}/odds'].get;
  t.ok(oddsOp.responses['200'] && oddsOp.responses['401'] && oddsOp.responses['422'] && oddsOp.responses['429'], 'odds documents 200, 401, 422 and 429');
  t.ok(doc.paths['/v1/ingest'].post.responses['202'], 'ingest documents 202');
  for (const h of ['/health', '/healthz', '/v1/health']) {
    t.ok(doc.paths[h].get.responses['503'], `${h} documents the 503 it answers while degraded`);
  }
  t.ok(doc.paths['/v1/admin/keys'].post.responses['201'], 'admin keys documents 201');

  // nothing documented that is not served: every documented operation answers something other than NOT_FOUND
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of Object.keys(ops)) {
      const concrete = path.replace(/\{[a-z_]+\}/g, 'basketball_nba');
      const r = await send(method.toUpperCase(), concrete, {}, method === 'post' ? '{}' : undefined);
      const body = r.status === 404 ? ((await r.json()) as ErrBody) : (await r.arrayBuffer(), null);
      t.not(body?.error_code, 'NOT_FOUND', `${method.toUpperCase()} ${path} is served`);
      t.not(r.status, 405, `${method.toUpperCase()} ${path} accepts its documented method`);
      if (path.startsWith('/v1/')) {
        const alias = await send(method.toUpperCase(), '/v4' + concrete.slice(3), {}, method === 'post' ? '{}' : undefined);
        t.equal(alias.status, r.status, `${method.toUpperCase()} /v4${path.slice(3)} answers as /v1 does`);
        await alias.arrayBuffer();
      }
    }
  }
});

t.test('metrics - Prometheus text with linewire_ series', async (t) => {
  const now = Date.now();
  const ev = { id: 'err_metrics_1', sport_key: 'icehockey_nhl', commence_time: now + 3_600_000, home_team: 'Boston Bruins', away_team: 'Buffalo Sabres' };
  const r = await app.ingest({ events: [ev], prices: [
    { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.8 },
    { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.05 },
    { book: 'nosuchbook', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.05 },
  ] });
  t.equal(r.status, 202, 'ingested');
  const sports = await app.get('/v1/sports');
  await sports.arrayBuffer();
  const res = await app.get('/metrics');
  t.equal(res.status, 200, '200');
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/, 'Prometheus text exposition format');
  const text = await res.text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  t.match(text, /^# TYPE linewire_http_request_duration_seconds histogram$/m, 'request latency histogram');
  t.match(text, /^linewire_http_request_duration_seconds_count\{route="\/v1\/sports",status="200"\} [1-9]\d*$/m, 'labelled by route template and status');
  t.match(text, /^linewire_http_request_duration_seconds_count\{route="unmatched",status="404"\} [1-9]\d*$/m, 'unmatched paths are one label, not one per path');
  t.equal(value('linewire_ingest_observations_total'), 3, 'observations received');
  t.equal(value('linewire_ingest_accepted_total'), 2, 'observations accepted');
  t.equal(value('linewire_ingest_rejected_total'), 1, 'observations rejected');
  t.equal(value('linewire_events'), 1, 'events held');
  t.equal(value('linewire_quotes'), 2, 'quotes held');
  t.match(text, /^# TYPE linewire_body_cache_total counter$/m, 'body cache counter');
  const busy = [...text.matchAll(/^linewire_shard_busy_seconds_total\{shard="(\d+)"\} (\S+)$/gm)];
  t.same(busy.map(([, shard]) => shard), Array.from({ length: app.app.services.hub.pool.size }, (_, i) => String(i)), 'shard busy time, one series per shard');
  t.ok(busy.some(([, , v]) => Number(v) > 0), 'a shard that applied a batch has spent time busy');
  // Prometheus reads a _total name as a counter: every one of ours is declared so (they were gauges read at scrape
  // time; prom-client's own nodejs_active_*_total are gauges of its making)
  const totals = [...text.matchAll(/^# TYPE (linewire_\S+_total) (\S+)$/gm)];
  t.ok(totals.some(([, name]) => name === 'linewire_ingest_observations_total'), 'the engine counters are listed');
  t.same(totals.filter(([, , type]) => type !== 'counter').map(([, name]) => name), [], 'no linewire_ _total metric is of another type');
  t.match(text, /^process_cpu_seconds_total /m, 'default process metrics');
  const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? \S+$/;
  let samples = 0;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (!SAMPLE.test(line)) t.fail(`not a Prometheus sample line: ${line}`);
    samples++;
  }
  t.ok(samples > 20, 'every sample line parses');
});

t.test('health - data freshness follows the newest write, on every alias', async (t) => {
  const ts = Date.now();
  const ev = { id: 'err_health_1', sport_key: 'basketball_nba', commence_time: ts + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  await app.ingest({ events: [ev], prices: [
    { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.6, ts },
    { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.4, ts: ts - 1000 },
  ] });
  for (const path of ['/health', '/healthz', '/v1/health', '/v4/health']) {
    const res = await app.get(path);
    t.equal(res.status, 200, `${path}: 200`);
    t.equal(res.headers.get('x-ratelimit-remaining'), null, `${path}: free, no key needed`);
    const h = (await res.json()) as Record<string, any>;
    t.equal(h.status, 'ok', `${path}: ok`);
    t.equal(h.database.ok, true, `${path}: database ok`);
    t.equal(h.data.events, 2, `${path}: two events (this one and the metrics one)`);
    t.equal(h.data.quotes, 4, `${path}: four quotes`);
    t.equal(h.data.newest_write, new Date(ts).toISOString(), `${path}: newest_write is the freshest observation`);
    t.ok(h.data.newest_write_age_seconds >= 0, `${path}: its age in seconds`);
    t.equal(h.shards.quotes.reduce((a: number, b: number) => a + b, 0), 4, `${path}: quotes per shard add up`);
  }
});

t.test('listen - a second instance on a port in use fails to start instead of sharing it', async (t) => {
  // uSockets' default listen takes SO_REUSEPORT: the second instance listened beside the first and the kernel split
  // the connections, so half of a client's requests met a process that did not know its key (INVALID_KEY)
  await t.rejects(startTestApp(t, { port: app.app.port, shards: 1 }), /cannot listen on 127\.0\.0\.1:\d+/, 'EADDRINUSE: the start fails');
  for (let i = 0; i < 10; i++) {
    const res = await app.get('/v1/sports');
    t.equal(res.status, 200, `request ${i} reaches the first instance`);
    await res.arrayBuffer();
  }
});
