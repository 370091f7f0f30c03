// The OpenAPI 3.1 document, generated from the route table and the response schemas, so every served path and
// parameter appears and nothing else does.

import { ERRORS, type ErrorCode } from '../engine/errors.js';
import { maxLength, type ParamSpec } from './params.js';
import type { Route } from './router.js';
import { ErrorSchema } from './schemas.js';
import { EVENT_TYPES } from '../engine/webhook-catalogue.js';

const header = (name: string, schema: object, description: string, required = true) => ({ name, in: 'header', required, schema, description });
const str = { type: 'string' };
const REPLAY_HEADER = header('X-Service-Replay', { type: 'integer', minimum: 1 },
  'only on replays (POST /v1/webhooks/{id}/replay): the ordinal of the replay among the delivery\'s replays', false);
/** the headers of a delivery per variant (GET /v1/meta/webhooks says the same in words) */
const WEBHOOK_HEADERS = {
  A: [
    header('X-Service-Signature', str, 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">'),
    header('X-Service-Event-Type', str, 'event type'),
    header('X-Service-Webhook-Id', { type: 'integer' }, 'subscription id'),
    header('X-Service-Delivery-Attempt', { type: 'integer', minimum: 1, maximum: 3 }, 'the attempt\'s place in its retry schedule; a replay is attempt 1 of a schedule of its own'),
    header('X-Service-Delivery-Id', str, 'the same on every attempt and replay of one delivery: dedupe on it'),
    REPLAY_HEADER,
  ],
  B: [
    header('X-Service-Signature', str, 'hex HMAC-SHA256 of "<timestamp>.<raw body>"'),
    header('X-Service-Timestamp', { type: 'integer' }, 'Unix seconds'),
    header('X-Service-Event', str, 'event type'),
    header('X-Service-Delivery-Id', str, 'the same on every attempt and replay of one delivery: dedupe on it'),
    REPLAY_HEADER,
  ],
};

/** OpenAPI 3.1 `webhooks`: one outgoing POST per event type, with its headers and body (Variant A envelope or
 *  Variant B json). */
function webhookDoc(): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [type, def] of Object.entries(EVENT_TYPES)) {
    const envelope = def.variant === 'A'
      ? { type: 'object', required: ['id', 'event_type', 'timestamp_ms', 'data'], properties: { id: { type: 'string' }, event_type: { const: type }, timestamp_ms: { type: 'integer' }, data: def.data } }
      : { type: 'object', required: ['id', 'event', 'timestamp', 'data'], properties: { id: { type: 'string' }, event: { const: type }, timestamp: { type: 'integer' }, data: def.data } };
    out[type] = {
      post: {
        summary: `Variant ${def.variant}: ${def.fires}`,
        description: 'Signed with X-Service-Signature; see GET /v1/meta/webhooks',
        parameters: WEBHOOK_HEADERS[def.variant],
        requestBody: { content: { 'application/json': { schema: envelope } } },
        responses: { '200': { description: 'any 2xx acknowledges the delivery' } },
      },
    };
  }
  return out;
}

export const API_VERSION = '3.2.0';

/** The WebSocket streams, which OpenAPI cannot describe as paths. */
export const WEBSOCKET_DOC = {
  paths: ['/ws/odds/{sport_key}', '/ws/live/{sport_key}', '/v1/ws/odds-fast/{sport_key}', '/v4/ws/odds/{sport_key}', '/v4/ws/live/{sport_key}', '/v4/ws/odds-fast/{sport_key}'],
  auth: 'apiKey query parameter (or X-API-Key, or Authorization: Bearer); business tier and above',
  query: { markets: 'CSV of market keys', bookmakers: 'CSV of book keys (overrides regions)', regions: 'CSV of regions: their books, as on /odds', eventIds: 'CSV', oddsFormat: 'decimal | american', format: 'json | msgpack', resume: '<epoch>:<seq>' },
  close_codes: { 4001: 'missing, invalid or revoked key', 4003: 'tier below business (also when an open stream\'s account moves below it)', 4400: 'bad parameter', 4404: 'unknown sport key', 4029: 'the account holds as many open streams as its tier allows (max_streams in GET /v1/pricing; per node)', 4008: 'too far behind (backpressure); reconnect with resume. A client that reads nothing is dropped instead (1006, no close frame), as is one whose PING frames\' PONGs pile up', 4002: 'no frame or pong from the client for 60 s' },
  frames: {
    common: 'channel, epoch (changes when the server restarts; names the channel: kind, sport and tier window), seq (per channel, +1 per delta), prev_seq, pt (publish time, ms)',
    snapshot: 'events in the odds shape (all markets; props as outcomes with description); seg start|mid|end above a size bound; reason on resume or subscribe',
    delta: 'changes [{event_id, market, point, player, outcome, book, price, last_update, removed?}]; events? [{id, sport_key, sport_title, commence_time, home_team, away_team}]: heads of events the channel has not announced yet or whose start or teams changed; crc {event_id: CRC32} for sockets without filters (none on a catch-up or resume for an event with changes waiting in a merge window); con: true when merged after backpressure',
    heartbeat: 'every 5 s: quiet_seconds, upstream {worst_sla, counts {ok, degraded, breach, stale}}',
    error: 'code, message (a bad client message)',
  },
  client_messages: '{"op": "subscribe", "markets"?, "bookmakers"?, "regions"?, "eventIds"?, "oddsFormat"?} (answered by a snapshot with reason subscribed), {"op": "ping"}',
  crc_canonical_string: 'one line per quote of the event, book|market|player|point|outcome|price (player and point empty when none; point as sent for that outcome; price the decimal price as JavaScript prints it); lines sorted by code point, joined with a newline; CRC-32 (zlib) of the UTF-8 bytes, unsigned',
} as const;

function paramSchema(p: ParamSpec): object {
  const base: Record<string, unknown> = {};
  switch (p.type) {
    case 'integer':
    case 'number':
      base.type = p.type;
      if (p.min !== undefined) base[p.exclusive === true ? 'exclusiveMinimum' : 'minimum'] = p.min;
      if (p.max !== undefined) base[p.exclusive === true ? 'exclusiveMaximum' : 'maximum'] = p.max;
      break;
    case 'boolean':
      base.type = 'boolean';
      break;
    case 'enum':
      base.type = 'string';
      base.enum = p.values;
      break;
    case 'csv':
      base.type = 'string';
      base.description = (p.values ? `comma-separated; each one of ${p.values.length > 20 ? 'the catalogue keys' : p.values.join(', ')}` : 'comma-separated')
        + (p.maxItems === undefined ? '' : `; at most ${p.maxItems} values`);
      break;
    case 'datetime':
      base.type = 'string';
      base.format = 'date-time';
      break;
    case 'date':
      base.type = 'string';
      base.format = 'date';
      break;
    default:
      base.type = 'string';
  }
  if (base.type === 'string' && base.enum === undefined && base.format === undefined) base.maxLength = maxLength(p);
  if (p.default !== undefined) base.default = p.default;
  return base;
}

const hdr = (description: string, schema: object = str) => ({ description, schema });
const int = { type: 'integer' };

/** Every response header the service sends, as components.headers: a response names the ones it carries. */
export const RESPONSE_HEADERS: Record<string, { description: string; schema: object }> = {
  'X-Request-ID': hdr('32 hex characters naming this request (also request_id of an error body)', { type: 'string', pattern: '^[0-9a-f]{32}$' }),
  'X-Response-Time': hdr('milliseconds the server took (to the first byte of a streamed body)', { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' }),
  'X-Data-Source': hdr('where the prices come from: simulated, the connector\'s name; absent with no feed'),
  'X-Ignored-Params': hdr('query parameters this endpoint does not know and did not read (a misspelt filter filters nothing), comma-separated; absent when none'),
  'X-RateLimit-Remaining': hdr('credits left in the period', int),
  'x-requests-remaining': hdr('credits left in the period (The Odds API v4 name)', int),
  'x-requests-used': hdr('credits used in the period', int),
  'x-requests-last': hdr('credits this call cost', int),
  'Retry-After': hdr('seconds to wait before retrying', int),
  ETag: hdr('entity tag of the body: send it back as If-None-Match for a 304'),
  'Cache-Control': hdr('how long the body may be cached'),
  'x-result-page-size': hdr('entries on this page', int),
  'x-result-row-count': hdr('rows on this page (grouped entries hold several rows)', int),
  'x-result-limit': hdr('the limit applied', int),
  'x-result-offset': hdr('the offset applied', int),
  'x-result-has-more': hdr('true when rows follow this page', { type: 'string', enum: ['true', 'false'] }),
  'x-result-total-available': hdr('rows over all pages', int),
  'x-next-offset': hdr('the offset of the next page; only when x-result-has-more is true', int),
  'X-Export-Rows': hdr('rows in the export', int),
  'X-Export-Credits': hdr('credits the export costs', int),
  'X-Export-Rate': hdr('how the export is priced'),
  'X-Coverage-Hint': hdr('the game days held, when the range asked reaches beyond them'),
  'X-Status-Cache': hdr('fresh, stale or computed: how the cached status answered'),
  Age: hdr('seconds since the body was computed', int),
  'Idempotent-Replayed': hdr('true when the answer replays an earlier request of the same Idempotency-Key', { type: 'string', enum: ['true'] }),
  'Content-Disposition': hdr('attachment with a file name'),
};

/** headers of every response (DESIGN.md section 3); X-Data-Source only when a feed is configured */
const COMMON_HEADERS: readonly [string, boolean][] = [['X-Request-ID', true], ['X-Response-Time', true], ['X-Data-Source', false], ['X-Ignored-Params', false]];
/** the key's balance, on every response to a key (its priced calls among them) */
const USAGE_HEADERS = ['X-RateLimit-Remaining', 'x-requests-remaining', 'x-requests-used', 'x-requests-last'];
/** a page of rows (webhook deliveries); analytics add the total, props the row count */
export const PAGE_HEADERS = ['x-result-page-size', 'x-result-limit', 'x-result-offset', 'x-result-has-more', 'x-next-offset'];
/** headers sent only sometimes: listed, not required */
const OPTIONAL_HEADERS = new Set(['X-Data-Source', 'X-Ignored-Params', 'x-next-offset', 'X-Coverage-Hint', 'Age', 'Idempotent-Replayed', 'Content-Disposition']);

function headerRefs(names: readonly string[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const n of names) out[n] = { $ref: `#/components/headers/${n}` };
  return out;
}

/** The error codes a route can answer with, from its declaration: auth kind, tier, a {sport_key} in the path,
 *  parameters, a body, and the codes its handler names. */
export function routeErrors(r: Route): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  if (r.auth === 'optional') codes.add('INVALID_KEY').add('EXCEEDED_FREQ_LIMIT');
  if (r.auth === 'key') {
    codes.add('MISSING_KEY').add('INVALID_KEY').add('EXCEEDED_FREQ_LIMIT');
    if (r.cost !== undefined || r.streamed === true) codes.add('OUT_OF_USAGE_CREDITS');
  }
  if (r.auth === 'admin') codes.add('ADMIN_KEY_REQUIRED');
  if (r.tier !== undefined) codes.add('TIER_REQUIRED');
  if (r.path.includes('{sport_key}')) codes.add('UNKNOWN_SPORT');
  if (r.params !== undefined && r.params.length > 0) codes.add('VALIDATION_ERROR');
  if (r.maxBody !== undefined) codes.add('MALFORMED_BODY').add('BODY_TOO_LARGE').add('VALIDATION_ERROR').add('UNSUPPORTED_MEDIA_TYPE');
  for (const c of r.errors ?? []) codes.add(c);
  return [...codes];
}

/** Adds additionalProperties: false to every object schema that lists its properties and says nothing of others,
 *  without touching the input (the serialisers compile the same objects). Right for the fast-json-stringify
 *  schemas, which never write a field they do not list, and the hand-written ones say all they send. */
export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const src = schema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...src };
  if (src.properties !== undefined) {
    out.properties = Object.fromEntries(Object.entries(src.properties as object).map(([k, v]) => [k, closed(v)]));
    if (src.additionalProperties === undefined) out.additionalProperties = false;
  }
  if (src.items !== undefined) out.items = closed(src.items);
  for (const k of ['oneOf', 'anyOf'] as const) if (src[k] !== undefined) out[k] = closed(src[k]);
  if (typeof src.additionalProperties === 'object') out.additionalProperties = closed(src.additionalProperties);
  return out;
}

/** A media type without its charset, for a content map key ("text/csv; charset=utf-8" is text/csv; the Prometheus
 *  exposition keeps its version, which names the format). */
function mediaKey(type: string): string {
  return type.replace(/;\s*charset=[^;]*/i, '').trim();
}

export function openapiDocument(routes: readonly Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  const errorResponses: Record<string, object> = {
    Error: { description: 'Any other error (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED, 500 INTERNAL_ERROR; 503 SERVICE_UNAVAILABLE with Retry-After when the database is unreachable or does not answer within DATABASE_TIMEOUT_MS)', headers: headerRefs(['X-Request-ID', 'X-Response-Time']), content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  };
  const errorResponse = (status: number, codes: ErrorCode[]): object => {
    const name = `${status}_${codes.join('_')}`;
    if (errorResponses[name] === undefined) {
      const headers = headerRefs(COMMON_HEADERS.map(([n]) => n));
      if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
      errorResponses[name] = {
        description: codes.map((c) => `${c}: ${ERRORS[c].message}`).join('; '),
        headers,
        content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error_code: { enum: codes } } }] } } },
      };
    }
    return { $ref: `#/components/responses/${name}` };
  };
  for (const r of routes) {
    const item = (paths[r.path] ??= {});
    const pathParams = [...r.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
      name: m[1], in: 'path', required: true, schema: { type: 'string' },
    }));
    const okHeaders = [...COMMON_HEADERS.map(([n]) => n), ...(r.auth === 'key' ? USAGE_HEADERS : []), ...(r.responseHeaders ?? [])];
    const media = r.contentType ?? 'application/json';
    const okSchema = media === 'application/json' ? closed(r.response ?? {}) : { type: 'string' };
    const okHeaderDefs: Record<string, object> = headerRefs(okHeaders);
    // a free route that takes a key: the balance comes when one is given
    if (r.auth === 'optional') for (const n of USAGE_HEADERS) okHeaderDefs[n] = { ...RESPONSE_HEADERS[n], description: `${RESPONSE_HEADERS[n].description}; with a key`, required: false };
    const responses: Record<string, object> = {
      [String(r.okStatus ?? 200)]: { description: 'OK', headers: okHeaderDefs, content: { [mediaKey(media)]: { schema: okSchema } } },
    };
    if (r.degradedStatus !== undefined) {
      responses[String(r.degradedStatus)] = {
        description: 'Degraded: the same body, with status "degraded" and its reasons', headers: headerRefs(okHeaders), content: { [mediaKey(media)]: { schema: okSchema } },
      };
    }
    if (r.responseHeaders?.includes('ETag')) {
      responses['304'] = { description: 'Not Modified: If-None-Match named the current ETag', headers: headerRefs([...COMMON_HEADERS.map(([n]) => n), 'ETag']) };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of routeErrors(r)) {
      const st = ERRORS[c].status;
      byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
    }
    for (const [st, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) responses[String(st)] = errorResponse(st, codes);
    responses.default = { $ref: '#/components/responses/Error' };
    item[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      security: r.auth === 'none' ? [] : r.auth === 'admin' ? [{ AdminBearer: [] }]
        : [...(r.auth === 'optional' ? [{}] : []), { ApiKeyHeader: [] }, { ApiKeyQuery: [] }, { Bearer: [] }],
      parameters: [
        ...pathParams,
        ...(r.requestHeaders ?? []).map((h) => ({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })),
        ...(r.params ?? []).flatMap((p) => [
          { name: p.name, in: 'query', required: p.required === true, description: p.description, schema: paramSchema(p) },
          // an alias is a parameter of its own to a client (SPEC lists min_edge_pct beside minEdge)
          ...(p.alias === undefined ? [] : [{ name: p.alias, in: 'query', required: false, description: `Alias for ${p.name}; given with it, the two must agree`, schema: paramSchema(p) }]),
        ]),
      ],
      ...(r.requestBody === undefined ? {} : {
        requestBody: { required: true, content: Object.fromEntries((r.requestTypes ?? ['application/json']).map((t) => [t, { schema: r.requestBody }])) },
      }),
      responses,
    };
  }
  const headers: Record<string, object> = {};
  for (const [n, h] of Object.entries(RESPONSE_HEADERS)) headers[n] = { ...h, required: !OPTIONAL_HEADERS.has(n) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'linewire',
      version: API_VERSION,
      description: 'Self-hosted odds aggregation: REST superset of The Odds API v4. Every /v1 path is also served under /v4.',
    },
    paths,
    webhooks: webhookDoc(),
    components: {
      schemas: { Error: closed(ErrorSchema) },
      responses: errorResponses,
      headers,
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey', description: 'api_key is accepted as the same parameter (The Odds API\'s sample code sends it)' },
        Bearer: { type: 'http', scheme: 'bearer' },
        AdminBearer: { type: 'http', scheme: 'bearer', description: 'the admin key (ADMIN_KEY)' },
      },
    },
    'x-error-codes': Object.values(ERRORS).map((e) => ({ code: e.code, status: e.status, message: e.message })),
    'x-websocket': WEBSOCKET_DOC,
  };
}
