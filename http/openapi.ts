// The OpenAPI 3.1 document, generated from the route table and the response schemas, so every served path and
// parameter appears and nothing else does.

import { ERRORS } from '../engine/errors.js';
import type { ParamSpec } from './params.js';
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
  query: { markets: 'CSV of market keys', bookmakers: 'CSV of book keys', eventIds: 'CSV', oddsFormat: 'decimal | american', format: 'json | msgpack', resume: '<epoch>:<seq>' },
  close_codes: { 4001: 'missing, invalid or revoked key', 4003: 'tier below business', 4400: 'bad parameter', 4404: 'unknown sport key', 4008: 'too far behind (backpressure); reconnect with resume', 4002: 'no frame or pong from the client for 60 s' },
  frames: {
    common: 'channel, epoch (changes when the server restarts), seq (per channel, +1 per delta), prev_seq, pt (publish time, ms)',
    snapshot: 'events in the odds shape (all markets; props as outcomes with description); seg start|mid|end above a size bound; reason on resume or subscribe',
    delta: 'changes [{event_id, market, point, player, outcome, book, price, last_update, removed?}]; crc {event_id: CRC32} for sockets without filters; con: true when merged after backpressure',
    heartbeat: 'every 5 s: quiet_seconds, upstream {worst_sla, counts {ok, degraded, breach, stale}}',
    error: 'code, message (a bad client message)',
  },
  client_messages: '{"op": "subscribe", "markets"?, "bookmakers"?, "eventIds"?, "oddsFormat"?} (answered by a snapshot with reason subscribed), {"op": "ping"}',
  crc_canonical_string: 'one line per quote of the event, book|market|player|point|outcome|price (player and point empty when none; point as sent for that outcome; price the decimal price as JavaScript prints it); lines sorted by code point, joined with a newline; CRC-32 (zlib) of the UTF-8 bytes, unsigned',
} as const;

function paramSchema(p: ParamSpec): object {
  const base: Record<string, unknown> = {};
  switch (p.type) {
    case 'integer':
    case 'number':
      base.type = p.type;
      if (p.min !== undefined) base.minimum = p.min;
      if (p.max !== undefined) base.maximum = p.max;
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
      base.description = p.values ? `comma-separated; each one of ${p.values.length > 20 ? 'the catalogue keys' : p.values.join(', ')}` : 'comma-separated';
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
  if (p.default !== undefined) base.default = p.default;
  return base;
}

const ERROR_RESPONSES: Record<string, string> = {
  '401': 'MISSING_KEY, INVALID_KEY or OUT_OF_USAGE_CREDITS',
  '422': 'Parameter validation failed (detail lists each parameter)',
  '429': 'EXCEEDED_FREQ_LIMIT (free tier); Retry-After is set',
};

export function openapiDocument(routes: readonly Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const item = (paths[r.path] ??= {});
    const pathParams = [...r.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
      name: m[1], in: 'path', required: true, schema: { type: 'string' },
    }));
    const responses: Record<string, object> = {
      [String(r.okStatus ?? 200)]: { description: 'OK', content: { 'application/json': { schema: r.response ?? {} } } },
      default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    };
    if (r.auth !== 'none') responses['401'] = { description: ERROR_RESPONSES['401'], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    if (r.params !== undefined && r.params.length > 0) responses['422'] = { description: ERROR_RESPONSES['422'], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    if (r.auth === 'key') responses['429'] = { description: ERROR_RESPONSES['429'] };
    item[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      security: r.auth === 'none' ? [] : r.auth === 'admin' ? [{ AdminBearer: [] }] : [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }, { Bearer: [] }],
      parameters: [
        ...pathParams,
        ...(r.params ?? []).flatMap((p) => [
          { name: p.name, in: 'query', required: p.required === true, description: p.description, schema: paramSchema(p) },
          // an alias is a parameter of its own to a client (SPEC lists min_edge_pct beside minEdge)
          ...(p.alias === undefined ? [] : [{ name: p.alias, in: 'query', required: false, description: `Alias for ${p.name}; given with it, the two must agree`, schema: paramSchema(p) }]),
        ]),
      ],
      ...(r.requestBody === undefined ? {} : { requestBody: { required: true, content: { 'application/json': { schema: r.requestBody } } } }),
      responses,
    };
  }
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
      schemas: { Error: ErrorSchema },
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
        Bearer: { type: 'http', scheme: 'bearer' },
        AdminBearer: { type: 'http', scheme: 'bearer', description: 'the admin key (ADMIN_KEY)' },
      },
    },
    'x-error-codes': Object.values(ERRORS).map((e) => ({ code: e.code, status: e.status, message: e.message })),
    'x-websocket': WEBSOCKET_DOC,
  };
}
