// GET /openapi.json against what the service sends: real responses of a broad set of operations (every variant of
// the odds shape, grouped props, the account, status and historical operations, error bodies) are validated, body
// and headers, against the operation's documented response for their status and media type. The response schemas
// are closed (additionalProperties: false) where the service says everything it sends, so an undocumented field
// fails here.
//
// ajv and ajv-formats are not dependencies of linewire: they are present in node_modules as dependencies of
// fast-json-stringify, and this test imports them from there.

import t from 'tap';

type Tap = Pick<typeof t, 'equal' | 'same'>;
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ADMIN_KEY, startTestApp, type TestApp } from './helpers/app.js';
import { startReceiver } from './helpers/webhook-receiver.js';

// ajv is CommonJS: under NodeNext its default import is the module object, whose default is the class
const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv2020Module.default }).default;

type Doc = { paths: Record<string, Record<string, any>>; components: Record<string, Record<string, any>> };

/** one JSON pointer segment, as a URI fragment */
const seg = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));

class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  constructor(private readonly doc: Doc) {
    (addFormats as unknown as (a: unknown) => void)(this.ajv);
    this.ajv.addSchema({ ...doc, $id: 'openapi.json' } as object);
  }

  /** the documented response (components resolved) and the pointer to it */
  response(method: string, path: string, status: number): { res: any; ptr: string } | null {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    if (op === undefined) return null;
    const code = op.responses[String(status)] !== undefined ? String(status) : 'default';
    let res = op.responses[code];
    let ptr = `openapi.json#/paths/${seg(path)}/${method.toLowerCase()}/responses/${code}`;
    if (res?.$ref !== undefined) {
      const name = (res.$ref as string).split('/').pop()!;
      res = this.doc.components.responses[name];
      ptr = `openapi.json#/components/responses/${seg(name)}`;
    }
    return { res, ptr };
  }

  /** the problems of one real response against the document: [] when it conforms */
  async check(method: string, path: string, r: Response): Promise<string[]> {
    const found = this.response(method, path, r.status);
    if (found === null) return [`${method} ${path} is not documented`];
    const { res, ptr } = found;
    if (res === undefined) return [`${method} ${path} ${r.status} is not documented`];
    const errors: string[] = [];
    // a status answered only by `default` is undocumented: a client generator types it as an unknown error
    if (this.doc.paths[path][method.toLowerCase()].responses[String(r.status)] === undefined) errors.push(`status ${r.status} is not listed`);
    for (const h of ['X-Request-ID', 'X-Response-Time']) if (res.headers?.[h] === undefined) errors.push(`header ${h} is not documented`);
    for (const [name, h] of Object.entries(res.headers ?? {}) as [string, any][]) {
      const def = h.$ref !== undefined ? this.doc.components.headers[(h.$ref as string).split('/').pop()!] : h;
      const v = r.headers.get(name);
      if (v === null) {
        if (def.required === true) errors.push(`header ${name} is documented as required and missing`);
        continue;
      }
      if (def.schema?.type === 'integer' && !/^-?\d+$/.test(v)) errors.push(`header ${name}: ${v} is not an integer`);
      if (def.schema?.pattern !== undefined && !new RegExp(def.schema.pattern).test(v)) errors.push(`header ${name}: ${v} does not match ${def.schema.pattern}`);
      if (def.schema?.enum !== undefined && !def.schema.enum.includes(v)) errors.push(`header ${name}: ${v} not in ${def.schema.enum}`);
    }
    const text = await r.text();
    if (res.content === undefined) {
      if (text !== '') errors.push('a body where none is documented');
      return errors;
    }
    const type = (r.headers.get('content-type') ?? '').replace(/;\s*charset=[^;]*/i, '').trim();
    if (res.content[type] === undefined) return [...errors, `media type ${type} not documented (${Object.keys(res.content).join(', ')})`];
    if (type !== 'application/json') return errors;
    const validate = this.ajv.getSchema(`${ptr}/content/${seg(type)}/schema`);
    if (validate === undefined) return [...errors, 'no schema'];
    if (!validate(JSON.parse(text))) {
      errors.push(...(validate.errors ?? []).slice(0, 8).map((e: { instancePath: string; message?: string; params: unknown }) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`));
    }
    return errors;
  }
}

const admin = { authorization: `Bearer ${ADMIN_KEY}` };

t.test('openapi conformance - served responses validate against /openapi.json', async (t) => {
  const rx = await startReceiver(t);
  const app: TestApp = await startTestApp(t, { shards: 1, webhooks: { allowPrivate: true } });
  const doc = (await (await app.get('/openapi.json')).json()) as Doc;
  const c = new Conformance(doc);
  const business = await app.key('business');
  const free = await app.key('free');
  const now = Date.now();
  const ev = { id: 'oa_nba_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const q = (book: string, market: string, outcome: string, price: number, point?: number) => ({ book, event_id: ev.id, market, outcome, price, point, ts: now });
  const prop = (book: string, outcome: string, price: number) => ({ book, event_id: ev.id, market: 'player_points', player: 'Jayson Tatum', point: 27.5, outcome, price, ts: now });
  const ing = await app.ingest({
    events: [ev],
    prices: [
      q('draftkings', 'h2h', 'Boston Celtics', 1.8), q('draftkings', 'h2h', 'Miami Heat', 2.1),
      q('pinnacle', 'h2h', 'Boston Celtics', 1.85), q('pinnacle', 'h2h', 'Miami Heat', 2.05),
      q('fanduel', 'totals', 'Over', 1.91, 220.5), q('fanduel', 'totals', 'Under', 1.91, 220.5),
      prop('draftkings', 'Over', 1.9), prop('draftkings', 'Under', 1.9), prop('fanduel', 'Over', 1.87), prop('fanduel', 'Under', 1.95),
    ],
  });
  t.equal(ing.status, 202, 'fixture ingested');

  /** one call, checked: the status expected and no problem against the document */
  const conforms = async (t: Tap, method: string, path: string, url: string, opts: { status: number; key?: string | null; body?: unknown; headers?: Record<string, string> }) => {
    const headers: Record<string, string> = { ...(opts.key === null ? {} : { 'x-api-key': opts.key ?? business }), ...opts.headers };
    if (opts.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
    const r = await fetch(app.base + url, { method, headers, body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) });
    const copy = r.clone();
    t.equal(r.status, opts.status, `${method} ${url}: status ${opts.status}`);
    t.same(await c.check(method, path, r), [], `${method} ${url} (${r.status}) conforms`);
    return copy;
  };

  t.test('the document: real schemas, media types, request bodies, derived errors and headers', async (t) => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]) => Object.entries(item).map(([m, op]) => ({ p, m, op: op as any })));
    for (const { p, m, op } of ops) {
      const okCode = Object.keys(op.responses).find((c) => c.startsWith('2'))!;
      const ok = op.responses[okCode];
      const json = ok.content['application/json']?.schema;
      if (json !== undefined) {
        const keys = Object.keys(json).filter((k) => k !== 'description');
        t.ok(keys.length > 0 && !(keys.length === 1 && json.type === 'object') && !(keys.length === 2 && json.type === 'object' && json.additionalProperties === false),
          `${m} ${p}: the ${okCode} schema says what is sent`);
      }
      t.ok(ok.headers?.['X-Request-ID'] && ok.headers?.['X-Response-Time'], `${m} ${p}: X-Request-ID and X-Response-Time documented`);
      if (op.security.some((s: object) => 'ApiKeyHeader' in s)) {
        for (const h of ['X-RateLimit-Remaining', 'x-requests-remaining', 'x-requests-used', 'x-requests-last']) t.ok(ok.headers[h], `${m} ${p}: ${h}`);
        t.ok(op.responses['401'] && op.responses['429'], `${m} ${p}: 401 and 429 listed`);
        const r429 = doc.components.responses[op.responses['429'].$ref.split('/').pop()];
        t.ok(r429.content['application/json'] && r429.headers['Retry-After'], `${m} ${p}: 429 has the Error body and Retry-After`);
      }
      if (p.includes('{sport_key}')) {
        const r404 = op.responses['404'] && doc.components.responses[op.responses['404'].$ref.split('/').pop()];
        t.ok(r404?.content['application/json'].schema.allOf[1].properties.error_code.enum.includes('UNKNOWN_SPORT'), `${m} ${p}: 404 UNKNOWN_SPORT`);
      }
      if (p.startsWith('/v1/webhooks')) t.ok(op.responses['403'], `${m} ${p}: 403 TIER_REQUIRED`);
    }
    const media = (p: string, m = 'get') => Object.keys(doc.paths[p][m].responses['200'].content);
    t.same(media('/v1/historical/closing-lines.csv'), ['text/csv'], 'CSV export is text/csv');
    t.same(media('/metrics'), ['text/plain; version=0.0.4'], 'metrics are the Prometheus text format');
    for (const p of ['/status', '/v1/agent/billing', '/v1/agent/login', '/v1/agent/claim']) t.same(media(p), ['text/html'], `${p} is HTML`);
    for (const [p, m] of [['/v1/webhooks', 'post'], ['/v1/webhooks/{webhook_id}', 'patch'], ['/v1/ingest', 'post'], ['/v1/admin/keys', 'post'], ['/v1/verdict/prefs', 'post']]) {
      t.ok(doc.paths[p][m].requestBody, `${m} ${p} documents its request body`);
    }
    t.ok(doc.paths['/v1/ingest'].post.requestBody.content['application/msgpack'], 'ingest takes msgpack');
    t.equal(doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema.oneOf.length, 2, 'both webhook variants');
    t.ok(doc.paths['/v1/webhooks'].post.parameters.some((p: { name: string; in: string }) => p.name === 'Idempotency-Key' && p.in === 'header'),
      'the create documents its Idempotency-Key request header');
    t.ok(doc.paths['/v1/verdict'].get.responses['404'], 'verdict lists 404 EVENT_NOT_FOUND');
  });

  t.test('odds in every variant: dateFormat=unix, include=raw, verification, slim', async (t) => {
    const odds = '/v1/sports/{sport_key}/odds';
    for (const qs of ['', '&dateFormat=unix', '&include=raw', '&include=raw&dateFormat=unix', '&include=verification&dateFormat=unix',
      '&include=slim,verification', '&markets=h2h,totals&oddsFormat=american&dateFormat=unix']) {
      const r = await conforms(t, 'GET', odds, `/v1/sports/basketball_nba/odds?regions=us,eu${qs}`, { status: 200 });
      t.ok(((await r.json()) as unknown[]).length > 0, `odds${qs}: the fixture event is served`);
    }
    await conforms(t, 'GET', '/v1/try/{sport_key}/odds', '/v1/try/basketball_nba/odds?dateFormat=unix', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/sports/{sport_key}/events', '/v1/sports/basketball_nba/events?dateFormat=unix', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/sports/{sport_key}/events', '/v1/sports/basketball_nba/events', { status: 200, key: null });
  });

  t.test('props, flat and grouped, with the paging headers', async (t) => {
    await conforms(t, 'GET', '/v1/sports/{sport_key}/props', '/v1/sports/basketball_nba/props', { status: 200 });
    const g = await conforms(t, 'GET', '/v1/sports/{sport_key}/props', '/v1/sports/basketball_nba/props?grouped=true', { status: 200 });
    const body = (await g.json()) as { books: unknown[] }[];
    t.equal(body[0].books.length, 2, 'grouped: one entry with both books');
    await conforms(t, 'GET', '/v1/sports/{sport_key}/arbitrage', '/v1/sports/basketball_nba/arbitrage', { status: 200 });
    await conforms(t, 'GET', '/v1/inplay/arbs', '/v1/inplay/arbs?max_age_hours=24', { status: 200 });
    await conforms(t, 'GET', '/v1/inplay/arbs', '/v1/inplay/arbs?sports=nope', { status: 422 });
  });

  t.test('calculators: /v1/calc/*', async (t) => {
    for (const [path, url] of [
      ['odds', 'odds?price=-110'], ['devig', 'devig?prices=1.5,2.75'], ['devig', 'devig?prices=2.1,2.1'], ['devig', 'devig?prices=1.05,6,100'],
      ['arbitrage', 'arbitrage?prices=2.1,2.1&commission_pct=0,5'], ['kelly', 'kelly?price=2.1&fair_prob_pct=50&bankroll=100'],
      ['ev', 'ev?price=150&sharp=1.05,6,100&outcome=2&devig=worst_case'], ['middle', 'middle?over_line=220&over_price=1.91&under_line=222&under_price=1.91'],
      ['parlay', 'parlay?prices=-110,2.5&stake=10'],
    ]) await conforms(t, 'GET', `/v1/calc/${path}`, `/v1/calc/${url}`, { status: 200 });
    await conforms(t, 'GET', '/v1/calc/odds', '/v1/calc/odds?price=1', { status: 422 });
    await conforms(t, 'GET', '/v1/calc/odds', '/v1/calc/odds?price=2', { status: 401, key: null });
  });

  t.test('discovery: ETag and 304', async (t) => {
    const r = await conforms(t, 'GET', '/v1/sports', '/v1/sports', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/sports', '/v1/sports', { status: 304, key: null, headers: { 'if-none-match': r.headers.get('etag')! } });
  });

  t.test('calculators: verdict and its preferences', async (t) => {
    await conforms(t, 'GET', '/v1/verdict', '/v1/verdict?sport=basketball_nba&team=Celtics&side=home&book=draftkings&bankroll=100', { status: 200 });
    await conforms(t, 'GET', '/v1/verdict', '/v1/verdict?sport=basketball_nba&team=Nobody&side=home', { status: 404 });
    await conforms(t, 'GET', '/v1/verdict', '/v1/verdict?sport=not_a_sport&team=Celtics&side=home', { status: 422 });
    const leg = (team: string, side: string) => ({ sport: 'basketball_nba', market: 'h2h', team, side });
    await conforms(t, 'POST', '/v1/parlay/verdict', '/v1/parlay/verdict', { status: 404, body: { legs: [leg('Nobody', 'home'), leg('Celtics', 'away')] } });
    await conforms(t, 'GET', '/v1/verdict/prefs', '/v1/verdict/prefs', { status: 200 });
    await conforms(t, 'POST', '/v1/verdict/prefs', '/v1/verdict/prefs', { status: 200, body: { region: 'us', books: ['draftkings'] } });
    await conforms(t, 'POST', '/v1/verdict/prefs', '/v1/verdict/prefs', { status: 422, body: { region: 'mars' } });
    await conforms(t, 'POST', '/v1/verdict/prefs', '/v1/verdict/prefs', { status: 400, body: 'not json' });
  });

  t.test('status and meta', async (t) => {
    const st = await fetch(app.base + '/v1/status');
    t.ok([200, 503].includes(st.status), 'status answers');
    t.same(await c.check('GET', '/v1/status', st), [], '/v1/status conforms');
    await conforms(t, 'GET', '/v1/status/history', '/v1/status/history?window_s=3600', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/per-book-sla', '/v1/meta/per-book-sla', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/source-quality', '/v1/meta/source-quality', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/movers', '/v1/meta/movers?window_s=3600', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/api-info', '/v1/meta/api-info', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/webhooks', '/v1/meta/webhooks', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/errors', '/v1/meta/errors', { status: 200, key: null });
    await conforms(t, 'GET', '/metrics', '/metrics', { status: 200, key: null });
    await conforms(t, 'GET', '/status', '/status', { status: 200, key: null });
    await conforms(t, 'GET', '/openapi.json', '/openapi.json', { status: 200, key: null });
  });

  t.test('historical: coverage, matches, exports in JSON and CSV', async (t) => {
    await conforms(t, 'GET', '/v1/historical/coverage', '/v1/historical/coverage', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/historical/sports/{sport_key}/coverage', '/v1/historical/sports/basketball_nba/coverage', { status: 200 });
    const m = await conforms(t, 'GET', '/v1/historical/sports/{sport_key}/matches', '/v1/historical/sports/basketball_nba/matches', { status: 200 });
    t.ok(m.headers.get('x-coverage-hint'), 'X-Coverage-Hint with nothing held');
    await conforms(t, 'GET', '/v1/historical/sports/{sport_key}/matches', '/v1/historical/sports/nope/matches', { status: 404 });
    const day = new Date(now).toISOString().slice(0, 10);
    await conforms(t, 'GET', '/v1/historical/closing-lines.json', `/v1/historical/closing-lines.json?date=${day}`, { status: 200 });
    const csv = await conforms(t, 'GET', '/v1/historical/closing-lines.csv', `/v1/historical/closing-lines.csv?date=${day}`, { status: 200 });
    t.match(csv.headers.get('content-type'), /^text\/csv/, 'CSV is text/csv');
    await conforms(t, 'GET', '/v1/sports/{sport_key}/closing-lines', '/v1/sports/basketball_nba/closing-lines', { status: 200 });
  });

  t.test('account: usage, pricing, costs, quote, key check, keys', async (t) => {
    await conforms(t, 'GET', '/v1/usage', '/v1/usage', { status: 200 });
    await conforms(t, 'GET', '/v1/usage', '/v1/usage?by_endpoint=true', { status: 200 });
    await conforms(t, 'GET', '/v1/pricing', '/v1/pricing', { status: 200, key: null });
    await conforms(t, 'GET', '/v1/meta/credit-costs', '/v1/meta/credit-costs', { status: 200, key: null });
    await conforms(t, 'POST', '/v1/meta/quote', '/v1/meta/quote', { status: 200, key: null, body: { path: '/v1/sports/basketball_nba/odds', query: { markets: 'h2h,totals' } } });
    await conforms(t, 'POST', '/v1/meta/quote', '/v1/meta/quote', { status: 200, key: null, body: { path: '/v1/historical/closing-lines.json', query: 'date=2026-01-01' } });
    await conforms(t, 'GET', '/v1/meta/api-key-check', '/v1/meta/api-key-check', { status: 200 });
    await conforms(t, 'GET', '/v1/keys', '/v1/keys', { status: 200 });
    const made = await conforms(t, 'POST', '/v1/keys', '/v1/keys', { status: 201 });
    const id = ((await made.json()) as { id: number }).id;
    await conforms(t, 'DELETE', '/v1/keys/{key_id}', `/v1/keys/${id}`, { status: 200 });
    await conforms(t, 'DELETE', '/v1/keys/{key_id}', '/v1/keys/99999999', { status: 404 });
  });

  t.test('admin: keys and accounts', async (t) => {
    const made = await conforms(t, 'POST', '/v1/admin/keys', '/v1/admin/keys', { status: 201, key: null, headers: admin, body: { tier: 'pro', email: 'oa@example.com' } });
    const { account_id: acct, key_id: keyId } = (await made.json()) as { account_id: number; key_id: number };
    await conforms(t, 'POST', '/v1/admin/keys', '/v1/admin/keys', { status: 201, key: null, headers: admin, body: { account_id: acct } });
    await conforms(t, 'POST', '/v1/admin/keys', '/v1/admin/keys', { status: 404, key: null, headers: admin, body: { account_id: 99999999 } });
    await conforms(t, 'POST', '/v1/admin/keys', '/v1/admin/keys', { status: 409, key: null, headers: admin, body: { tier: 'pro', email: 'oa@example.com' } });
    await conforms(t, 'GET', '/v1/admin/accounts', '/v1/admin/accounts?limit=5', { status: 200, key: null, headers: admin });
    await conforms(t, 'GET', '/v1/admin/accounts/{account_id}', `/v1/admin/accounts/${acct}`, { status: 200, key: null, headers: admin });
    await conforms(t, 'GET', '/v1/admin/accounts/{account_id}', '/v1/admin/accounts/99999999', { status: 404, key: null, headers: admin });
    await conforms(t, 'PATCH', '/v1/admin/accounts/{account_id}', `/v1/admin/accounts/${acct}`, { status: 200, key: null, headers: admin, body: { payment_customer_id: 'cus_12345678901' } });
    await conforms(t, 'POST', '/v1/admin/accounts/{account_id}/credits', `/v1/admin/accounts/${acct}/credits`, { status: 200, key: null, headers: admin, body: { credits: 10 } });
    await conforms(t, 'DELETE', '/v1/admin/keys/{key_id}', `/v1/admin/keys/${keyId}`, { status: 200, key: null, headers: admin });
    await conforms(t, 'DELETE', '/v1/admin/keys/{key_id}', `/v1/admin/keys/${keyId + 1000}`, { status: 404, key: null, headers: admin });
    await conforms(t, 'GET', '/v1/admin/accounts', '/v1/admin/accounts', { status: 401, key: null });
  });

  t.test('agent: sign-up, claim, link pages', async (t) => {
    const up = await conforms(t, 'POST', '/v1/agent/signup', '/v1/agent/signup', { status: 201, key: null, body: { email: 'agent-oa@example.com', agent_id: 'oa-test' } });
    const claimUrl = ((await up.json()) as { claim_url: string }).claim_url;
    const token = new URL(claimUrl).searchParams.get('token')!;
    await conforms(t, 'POST', '/v1/agent/signup', '/v1/agent/signup', { status: 409, key: null, body: { email: 'agent-oa@example.com' } });
    await conforms(t, 'GET', '/v1/agent/claim', `/v1/agent/claim?token=${token}`, { status: 200, key: null });
    await conforms(t, 'POST', '/v1/agent/claim', '/v1/agent/claim', { status: 200, key: null, body: `token=${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await conforms(t, 'POST', '/v1/agent/claim', '/v1/agent/claim', { status: 400, key: null, body: { token } });
    await conforms(t, 'GET', '/v1/agent/login', `/v1/agent/login?token=${token}`, { status: 200, key: null });
    await conforms(t, 'GET', '/v1/agent/billing', '/v1/agent/billing?tier=pro', { status: 200, key: null });
    await conforms(t, 'POST', '/v1/agent/magic-link', '/v1/agent/magic-link', { status: 200, key: null, body: { email: 'agent-oa@example.com' } });
    await conforms(t, 'POST', '/v1/agent/checkout-link', '/v1/agent/checkout-link', { status: 200, key: null, body: { email: 'agent-oa@example.com', tier: 'pro' } });
  });

  t.test('webhooks: both variants, 403 TIER_REQUIRED, 404 WEBHOOK_NOT_FOUND', async (t) => {
    const a = await conforms(t, 'POST', '/v1/webhooks', '/v1/webhooks', { status: 201, body: { url: rx.url, events: ['arb_flagged'] } });
    const idA = ((await a.json()) as { id: number }).id;
    const b = await conforms(t, 'POST', '/v1/webhooks', '/v1/webhooks', { status: 201, body: { destination_url: rx.url, events: ['arbitrage.opened'], filters: { sport_keys: ['basketball_nba'] } } });
    const idB = ((await b.json()) as { id: string }).id;
    await conforms(t, 'GET', '/v1/webhooks', '/v1/webhooks', { status: 200 });
    await conforms(t, 'PATCH', '/v1/webhooks/{webhook_id}', `/v1/webhooks/${idA}`, { status: 200, body: { is_active: false } });
    await conforms(t, 'GET', '/v1/webhooks/{webhook_id}', `/v1/webhooks/${idB}`, { status: 200 });
    await conforms(t, 'GET', '/v1/webhooks/{webhook_id}/deliveries', `/v1/webhooks/${idB}/deliveries`, { status: 200 });
    await conforms(t, 'POST', '/v1/webhooks', '/v1/webhooks', { status: 400, body: { url: rx.url, events: ['no.such.event'] } });
    await conforms(t, 'POST', '/v1/webhooks', '/v1/webhooks', { status: 422, body: { url: rx.url, destination_url: rx.url, events: ['arb_flagged'] } });
    await conforms(t, 'GET', '/v1/webhooks/{webhook_id}', '/v1/webhooks/424242', { status: 404 });
    await conforms(t, 'GET', '/v1/webhooks', '/v1/webhooks', { status: 403, key: free });
    await conforms(t, 'DELETE', '/v1/webhooks/{webhook_id}', `/v1/webhooks/${idA}`, { status: 200 });
    await conforms(t, 'DELETE', '/v1/webhooks/{webhook_id}', `/v1/webhooks/${idB}`, { status: 200 });
  });

  t.test('errors: 401, 404 UNKNOWN_SPORT, 422, 415, 429 with Retry-After', async (t) => {
    await conforms(t, 'GET', '/v1/sports/{sport_key}/odds', '/v1/sports/basketball_nba/odds', { status: 401, key: null });
    await conforms(t, 'GET', '/v1/sports/{sport_key}/odds', '/v1/sports/basketball_nba/odds', { status: 401, key: 'not-a-key' });
    await conforms(t, 'GET', '/v1/sports/{sport_key}/odds', '/v1/sports/not_a_sport/odds', { status: 404 });
    await conforms(t, 'GET', '/v1/sports/{sport_key}/props', '/v1/sports/not_a_sport/props', { status: 404 });
    await conforms(t, 'GET', '/v1/sports/{sport_key}/odds', '/v1/sports/basketball_nba/odds?oddsFormat=roman', { status: 422 });
    await conforms(t, 'POST', '/v1/ingest', '/v1/ingest', { status: 415, key: null, headers: { ...admin, 'content-type': 'text/plain' }, body: 'x' });
    let last: Response | null = null;
    for (let i = 0; i < 70 && (last === null || last.status !== 429); i++) last = await fetch(app.base + '/v1/try/basketball_nba/odds');
    t.equal(last!.status, 429, '/v1/try is limited per address');
    t.ok(last!.headers.get('retry-after'), 'Retry-After');
    t.same(await c.check('GET', '/v1/try/{sport_key}/odds', last!), [], '429 conforms (Error body, Retry-After)');
  });
});
