// GET /v1/status (public, cached 90 s, stale-while-revalidate, 503 + Retry-After on a slow cold cache),
// GET /v1/status/history, GET /v1/meta/per-book-sla, GET /v1/meta/source-quality, and the simulator's stall
// control (POST|GET /v1/admin/sim/stall).

import { BOOKMAKERS, MARKETS, bookByKey } from '../../engine/catalogue.js';
import { outcomeLabel } from '../../engine/ingest.js';
import { outcomePoint } from '../../engine/webhook-events.js';
import { API_VERSION } from '../openapi.js';
import { invalid } from '../params.js';
import { isoMillis, isoSeconds } from '../services.js';
import { sportKeys } from './discovery.js';
import { ApiError } from '../../engine/errors.js';
import { slaClassOf } from '../../engine/sla.js';
import { SIM_BOOKS } from '../../engine/simulator.js';
import type { StatusService } from '../../workers/status-service.js';
import type { Route } from '../router.js';
import { errorBody } from '../serialize.js';
import { jsonObject } from '../body.js';
import type { Services } from '../services.js';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const bool = { type: 'boolean' } as const;
const iso = { type: 'string', format: 'date-time' } as const;
const numOrNull = { type: ['number', 'null'] } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const strArr = { type: 'array', items: str } as const;
const object = (properties: Record<string, object>, optional: readonly string[] = []) => ({
  type: 'object', required: Object.keys(properties).filter((k) => !optional.includes(k)), properties, additionalProperties: false,
});
const SLA_STATE = { type: 'string', enum: ['ok', 'degraded', 'breach', 'stale'] } as const;
const thresholds = { sla_class: str, tight_s: int, slack_s: int, stale_s: int };

const TableRowSchema = object({
  source: str, healthy: bool, sla_state: SLA_STATE, row_healthy: bool, row_sla_state: SLA_STATE, health_scope: { const: 'source' },
  source_latest_age_seconds: numOrNull, table_latest_age_seconds: numOrNull,
});

/** GET /v1/status (engine/status.ts statusPayload) */
export const StatusSchema = object({
  status: { type: 'string', enum: ['ok', 'degraded', 'down'] },
  generated_at: iso,
  simulated: { type: 'boolean', description: 'true while the node serves the simulator\'s prices: the sources are simulated, not the bookmakers\' own feeds' },
  window_s: int,
  database: object({ ok: bool, latency_ms: numOrNull }),
  sources: { type: 'array', items: object({ source: str, kind: str, sla_class: str, healthy: bool, sla_state: SLA_STATE, latest_write_age_seconds: numOrNull }) },
  tables: object({ odds: { type: 'array', items: TableRowSchema }, props: { type: 'array', items: TableRowSchema } }),
  data_freshness: object({
    all_sources_healthy: bool, stale_sources: strArr, suppressed_sources: strArr, retired_sources: strArr,
    sources_without_rows: { type: ['array', 'null'], items: str, description: 'null when no feed names the sources it quotes' },
  }),
  sla_by_source: {
    type: 'object',
    description: 'per source key',
    additionalProperties: object({ sla: SLA_STATE, source_quality_sla: SLA_STATE, source_quality_age_s: numOrNull, sla_basis: object({ sla: str, source_quality_sla: str }) }),
  },
  poller_health: object({ feeds: { type: 'array', items: { type: 'object', description: 'one poller\'s counters' } } }),
  requests: object({ p50_per_min: num, p95_per_min: num, last_hour: num }),
  analytics: object({ arbitrage: int, ev: int }),
  nats: { type: 'object', description: 'NATS ingest and cluster replication counters; only with NATS_URL' },
}, ['nats']);

const HistorySchema = object({
  window_s: int, interval_s: int, as_of: iso,
  sources: { type: 'array', items: object({ source: str, segments: { type: 'array', items: object({ from: iso, to: iso, sla_state: SLA_STATE, samples: int,
    simulated: { type: 'boolean', description: 'sampled while the node served the simulator\'s prices (a run ends where this changes)' } }) } }) },
});

const PerBookSlaSchema = { type: 'array', items: object({ source: str, title: str, kind: str, ...thresholds }) };

const SourceQualitySchema = object({
  as_of: iso, window_s: int,
  sources: {
    type: 'array',
    items: object({ source: str, sla: SLA_STATE, basis: { type: 'string', enum: ['write', 'pulse', 'none'] }, age_s: numOrNull, ...thresholds, recommended_poll_s: num }),
  },
});

const MoversSchema = object({
  as_of: iso, window_s: int,
  complete: { type: 'boolean', description: 'false when the window opens before covered_since: moves older than that are not held (the last 100,000 moves are, from the service\'s first price on), and from_price is then the price at covered_since' },
  covered_since: { type: ['string', 'null'], format: 'date-time', description: 'every move since this time is held; null before the first price' },
  movers: {
    type: 'array',
    items: object({
      event_id: str, sport_key: str, commence_time: iso, home_team: strOrNull, away_team: strOrNull, market_key: str, player: strOrNull,
      book: str, outcome: str, point: numOrNull, from_point: { ...numOrNull, description: 'the line when the window opened (differs from point after a line move)' }, from_price: num, to_price: num, moves: int, first_move_at: iso, last_move_at: iso,
      prob_change_pct: num,
    }),
  },
});

const ApiInfoSchema = object({
  name: { const: 'linewire' }, version: str, api_version: str, base_paths: strArr, feed: str, simulated: bool, started_at: iso,
  uptime_seconds: num,
  documents: object({ openapi: str, errors: str, status: str, per_book_sla: str, source_quality: str }),
});

const StalledSchema = object({ stalled: strArr });

/** seconds a client is told to wait after a 503 of a cold status cache */
const COLD_RETRY_AFTER_S = 5;
const MAX_HISTORY_S = 7 * 86_400;

/** how long a /v1/meta/movers answer is served again (as_of says when it was made) */
const MOVERS_CACHE_MS = 1000;

const SIM_BOOK_KEYS = new Set(SIM_BOOKS.map((b) => b.key));

export function statusRoutes(s: Services, status: StatusService): Route[] {
  /** /v1/meta/movers answers by parameters, each kept MOVERS_CACHE_MS */
  const moversCache = new Map<string, { at: number; body: string }>();
  const perBookSla = JSON.stringify(BOOKMAKERS.filter((b) => b.status === 'active').map((b) => {
    const c = slaClassOf(b);
    return { source: b.key, title: b.title, kind: b.kind, sla_class: c.name, tight_s: c.tight_s, slack_s: c.slack_s, stale_s: c.stale_s };
  }));
  return [
    {
      method: 'GET',
      path: '/v1/status',
      auth: 'none',
      tag: 'status',
      errors: ['SERVICE_UNAVAILABLE'],
      responseHeaders: ['Cache-Control', 'Age', 'X-Status-Cache'],
      response: StatusSchema,
      summary: 'Live health: one freshness verdict per source, per-table rows, data_freshness, sla_by_source, poller_health, request rates (cached 90 s, stale-while-revalidate; 503 with Retry-After when a cold computation runs over its bound)',
      handle: async (ctx) => {
        const got = await status.status();
        if (got === null) {
          const err = new ApiError('SERVICE_UNAVAILABLE', `The status is being computed; retry in ${COLD_RETRY_AFTER_S} s`);
          return { status: 503, body: errorBody(err, ctx.requestId), headers: [['Retry-After', String(COLD_RETRY_AFTER_S)]] };
        }
        const maxAge = Math.round(status.cfg.cacheMs / 1000);
        const age = Math.max(0, Math.floor((s.now() - got.cached.at) / 1000));
        return {
          status: 200,
          body: got.cached.body,
          headers: [['Cache-Control', `public, max-age=${maxAge}, stale-while-revalidate=${maxAge}`], ['Age', String(age)], ['X-Status-Cache', got.state]],
        };
      },
    },
    {
      method: 'GET',
      path: '/v1/status/history',
      auth: 'none',
      tag: 'status',
      summary: 'Per-source SLA classification timeline sampled every 30 s, as runs of one class (503 with Retry-After when the database does not answer within 10 s)',
      errors: ['SERVICE_UNAVAILABLE'],
      response: HistorySchema,
      params: [{ name: 'window_s', type: 'integer', default: 86_400, min: 30, max: MAX_HISTORY_S, description: 'seconds back from now (30 to 604,800)' }],
      handle: async (ctx) => {
        const windowS = ctx.params.window_s as number;
        const tl = await status.boundedHistory(windowS);
        if (tl === null) {
          const err = new ApiError('SERVICE_UNAVAILABLE', `The status history did not come from the database within ${status.cfg.historyTimeoutMs / 1000} s; retry in ${COLD_RETRY_AFTER_S} s`);
          return { status: 503, body: errorBody(err, ctx.requestId), headers: [['Retry-After', String(COLD_RETRY_AFTER_S)]] };
        }
        return {
          status: 200,
          body: JSON.stringify({
            window_s: windowS, interval_s: Math.round(status.cfg.sampleMs / 1000), as_of: new Date(s.now()).toISOString(),
            sources: [...tl].map(([source, segments]) => ({ source, segments })),
          }),
        };
      },
    },
    {
      method: 'GET',
      path: '/v1/meta/per-book-sla',
      auth: 'none',
      tag: 'status',
      summary: 'Freshness thresholds tight_s, slack_s, stale_s per source (ok up to tight_s, degraded up to slack_s, breach up to stale_s, then stale)',
      response: PerBookSlaSchema,
      handle: () => ({ status: 200, body: perBookSla }),
    },
    {
      method: 'GET',
      path: '/v1/meta/source-quality',
      auth: 'none',
      tag: 'status',
      response: SourceQualitySchema,
      summary: 'Per-source SLA class and recommended polling cadence over a 10-minute window, falling back to poller pulses',
      handle: () => ({ status: 200, body: JSON.stringify({ as_of: new Date(s.now()).toISOString(), window_s: 600, sources: status.quality(s.now()) }) }),
    },
    {
      method: 'GET',
      path: '/v1/meta/movers',
      auth: 'none',
      tag: 'status',
      response: MoversSchema,
      summary: 'Largest price moves in a window: per quote, from its price when the window opened to its newest, ranked by the change in implied probability; complete and covered_since say whether the moves held reach back to the window\'s start',
      params: [
        { name: 'window_s', type: 'integer', default: 3600, min: 60, max: 86_400, description: 'seconds back from now (60 to 86,400)' },
        { name: 'sport_key', type: 'string', description: 'one sport key (an umbrella key covers its leagues)' },
        { name: 'limit', type: 'integer', default: 20, min: 1, max: 100, description: 'rows at most (1 to 100)' },
      ],
      handle: (ctx) => {
        // open to anyone and a scan of up to 100,000 moves: one answer per parameters and second, so callers in a loop
        // cost the main thread nothing more
        const cacheKey = `${ctx.params.window_s as number}|${(ctx.params.sport_key as string | undefined) ?? ''}|${ctx.params.limit as number}`;
        const hit = moversCache.get(cacheKey);
        if (hit !== undefined && ctx.now - hit.at < MOVERS_CACHE_MS && ctx.now >= hit.at) return { status: 200, body: hit.body };
        const rm = s.hub.readModel;
        let sports: Set<string> | null = null;
        if (ctx.params.sport_key !== undefined) {
          try {
            sports = new Set(sportKeys(ctx.params.sport_key as string));
          } catch {
            invalid('sport_key', 'is not a known sport key', ctx.params.sport_key);
          }
        }
        const windowS = ctx.params.window_s as number;
        const rows = status.moves.movers(ctx.now - windowS * 1000, ctx.params.limit as number, (e) => {
          const ev = rm.event(e);
          return ev !== undefined && (sports === null || sports.has(ev.sport));
        }).map((m) => {
          const ev = rm.event(m.event)!;
          return {
            event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), home_team: ev.home || null, away_team: ev.away || null,
            market_key: MARKETS[m.market].key, player: m.player < 0 ? null : s.hub.players.name(m.player), book: BOOKMAKERS[m.book].key,
            outcome: outcomeLabel(ev, m.market, m.outcome), point: outcomePoint(m.market, m.point, m.outcome),
            from_point: outcomePoint(m.market, m.fromPoint, m.outcome), from_price: m.from, to_price: m.to,
            moves: m.moves, first_move_at: isoMillis(m.first_at), last_move_at: isoMillis(m.last_at), prob_change_pct: m.prob_change_pct,
          };
        });
        const held = status.moves.heldSince;
        const known = held === held;
        const body = JSON.stringify({
          as_of: isoSeconds(ctx.now), window_s: windowS,
          // a window reaching back before what the ring holds is answered from what it holds: said, not hidden
          complete: known && held <= ctx.now - windowS * 1000, covered_since: known ? isoMillis(held) : null, movers: rows,
        });
        if (moversCache.size >= 256) moversCache.clear();
        moversCache.set(cacheKey, { at: ctx.now, body });
        return { status: 200, body };
      },
    },
    {
      method: 'GET',
      path: '/v1/meta/api-info',
      auth: 'none',
      tag: 'status',
      response: ApiInfoSchema,
      summary: 'What this server is: version, API version, feed, uptime, where the documents are',
      handle: () => ({
        status: 200,
        body: JSON.stringify({
          name: 'linewire', version: s.version, api_version: API_VERSION, base_paths: ['/v1', '/v4'], feed: s.feed, simulated: s.simulated,
          started_at: isoSeconds(s.startedAt), uptime_seconds: Math.round((s.now() - s.startedAt) / 100) / 10,
          documents: { openapi: '/openapi.json', errors: '/v1/meta/errors', status: '/v1/status', per_book_sla: '/v1/meta/per-book-sla', source_quality: '/v1/meta/source-quality' },
        }),
      }),
    },
    {
      method: 'GET',
      path: '/v1/admin/sim/stall',
      auth: 'admin',
      tag: 'admin',
      summary: 'Books the simulator is told not to quote',
      response: StalledSchema,
      handle: () => ({ status: 200, body: JSON.stringify({ stalled: [...status.stalled].sort() }) }),
    },
    {
      method: 'POST',
      path: '/v1/admin/sim/stall',
      auth: 'admin',
      tag: 'admin',
      summary: 'Stall books in the simulator (body {"books": [...]} replaces the set; [] resumes all); 409 on a node without the simulator',
      maxBody: 16_384,
      errors: ['SIMULATOR_NOT_RUNNING'],
      requestBody: { type: 'object', required: ['books'], properties: { books: { type: 'array', items: { type: 'string' } } } },
      response: StalledSchema,
      handle: (ctx) => {
        const books = jsonObject(ctx, ['books']).books;
        if (!Array.isArray(books) || books.some((b) => typeof b !== 'string')) {
          throw new ApiError('VALIDATION_ERROR', 'books must be an array of book keys', [{ loc: ['body', 'books'], msg: 'must be an array of book keys', type: 'type_error', input: books ?? null }]);
        }
        const bad = (books as string[]).filter((b) => bookByKey(b) === undefined);
        if (bad.length > 0) {
          throw new ApiError('VALIDATION_ERROR', `unknown book key(s) ${bad.join(', ')}`, [{ loc: ['body', 'books'], msg: `unknown book key(s) ${bad.join(', ')}`, type: 'value_error', input: books }]);
        }
        // a book the simulator never quotes (a retired one: pointsbetus) would be listed as stalled with nothing stalled
        const notSim = (books as string[]).filter((b) => !SIM_BOOK_KEYS.has(b));
        if (notSim.length > 0) {
          const msg = `not quoted by the simulator: ${notSim.join(', ')}`;
          throw new ApiError('VALIDATION_ERROR', msg, [{ loc: ['body', 'books'], msg, type: 'value_error', input: books }]);
        }
        // a node without the simulator answered 200 and stalled nothing
        if (!s.feed.split(',').includes('sim')) throw new ApiError('SIMULATOR_NOT_RUNNING');
        status.stalled.clear();
        for (const b of books as string[]) status.stalled.add(b);
        return { status: 200, body: JSON.stringify({ stalled: [...status.stalled].sort() }) };
      },
    },
  ];
}
