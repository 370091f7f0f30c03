// Webhook management (issue 6): /v1/webhooks and its sub-resources, and GET /v1/meta/webhooks. Tier pro and
// above; a subscription belongs to its owner (the account of the key that created it, `ownerOf`) and is a 404 to
// everyone else. The create body chooses the variant: `url` is Variant A, `destination_url` Variant B (DESIGN.md).

import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { resolveSportKeys } from '../../engine/catalogue.js';
import { ApiError } from '../../engine/errors.js';
import { checkDestination, isForbiddenAddress } from '../../engine/webhook-address.js';
import {
  ATTEMPT_TIMEOUT_MS, CREDITS_PER_DELIVERY, DISABLE_AFTER, EVENT_TYPES, FORMATS, META_VERSION, SYNC_LIMITS, USER_AGENT, WEBHOOK_TIERS,
  isEventType, typesOf, type Format, type Variant,
} from '../../engine/webhook-catalogue.js';
import { REPLAY_TOLERANCE_S, newPublicId, secretA, secretB } from '../../engine/webhook-sign.js';
import type { KeyState } from '../accounts.js';
import { invalidField, jsonObject } from '../body.js';
import { PAGE_HEADERS } from '../openapi.js';
import type { Reply, RequestCtx, Route } from '../router.js';
import type { Services } from '../services.js';
import {
  deleteWebhook, expireIdempotency, findIdempotent, insertWebhook, listDeliveries, updateWebhook, type DeliveryRow, type WebhookRow,
} from '../../sql/webhooks.js';
import type { Sub, SyncRefused, WebhookService } from '../../workers/webhook-service.js';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const MAX_EVENTS = 32;
const MAX_SPORTS = 100;
const MAX_DELIVERY_OFFSET = 1_000_000;

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const strArr = { type: 'array', items: str } as const;
const nullable = (s: object) => ({ anyOf: [s, { type: 'null' }] });

export const WebhookASchema = {
  type: 'object',
  description: 'Variant A subscription (created with `url`); `secret` only in the answers of create and rotate-secret',
  required: ['id', 'url', 'events', 'sport_filter', 'is_active', 'created_at'],
  properties: {
    id: { type: 'integer' }, url: str, events: strArr, sport_filter: nullable(strArr), is_active: bool, created_at: str,
    secret: str, consecutive_failures: { type: 'integer' }, disabled_at: nullable(str),
  },
} as const;

export const WebhookBSchema = {
  type: 'object',
  description: 'Variant B subscription (created with `destination_url`)',
  // signing_secret only from create and rotate-secret, as Variant A's secret
  required: ['id', 'destination_url', 'events', 'filters', 'format', 'is_active', 'created_at'],
  properties: {
    id: str, destination_url: str, events: strArr,
    filters: { type: 'object', properties: { sport_keys: nullable(strArr), min_edge_pct: nullable({ type: 'number' }) } },
    format: { type: 'string', enum: FORMATS }, signing_secret: str, is_active: bool, created_at: str,
    consecutive_failures: { type: 'integer' }, disabled_at: nullable(str),
  },
} as const;

const WebhookSchema = { oneOf: [WebhookASchema, WebhookBSchema] };

const sportKeysBody = { type: ['array', 'null'], items: str, minItems: 1, maxItems: MAX_SPORTS, description: 'sport keys (umbrella keys expand); null or omitted: every sport' } as const;
const eventsBody = { type: 'array', items: str, minItems: 1, maxItems: MAX_EVENTS, description: 'event types of the variant (GET /v1/meta/webhooks)' } as const;
const filtersBody = {
  type: ['object', 'null'], additionalProperties: false,
  description: 'null or omitted at creation: no filter; on PATCH a filter left out keeps its value, null (the object or a filter) clears',
  properties: { sport_keys: sportKeysBody, min_edge_pct: { type: ['number', 'null'], minimum: 0, maximum: 100 } },
} as const;
const destinationUrl = (description: string) => ({ type: 'string', format: 'uri', description });
const A_FIELDS = { url: destinationUrl('destination (Variant A): https, and never a private address unless the server allows them'), events: eventsBody, sport_filter: sportKeysBody } as const;
const B_FIELDS = { destination_url: destinationUrl('destination (Variant B): https, and never a private address unless the server allows them'), events: eventsBody, filters: filtersBody, format: { type: 'string', enum: FORMATS, default: 'json' } } as const;

/** POST /v1/webhooks: `url` makes a Variant A subscription, `destination_url` a Variant B one; other fields are 422 */
export const WebhookCreateBody = {
  oneOf: [
    { type: 'object', title: 'Variant A', required: ['url', 'events'], additionalProperties: false, properties: A_FIELDS },
    { type: 'object', title: 'Variant B', required: ['destination_url', 'events'], additionalProperties: false, properties: B_FIELDS },
  ],
} as const;

/** PATCH /v1/webhooks/{webhook_id}: at least one field of the subscription's variant */
export const WebhookPatchBody = {
  anyOf: [
    { type: 'object', title: 'Variant A', minProperties: 1, additionalProperties: false, properties: { ...A_FIELDS, is_active: bool } },
    { type: 'object', title: 'Variant B', minProperties: 1, additionalProperties: false, properties: { ...B_FIELDS, is_active: bool } },
  ],
} as const;

const obj = (properties: Record<string, object>) => ({ type: 'object', required: Object.keys(properties), properties, additionalProperties: false });
const variantMeta = (createWith: string, extra: Record<string, object>) => obj({
  create_with: { const: createWith }, fields: strArr,
  event_types: { type: 'object', description: 'per event type', additionalProperties: obj({ fires: str, data: { type: 'object', description: 'JSON schema of the event data' } }) },
  ...extra,
  headers: { type: 'object', additionalProperties: str },
  filters: str,
});
/** GET /v1/meta/webhooks (webhookMeta) */
export const WebhookMetaSchema = obj({
  version: str,
  variants: obj({
    A: variantMeta('url', { envelope: { type: 'object', additionalProperties: str } }),
    B: variantMeta('destination_url', { formats: { type: 'object', additionalProperties: str } }),
  }),
  replay_tolerance_s: { type: 'integer' },
  delivery: obj({
    attempts: { type: 'integer' }, delays_ms: { type: 'array', items: { type: 'integer' } }, timeout_ms: { type: 'integer' }, success: str,
    auto_disable: str, guarantee: str, replay: str, checks: str, statuses: strArr, credits_per_delivered_event: { type: 'integer' },
  }),
  limits: { type: 'object', description: 'per tier', additionalProperties: obj({ hooks: { type: 'integer' }, perMinute: { type: 'integer' } }) },
  rate: str,
  destinations: str,
});

const AttemptSchema = {
  type: 'object',
  properties: {
    number: { type: 'integer' }, attempted_at: str, status_code: nullable({ type: 'integer' }), duration_ms: { type: 'number' }, error: nullable(str),
    replay: { ...bool, description: 'made by POST .../replay (numbered after the schedule\'s attempts; sent as attempt 1 with X-Service-Replay)' },
  },
} as const;

export const DeliverySchema = {
  type: 'object',
  required: ['id', 'event_id', 'event_type', 'status', 'created_at', 'attempts'],
  properties: {
    id: str, event_id: str, event_type: str,
    status: { type: 'string', enum: ['pending', 'delivered', 'retrying', 'failed', 'rate_limited', 'out_of_credits'] },
    created_at: str, next_attempt_at: nullable(str), delivered_at: nullable(str),
    attempts: { type: 'array', items: AttemptSchema },
  },
} as const;

const SyncSchema = {
  type: 'object',
  properties: {
    delivered: bool, status_code: nullable({ type: 'integer' }), delivery_id: str,
    attempt: { type: 'integer', description: 'the attempt\'s number in the delivery\'s record (GET .../deliveries)' },
    replay: { type: 'integer', description: 'replays: the ordinal among the delivery\'s replays (the X-Service-Replay header); 0 for a test' },
    error: nullable(str),
  },
} as const;

/** The machine-readable description (GET /v1/meta/webhooks, version 0.1). */
export function webhookMeta(retryDelaysMs: readonly number[]): object {
  const types = (v: Variant) => Object.fromEntries(
    Object.entries(EVENT_TYPES).filter(([, d]) => d.variant === v).map(([k, d]) => [k, { fires: d.fires, data: d.data }]),
  );
  return {
    version: META_VERSION,
    variants: {
      A: {
        create_with: 'url',
        fields: ['id (integer)', 'url', 'events', 'sport_filter', 'secret (create and rotate-secret only, whsec_ + 43 base64url)', 'is_active', 'created_at'],
        event_types: types('A'),
        envelope: { id: 'evt_ id of the event', event_type: 'string', timestamp_ms: 'Unix milliseconds', data: 'per event type' },
        headers: {
          'Content-Type': 'application/json', 'User-Agent': USER_AGENT,
          'X-Service-Signature': 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>',
          'X-Service-Event-Type': 'event type', 'X-Service-Webhook-Id': 'subscription id (integer)',
          'X-Service-Delivery-Attempt': 'the attempt\'s place in its retry schedule, 1 to 3; a replay is attempt 1 of a schedule of its own (see X-Service-Replay)',
          'X-Service-Delivery-Id': 'dlv_ id, the same on every attempt and replay of one delivery',
          'X-Service-Replay': 'only on replays (POST .../replay): the replay\'s ordinal among the delivery\'s replays, 1, 2, ...',
        },
        filters: 'sport_filter: sport keys (umbrella keys expand to their leagues); events without a sport pass',
      },
      B: {
        create_with: 'destination_url',
        fields: ['id (opaque string)', 'destination_url', 'events', 'filters {sport_keys, min_edge_pct}', 'format', 'signing_secret', 'is_active', 'created_at'],
        event_types: types('B'),
        formats: {
          json: '{id, event, timestamp (Unix seconds), data}',
          slack: 'team-chat message: {text, attachments: [{color, title, text, fields: [{title, value, short}], footer, ts}]}',
          discord: 'community-chat message: {content, embeds: [{title, description, color, fields: [{name, value, inline}], footer: {text}, timestamp}]}',
        },
        headers: {
          'Content-Type': 'application/json', 'User-Agent': USER_AGENT,
          'X-Service-Signature': 'hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with signing_secret',
          'X-Service-Timestamp': 'Unix seconds', 'X-Service-Event': 'event type',
          'X-Service-Delivery-Id': 'dlv_ id, unique per delivery, the same on retries and replays: dedupe on it',
          'X-Service-Replay': 'only on replays (POST .../replay): the replay\'s ordinal among the delivery\'s replays, 1, 2, ...',
        },
        filters: 'filters.sport_keys as sport_filter; filters.min_edge_pct applies to arbitrage.* (default 0) and ev.flagged (default 2)',
      },
    },
    replay_tolerance_s: REPLAY_TOLERANCE_S,
    delivery: {
      attempts: retryDelaysMs.length + 1,
      delays_ms: retryDelaysMs,
      timeout_ms: ATTEMPT_TIMEOUT_MS,
      success: 'any 2xx; anything else, no answer or a timeout fails the attempt; redirects are not followed',
      auto_disable: `${DISABLE_AFTER} consecutive total failures set is_active false and record an e-mail to the owner`,
      guarantee: 'at-least-once: each event is written to the outbox before any attempt; after a restart pending attempts are made with the same delivery id',
      replay: 'POST .../replay re-sends a final delivery (same delivery id and body) as a schedule of its own of one attempt: X-Service-Delivery-Attempt 1 and X-Service-Replay n (its ordinal); not retried; recorded after the schedule\'s attempts with replay true',
      checks: 'source_quality.* and parser.degraded compare against state kept in PostgreSQL and written in the same transaction as their outbox rows: a transition is announced once, and one detected but not written before a kill (or reached while the process was down) is announced after the restart',
      statuses: ['pending', 'retrying', 'delivered', 'failed', 'rate_limited', 'out_of_credits'],
      credits_per_delivered_event: CREDITS_PER_DELIVERY,
    },
    limits: WEBHOOK_TIERS,
    rate: 'events past a subscription\'s per-minute limit are deferred to the next minutes (up to 5); past that recorded as rate_limited',
    destinations: 'https only; never a loopback, private, link-local, CGNAT, multicast, reserved or metadata address (checked at creation and after DNS resolution at every attempt)',
  };
}

/** The owner of subscriptions made with this key: its account, so every key of the account sees them. */
function ownerOf(key: KeyState): number {
  return key.account.id;
}

function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}

function subJson(row: WebhookRow, withSecret: boolean): Record<string, unknown> {
  if (row.variant === 'A') {
    const o: Record<string, unknown> = {
      id: row.pk, url: row.url, events: row.events, sport_filter: row.sportKeys, is_active: row.isActive,
      created_at: row.createdAt.toISOString(), consecutive_failures: row.consecutiveFailures, disabled_at: iso(row.disabledAt),
    };
    if (withSecret) o.secret = row.secret;
    return o;
  }
  // SPEC: the secret is returned once ("save it"): every read of the subscription showed it to any key of the account
  const o: Record<string, unknown> = {
    id: row.publicId, destination_url: row.url, events: row.events,
    filters: { sport_keys: row.sportKeys, min_edge_pct: row.minEdgePct }, format: row.format,
    is_active: row.isActive, created_at: row.createdAt.toISOString(), consecutive_failures: row.consecutiveFailures,
    disabled_at: iso(row.disabledAt),
  };
  if (withSecret) o.signing_secret = row.secret;
  return o;
}

function deliveryJson(d: DeliveryRow): Record<string, unknown> {
  return {
    id: d.deliveryId, event_id: d.eventId, event_type: d.eventType, status: d.status, created_at: d.createdAt.toISOString(),
    next_attempt_at: iso(d.nextAttemptAt), delivered_at: iso(d.deliveredAt),
    attempts: d.tries.map((t) => ({ ...t, attempted_at: new Date(t.attempted_at).toISOString() })),
  };
}

function parseEvents(variant: Variant, raw: unknown): string[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_EVENTS) invalidField('events', `must be an array of 1 to ${MAX_EVENTS} event types`, raw);
  const out: string[] = [];
  for (const t of raw) {
    if (typeof t !== 'string') invalidField('events', 'must hold strings', raw);
    if (!isEventType(variant, t)) {
      const other = variant === 'A' ? 'B' : 'A';
      const hint = isEventType(other, t) ? ` (a Variant ${other} type: create with ${other === 'A' ? 'url' : 'destination_url'})` : '';
      throw new ApiError('UNSUPPORTED_EVENT_TYPE', `Unsupported event type ${JSON.stringify(t)}${hint}; supported: ${typesOf(variant).join(', ')}`);
    }
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

function parseSports(loc: string, raw: unknown): string[] | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw) || raw.length > MAX_SPORTS) invalidField(loc, `must be an array of at most ${MAX_SPORTS} sport keys`, raw);
  // an empty list would match no event at all, silently: SPEC says to omit the filter for every sport
  if (raw.length === 0) invalidField(loc, 'must list at least one sport key; omit it (or send null) for every sport', raw);
  const out = new Set<string>();
  for (const k of raw) {
    const keys = typeof k === 'string' ? resolveSportKeys(k) : null;
    if (keys === null) invalidField(loc, `unknown sport key ${JSON.stringify(k)}`, k);
    for (const x of keys) out.add(x);
  }
  return [...out];
}

export function webhookRoutes(s: Services, svc: WebhookService): Route[] {
  const allowPrivate = svc.cfg.allowPrivate;
  const inProgress = new Map<string, Promise<unknown>>();
  let lastExpiry = 0;

  const tierOf = (ctx: RequestCtx) => {
    const limit = WEBHOOK_TIERS[ctx.key!.tier];
    if (limit === undefined) throw new ApiError('TIER_REQUIRED', `Webhooks need tier pro or above; this key is ${ctx.key!.tier}`);
    return limit;
  };
  /** A sign-up's key may not change the account's subscriptions nor send to them once the address's holder has
   *  logged in (Accounts.managesKeys): create, PATCH, DELETE, rotate-secret (whose answer hands over the new secret,
   *  with which its holder could sign forged events: the webhook audit), test and replay (which spends credits). */
  const verifiedKey = (ctx: RequestCtx): void => {
    if (!s.accounts.managesKeys(ctx.key!)) throw new ApiError('KEY_NOT_VERIFIED');
  };
  /** 429 for a test or replay the service did not send: past its per-minute limit, or no slot free. */
  const refused = (r: SyncRefused, kind: keyof typeof SYNC_LIMITS): never => {
    throw new ApiError('EXCEEDED_FREQ_LIMIT', r.refused === 'rate'
      ? `A webhook allows ${SYNC_LIMITS[kind]} ${kind} sends a minute; retry in ${r.retryAfterS} s`
      : `The webhook has as many attempts in flight as it may (${svc.cfg.maxInFlightPerSub} per webhook, ${svc.cfg.maxInFlightPerAccount} per account): retry once they end`,
    undefined, { retryAfter: r.retryAfterS });
  };
  /** The caller's subscription named in the path; 404 when absent or another owner's. */
  const find = (ctx: RequestCtx): Sub => {
    tierOf(ctx);
    const raw = ctx.args[0];
    let sub: Sub | undefined;
    if (/^\d{1,15}$/.test(raw)) sub = svc.subs.get(Number(raw));
    else for (const x of svc.subs.values()) if (x.row.publicId === raw) sub = x;
    if (sub === undefined || (sub.row.variant === 'A') !== /^\d+$/.test(raw) || sub.row.ownerId !== ownerOf(ctx.key!)) {
      throw new ApiError('WEBHOOK_NOT_FOUND', `No webhook ${raw}`);
    }
    return sub;
  };
  /** A destination per the rules, its name resolved at creation too (422 naming the field). */
  const destination = async (loc: string, raw: unknown): Promise<string> => {
    const d = checkDestination(raw, allowPrivate);
    if (typeof d === 'string') invalidField(loc, d, raw);
    if (!allowPrivate && !d.literal) {
      let addrs: { address: string }[];
      try {
        addrs = await lookup(d.host, { all: true, verbatim: true });
      } catch {
        return invalidField(loc, `host ${d.host} does not resolve`, raw);
      }
      const bad = addrs.find((a) => isForbiddenAddress(a.address));
      if (bad !== undefined) invalidField(loc, `host resolves to a forbidden address (${bad.address})`, raw);
    }
    return d.url.href;
  };
  const json = (status: number, body: unknown): Reply => ({ status, body: JSON.stringify(body) });

  const create = async (ctx: RequestCtx, b: Record<string, unknown>): Promise<{ status: number; body: string } | null> => {
    const limit = tierOf(ctx);
    const key = ctx.key!;
    const hasA = b.url !== undefined;
    const hasB = b.destination_url !== undefined;
    if (hasA === hasB) invalidField(hasA ? 'destination_url' : 'url', 'give exactly one of url (Variant A) and destination_url (Variant B)', null);
    const variant: Variant = hasA ? 'A' : 'B';
    const allowed = variant === 'A' ? ['url', 'events', 'sport_filter'] : ['destination_url', 'events', 'filters', 'format'];
    for (const k of Object.keys(b)) if (!allowed.includes(k)) invalidField(k, `is not a Variant ${variant} field (allowed: ${allowed.join(', ')})`, b[k]);
    const events = parseEvents(variant, b.events);
    let sportKeys: string[] | null;
    let minEdge: number | null = null;
    let format: Format = 'json';
    if (variant === 'A') sportKeys = parseSports('sport_filter', b.sport_filter);
    else {
      const f = b.filters ?? {};
      if (typeof f !== 'object' || f === null || Array.isArray(f)) return invalidField('filters', 'must be an object {sport_keys?, min_edge_pct?}', f);
      const fo = f as Record<string, unknown>;
      for (const k of Object.keys(fo)) if (k !== 'sport_keys' && k !== 'min_edge_pct') invalidField(`filters.${k}`, 'is not a filter', fo[k]);
      sportKeys = parseSports('filters.sport_keys', fo.sport_keys);
      if (fo.min_edge_pct !== undefined && fo.min_edge_pct !== null) {
        if (typeof fo.min_edge_pct !== 'number' || !(fo.min_edge_pct >= 0 && fo.min_edge_pct <= 100)) invalidField('filters.min_edge_pct', 'must be a number from 0 to 100', fo.min_edge_pct);
        minEdge = fo.min_edge_pct;
      }
      if (b.format !== undefined) {
        if (!FORMATS.includes(b.format as Format)) invalidField('format', `must be one of ${FORMATS.join(', ')}`, b.format);
        format = b.format as Format;
      }
    }
    const url = await destination(variant === 'A' ? 'url' : 'destination_url', variant === 'A' ? b.url : b.destination_url);
    const idemKey = ctx.idempotencyKey;
    const res = await insertWebhook(s.db, {
      publicId: variant === 'B' ? newPublicId() : null, ownerId: ownerOf(key), billingKeyId: key.id, variant, url, events,
      sportKeys, minEdgePct: minEdge, format, secret: variant === 'A' ? secretA() : secretB(),
    }, new Date(ctx.now), limit.hooks, idemKey === '' ? null : {
      key: idemKey,
      requestHash: hashBody(ctx),
      answer: (row) => ({ status: 201, body: JSON.stringify(subJson(row, true)) }),
    });
    if (res === null) throw new ApiError('WEBHOOK_LIMIT', `Tier ${key.tier} allows ${limit.hooks} webhooks; delete one first`);
    svc.put(res.row);
    return { status: 201, body: res.body ?? JSON.stringify(subJson(res.row, true)) };
  };

  const routes: Route[] = [
    {
      method: 'GET', path: '/v1/webhooks', auth: 'key', tag: 'webhooks', tier: 'pro', summary: "The caller's webhook subscriptions",
      cost: () => 0, response: { type: 'array', items: WebhookSchema },
      handle: (ctx) => {
        tierOf(ctx);
        const owner = ownerOf(ctx.key!);
        const list = [...svc.subs.values()].filter((x) => x.row.ownerId === owner).sort((a, b) => a.row.pk - b.row.pk);
        return json(200, list.map((x) => subJson(x.row, false)));
      },
    },
    {
      method: 'POST', path: '/v1/webhooks', auth: 'key', tag: 'webhooks', tier: 'pro', okStatus: 201,
      summary: 'Create a subscription: {url, events, sport_filter?} (Variant A) or {destination_url, events, filters?, format?} (Variant B); honours Idempotency-Key for 24 h',
      requestHeaders: [{ name: 'Idempotency-Key', description: 'at most 255 characters: a create repeated with the same key within 24 h answers the first answer (Idempotent-Replayed: true) and creates nothing' }],
      maxBody: 64 * 1024, cost: () => 0, response: WebhookSchema, requestBody: WebhookCreateBody, responseHeaders: ['Idempotent-Replayed'],
      errors: ['UNSUPPORTED_EVENT_TYPE', 'WEBHOOK_LIMIT', 'IDEMPOTENCY_KEY_REUSED', 'KEY_NOT_VERIFIED'],
      handle: async (ctx) => {
        tierOf(ctx);
        verifiedKey(ctx);
        const b = jsonObject(ctx);
        const idemKey = ctx.idempotencyKey;
        if (idemKey === '') return (await create(ctx, b))!;
        if (idemKey.length > 255) invalidField('Idempotency-Key', 'must be at most 255 characters', idemKey);
        const owner = ownerOf(ctx.key!);
        const lock = `${owner}:${idemKey}`;
        // one request per key at a time: a concurrent repeat waits and then replays the first answer
        while (inProgress.has(lock)) await inProgress.get(lock)!.catch(() => undefined);
        const run = (async () => {
          if (ctx.now - lastExpiry > 3600_000) {
            lastExpiry = ctx.now;
            await expireIdempotency(s.db, new Date(ctx.now - IDEMPOTENCY_TTL_MS));
          }
          const seen = await findIdempotent(s.db, owner, idemKey, new Date(ctx.now - IDEMPOTENCY_TTL_MS));
          if (seen !== null) {
            if (seen.requestHash !== hashBody(ctx)) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
            return { status: seen.status, body: seen.response, headers: [['Idempotent-Replayed', 'true']] as [string, string][] };
          }
          return (await create(ctx, b))!;
        })();
        inProgress.set(lock, run);
        try {
          return await run;
        } finally {
          inProgress.delete(lock);
        }
      },
    },
    {
      method: 'GET', path: '/v1/webhooks/{webhook_id}', auth: 'key', tag: 'webhooks', tier: 'pro', summary: 'One subscription',
      cost: () => 0, response: WebhookSchema, errors: ['WEBHOOK_NOT_FOUND'],
      handle: (ctx) => json(200, subJson(find(ctx).row, false)),
    },
    {
      method: 'PATCH', path: '/v1/webhooks/{webhook_id}', auth: 'key', tag: 'webhooks', tier: 'pro',
      summary: 'Update url / destination_url, events, sport_filter / filters, format, is_active (true re-enables and clears the failure count)',
      maxBody: 64 * 1024, cost: () => 0, response: WebhookSchema, requestBody: WebhookPatchBody,
      errors: ['WEBHOOK_NOT_FOUND', 'UNSUPPORTED_EVENT_TYPE', 'KEY_NOT_VERIFIED'],
      handle: async (ctx) => {
        verifiedKey(ctx);
        const sub = find(ctx);
        const b = jsonObject(ctx);
        const v = sub.row.variant;
        const allowed = v === 'A' ? ['url', 'events', 'sport_filter', 'is_active'] : ['destination_url', 'events', 'filters', 'format', 'is_active'];
        const keys = Object.keys(b);
        if (keys.length === 0) invalidField('body', `give at least one of ${allowed.join(', ')}`, b);
        for (const k of keys) if (!allowed.includes(k)) invalidField(k, `cannot be changed on a Variant ${v} subscription (allowed: ${allowed.join(', ')})`, b[k]);
        const patch: Parameters<typeof updateWebhook>[2] = {};
        if (b.events !== undefined) patch.events = parseEvents(v, b.events);
        if (b.is_active !== undefined) {
          if (typeof b.is_active !== 'boolean') invalidField('is_active', 'must be a boolean', b.is_active);
          patch.isActive = b.is_active;
        }
        if (v === 'A') {
          if (b.sport_filter !== undefined) patch.sportKeys = parseSports('sport_filter', b.sport_filter);
          if (b.url !== undefined) patch.url = await destination('url', b.url);
        } else {
          // null clears every filter: the subscription as a create with filters null (or none) makes it (a 422 on
          // PATCH while create took it: the webhook audit)
          if (b.filters === null) {
            patch.sportKeys = null;
            patch.minEdgePct = null;
          } else if (b.filters !== undefined) {
            const f = b.filters;
            if (typeof f !== 'object' || f === null || Array.isArray(f)) invalidField('filters', 'must be an object {sport_keys?, min_edge_pct?}', f);
            const fo = f as Record<string, unknown>;
            for (const k of Object.keys(fo)) if (k !== 'sport_keys' && k !== 'min_edge_pct') invalidField(`filters.${k}`, 'is not a filter', fo[k]);
            // a filter left out keeps its value, null clears it (the object replaced whole turned a subscription's
            // sport_keys to every sport when only min_edge_pct was sent: the webhook audit)
            if ('sport_keys' in fo) patch.sportKeys = parseSports('filters.sport_keys', fo.sport_keys);
            if (!('min_edge_pct' in fo)) { /* kept */ } else if (fo.min_edge_pct === null) patch.minEdgePct = null;
            else if (typeof fo.min_edge_pct !== 'number' || !(fo.min_edge_pct >= 0 && fo.min_edge_pct <= 100)) invalidField('filters.min_edge_pct', 'must be a number from 0 to 100', fo.min_edge_pct);
            else patch.minEdgePct = fo.min_edge_pct;
          }
          if (b.format !== undefined) {
            if (!FORMATS.includes(b.format as Format)) invalidField('format', `must be one of ${FORMATS.join(', ')}`, b.format);
            patch.format = b.format as Format;
          }
          if (b.destination_url !== undefined) patch.url = await destination('destination_url', b.destination_url);
        }
        const row = await updateWebhook(s.db, sub.row.pk, patch, new Date(ctx.now));
        if (row === null) throw new ApiError('WEBHOOK_NOT_FOUND');
        svc.put(row);
        return json(200, subJson(row, false));
      },
    },
    {
      method: 'DELETE', path: '/v1/webhooks/{webhook_id}', auth: 'key', tag: 'webhooks', tier: 'pro', summary: 'Remove a subscription and its delivery records',
      cost: () => 0, errors: ['WEBHOOK_NOT_FOUND', 'KEY_NOT_VERIFIED'],
      response: { type: 'object', required: ['id', 'deleted'], properties: { id: { type: ['integer', 'string'] }, deleted: { const: true } } },
      handle: async (ctx) => {
        verifiedKey(ctx);
        const sub = find(ctx);
        await deleteWebhook(s.db, sub.row.pk);
        svc.remove(sub.row.pk);
        return json(200, { id: sub.row.variant === 'A' ? sub.row.pk : sub.row.publicId, deleted: true });
      },
    },
    {
      method: 'POST', path: '/v1/webhooks/{webhook_id}/test', auth: 'key', tag: 'webhooks', tier: 'pro',
      summary: `Send a \`test\` event now and answer with the outcome (not retried, not charged; ${SYNC_LIMITS.test} a minute per webhook, and it takes one of the webhook's attempt slots: 429 past either)`,
      cost: () => 0, response: SyncSchema, errors: ['WEBHOOK_NOT_FOUND', 'KEY_NOT_VERIFIED'],
      // the attempt's own timeout is not the database's
      extraWaitMs: svc.cfg.timeoutMs,
      handle: async (ctx) => {
        verifiedKey(ctx);
        const r = await svc.test(find(ctx));
        if ('refused' in r) return refused(r, 'test');
        return json(200, { delivered: r.delivered, status_code: r.statusCode, delivery_id: r.deliveryId, attempt: r.attempt, replay: r.replay, error: r.error });
      },
    },
    {
      method: 'POST', path: '/v1/webhooks/{webhook_id}/rotate-secret', auth: 'key', tag: 'webhooks', tier: 'pro',
      summary: 'Issue a new signing secret (the old one stops at once); answers the subscription with it',
      cost: () => 0, response: WebhookSchema, errors: ['WEBHOOK_NOT_FOUND', 'KEY_NOT_VERIFIED'],
      handle: async (ctx) => {
        verifiedKey(ctx);
        const sub = find(ctx);
        const row = await updateWebhook(s.db, sub.row.pk, { secret: sub.row.variant === 'A' ? secretA() : secretB() }, new Date(ctx.now));
        if (row === null) throw new ApiError('WEBHOOK_NOT_FOUND');
        svc.put(row);
        return json(200, subJson(row, true));
      },
    },
    {
      method: 'GET', path: '/v1/webhooks/{webhook_id}/deliveries', auth: 'key', tag: 'webhooks', tier: 'pro',
      summary: 'Deliveries, newest first, each with every attempt (paged; x-result-* headers)',
      params: [
        { name: 'limit', type: 'integer', default: 50, min: 1, max: 500, description: 'Deliveries per page (1 to 500)' },
        { name: 'offset', type: 'integer', default: 0, min: 0, max: MAX_DELIVERY_OFFSET, description: 'Deliveries to skip' },
        { name: 'status', type: 'enum', values: ['pending', 'delivered', 'retrying', 'failed', 'rate_limited', 'out_of_credits'], description: 'Only this status' },
      ],
      cost: () => 0, response: { type: 'array', items: DeliverySchema }, errors: ['WEBHOOK_NOT_FOUND'], responseHeaders: PAGE_HEADERS,
      handle: async (ctx) => {
        const sub = find(ctx);
        const limit = ctx.params.limit as number;
        const offset = ctx.params.offset as number;
        const rows = await listDeliveries(s.db, sub.row.pk, limit + 1, offset, (ctx.params.status as string | undefined) ?? null);
        const more = rows.length > limit;
        const page = rows.slice(0, limit);
        const headers: [string, string][] = [
          ['x-result-page-size', String(page.length)], ['x-result-limit', String(limit)], ['x-result-offset', String(offset)],
          ['x-result-has-more', String(more)],
        ];
        if (more && offset + limit <= MAX_DELIVERY_OFFSET) headers.push(['x-next-offset', String(offset + limit)]);
        return { status: 200, body: JSON.stringify(page.map(deliveryJson)), headers };
      },
    },
    {
      method: 'POST', path: '/v1/webhooks/{webhook_id}/replay', auth: 'key', tag: 'webhooks', tier: 'pro',
      summary: `Re-send a recorded delivery now (same delivery id and body, a new attempt); 5 credits when it delivers an event not delivered before; ${SYNC_LIMITS.replay} a minute per webhook, and it takes one of the webhook's attempt slots: 429 past either`,
      params: [{ name: 'delivery_id', type: 'string', required: true, description: 'The dlv_ id of the delivery' }],
      cost: () => 0, response: SyncSchema, errors: ['WEBHOOK_NOT_FOUND', 'DELIVERY_NOT_FOUND', 'DELIVERY_IN_PROGRESS', 'KEY_NOT_VERIFIED'],
      extraWaitMs: svc.cfg.timeoutMs,
      handle: async (ctx) => {
        verifiedKey(ctx);
        const sub = find(ctx);
        const r = await svc.replay(sub, ctx.params.delivery_id as string);
        if (r === null) throw new ApiError('DELIVERY_NOT_FOUND', `No delivery ${ctx.params.delivery_id as string} of this webhook`);
        if (r === 'busy') throw new ApiError('DELIVERY_IN_PROGRESS');
        if (r === 'credits') throw new ApiError('OUT_OF_USAGE_CREDITS', `A delivery costs ${CREDITS_PER_DELIVERY} credits and ${ctx.key!.remaining} remain`);
        if ('refused' in r) return refused(r, 'replay');
        return json(200, { delivered: r.delivered, status_code: r.statusCode, delivery_id: r.deliveryId, attempt: r.attempt, replay: r.replay, error: r.error });
      },
    },
  ];
  const meta = JSON.stringify(webhookMeta(svc.cfg.retryDelaysMs));
  routes.push({
    method: 'GET', path: '/v1/meta/webhooks', auth: 'none', tag: 'meta',
    summary: 'Machine-readable description of the webhooks (version 0.1): variants, event types and their data, headers, signatures, retries, limits',
    response: WebhookMetaSchema,
    handle: () => ({ status: 200, body: meta }),
  });
  return routes;
}

function hashBody(ctx: RequestCtx): string {
  return createHash('sha256').update(ctx.body ?? Buffer.alloc(0)).digest('hex');
}
