// Closing-line exports (SPEC Historical): GET /v1/historical/closing-lines.json and .csv (one game day per
// request) and GET /v1/sports/{sport_key}/closing-lines (recent days of one sport). Every row is an observed
// closing snapshot (workers/history-service.ts); rows are read page by page (keyset queries) and streamed as a
// StreamReply of the Router, each page formatted in the piscina pool (workers/work-pool.ts), and identical
// requests within 6 hours are served from the export cache (http/export-cache.ts). An export read from the database
// is admitted as a heavy request, its queries in their turn (http/admission.ts). Credits: JSON 1 per 1,000 rows
// delivered (minimum 1), CSV 1 per request, the same when served from the cache.

import { bookByKey, DEFAULT_SHARP_BOOK, sportByKey, umbrellaByKey } from '../../engine/catalogue.js';
import { closingPages, countClosing, type ClosingFilter, type StoredClosing } from '../../sql/history.js';
import { ClosingRowSchema, CSV_COLUMNS, type ExportFormat } from '../../workers/export-format.js';
import type { WorkPool } from '../../workers/work-pool.js';
import type { Admission } from '../admission.js';
import type { CacheHit, CacheWriter, ExportCache } from '../export-cache.js';
import { invalid, type ParamSpec } from '../params.js';
import type { RequestCtx, Route, StreamReply } from '../router.js';
import { isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';

export { ClosingRowSchema, CSV_COLUMNS };

export const EXPORT_MAX_ROWS = 500_000;
/** rows per page: one pool task, one chunk of the body */
export const EXPORT_PAGE_ROWS = 1000;
/** SPEC: closing lines are cached 6 hours (a closing snapshot never changes once written) */
export const EXPORT_CACHE_TTL_MS = 6 * 3600 * 1000;
const CACHE_CONTROL = 'private, max-age=21600';
/** the headers of every export (Age on one served from the cache), for /openapi.json */
const EXPORT_HEADERS = ['X-Export-Rows', 'X-Export-Credits', 'X-Export-Rate', 'x-result-has-more', 'Cache-Control', 'Age'];
/** beyond the Router's: the admission's refusals */
const EXPORT_ERRORS = ['CONCURRENCY_LIMIT', 'SERVICE_UNAVAILABLE'] as const;
const str = { type: 'string' } as const;

/** what the exports need beyond the database: the piscina pool formats the pages, the cache keeps the bodies, the
 *  admission bounds the heavy historical requests (coverage and matches too) */
export interface ExportServices {
  pool: WorkPool;
  cache: ExportCache;
  admission: Admission;
}

const limitParam: ParamSpec = { name: 'limit', type: 'integer', default: 50_000, min: 1, max: EXPORT_MAX_ROWS, description: 'rows at most (1 to 500,000)' };
const dayParams: readonly ParamSpec[] = [
  { name: 'date', type: 'date', required: true, description: 'game day YYYY-MM-DD (UTC), one day per request' },
  { name: 'sport_key', type: 'string', description: 'one sport key (an umbrella key covers its leagues)' },
  { name: 'source', type: 'string', description: 'one book key' },
  limitParam,
];

function sportFilter(ctx: RequestCtx): string[] | undefined {
  const key = ctx.params.sport_key as string | undefined;
  if (key === undefined) return undefined;
  if (sportByKey(key) === undefined && umbrellaByKey(key) === undefined) invalid('sport_key', 'is not a known sport key (see /v1/sports?all=true)', key);
  return sportKeys(key);
}

function sourceFilter(ctx: RequestCtx): string[] | undefined {
  const src = ctx.params.source as string | undefined;
  if (src === undefined) return undefined;
  if (bookByKey(src) === undefined) invalid('source', 'is not a known book key (see /v1/bookmakers?all=true)', src);
  return [src];
}

function credits(rows: number): number {
  return Math.max(1, Math.ceil(rows / 1000));
}

interface ExportSpec {
  format: ExportFormat;
  contentType: string;
  filter: ClosingFilter;
  /** the captures that make a cached body stale (default: those the filter covers) */
  scope?: ClosingFilter;
  /** X-Export-* and the other headers, from the rows in the body and whether more rows match */
  headers(rows: number, more: boolean): [string, string][];
  /** the body before the rows and after them */
  head(rows: number): string;
  tail: string;
  /** credits before the first byte, from the row count */
  cost(rows: number): number;
  /** rows one credit pays for (priced by rows: the period's last credits buy that many each); absent, priced per
   *  request */
  perCredit?: number;
  /** credits owed from the rows delivered (rows counted as delivered) */
  owed(delivered: number, rows: number, completed: boolean): number;
}

/** the cache key of a request: the route, the format and every parameter (path and query) as validated */
function cacheKey(ctx: RequestCtx, route: string): string {
  return JSON.stringify([route, ctx.args, Object.entries(ctx.params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
}

/** An export as a streamed reply: from the cache when an identical request was served within 6 hours, else from
 *  the database, each page formatted in the piscina pool and written to the cache as it goes out. */
async function exportReply(s: Services, x: ExportServices, ctx: RequestCtx, key: string, spec: ExportSpec): Promise<StreamReply> {
  const delivered = { rows: 0 };
  const hit = x.cache.get(key);
  if (hit !== null) {
    const age: [string, string] = ['Age', String(hit.ageS)];
    const body: Shape = { rows: hit.meta.rows, cut: false };
    let headers: readonly (readonly [string, string])[] = [...hit.meta.headers, age];
    return {
      status: 200,
      contentType: hit.meta.contentType,
      get headers() {
        return headers;
      },
      chunks: cached(hit, spec, body, delivered),
      cost: spec.cost(body.rows),
      shorten: spec.perCredit === undefined ? undefined : (credits) => {
        body.rows = Math.min(body.rows, credits * spec.perCredit!);
        body.cut = true;
        headers = [...spec.headers(body.rows, true), age];
      },
      settle: (completed) => {
        hit.release();
        return spec.owed(delivered.rows, body.rows, completed);
      },
    };
  }
  // from the count until the body ended or the client left: the account's and the node's bounds (429 or 503)
  const leave = x.admission.enter(ctx.key?.account.id ?? null);
  let counted: number;
  try {
    // one row past the limit: whether the limit cut the export (x-result-has-more), for one row more of work
    counted = await x.admission.query(() => countClosing(s.db, { ...spec.filter, limit: spec.filter.limit + 1 }));
  } catch (e) {
    leave();
    throw e;
  }
  const rows = Math.min(counted, spec.filter.limit);
  const body: Shape = { rows, cut: false };
  let headers = spec.headers(rows, counted > rows);
  const writer = x.cache.writer(key, { contentType: spec.contentType, headers, rows, scope: spec.scope ?? spec.filter });
  return {
    status: 200,
    contentType: spec.contentType,
    get headers() {
      return headers;
    },
    chunks: pages(s, x, spec, body, delivered, writer),
    cost: spec.cost(rows),
    shorten: spec.perCredit === undefined ? undefined : (credits) => {
      body.rows = Math.min(rows, credits * spec.perCredit!);
      body.cut = true;
      headers = spec.headers(body.rows, true);
      // the request's answer is the whole export: a body cut to one account's credits is nobody else's
      void writer.discard();
    },
    settle: (completed) => {
      leave();
      // a body never started (a HEAD; a call refused for credits, answered 503 past the database bound, or whose
      // client left before the first byte) runs no finally of pages(): its writer goes here, or it stayed for good
      if (!completed) void writer.discard();
      return spec.owed(delivered.rows, body.rows, completed);
    },
  };
}

/** The rows a body holds, settled before its first byte: the count, or fewer when the period's last credits pay for
 *  fewer (StreamReply.shorten) */
interface Shape {
  rows: number;
  cut: boolean;
}

/** A body from the export cache: as it was written, or, cut to fewer rows, its own head, the first pages of the
 *  cached body (each page but the last holds EXPORT_PAGE_ROWS rows, so the cut falls between two), and the tail. */
async function* cached(hit: CacheHit, spec: ExportSpec, body: Shape, delivered: { rows: number }): AsyncGenerator<string | Uint8Array> {
  if (!body.cut) {
    yield* hit.chunks(delivered);
    return;
  }
  yield spec.head(body.rows);
  const read = { rows: 0 };
  let first = true;
  for await (const chunk of hit.chunks(read)) {
    // the cached head names the whole export's row count
    if (first) {
      first = false;
      continue;
    }
    // the tail (no rows), or a page past the rows paid for
    if (read.rows === delivered.rows || read.rows > body.rows) break;
    delivered.rows = read.rows;
    yield chunk;
  }
  yield spec.tail;
}

/** The body from the database: head, the pages formatted in the pool, tail; each chunk also goes to the cache
 *  writer, committed only once the whole body went out. One page ahead: while the socket takes a chunk, the pool
 *  formats the next page, and the page after it is fetched while that one is formatted (about three pages held).
 *  Each page is one query (sql/history.ts closingPages): no connection is held while the client reads. */
async function* pages(s: Services, x: ExportServices, spec: ExportSpec, body: Shape, delivered: { rows: number },
  cache: CacheWriter): AsyncGenerator<string | Uint8Array> {
  let complete = false;
  const rows = body.rows;
  // at most the rows counted for the headers: rows captured meanwhile do not make the body disagree with them
  const source = closingPages(s.db, spec.filter, EXPORT_PAGE_ROWS, rows, (q) => x.admission.query(q));
  const format = (page: IteratorResult<StoredClosing[]>, first: boolean) => {
    if (page.done === true) return null;
    const job = { rows: page.value.length, chunk: x.pool.format(spec.format, page.value, first) };
    // a body abandoned with a page in the pool: its failure has nobody waiting for it
    job.chunk.catch(() => undefined);
    return job;
  };
  try {
    const head = spec.head(rows);
    await cache.write(head, 0);
    yield head;
    let job = format(await source.next(), true);
    while (job !== null) {
      const next = format(await source.next(), false);
      const chunk = await job.chunk;
      await cache.write(chunk, job.rows);
      delivered.rows += job.rows;
      yield chunk;
      job = next;
    }
    await cache.write(spec.tail, 0);
    yield spec.tail;
    complete = true;
  } finally {
    if (!complete) await source.return(undefined);
    // a body cut short (client gone, database error) is never served to anyone else
    await (complete ? cache.commit() : cache.discard());
  }
}

function jsonSpec(ctx: RequestCtx, filter: ClosingFilter, envelope: Record<string, unknown>): ExportSpec {
  return {
    format: 'json',
    contentType: 'application/json',
    filter,
    // x-result-has-more: rows the body does not hold match the filter (cut by `limit`, or to the period's last
    // credits): a default export holds the first 50,000 rows of the day, in book and sport order
    headers: (rows, more) => [['X-Export-Rows', String(rows)], ['X-Export-Credits', String(credits(rows))],
      ['X-Export-Rate', '1 credit per 1000 rows, minimum 1'], ['x-result-has-more', String(more)], ['Cache-Control', CACHE_CONTROL]],
    head: (rows) => JSON.stringify({ as_of: isoSeconds(ctx.now), ...envelope, row_count: rows }).slice(0, -1) + ',"rows":[',
    tail: ']}',
    cost: credits,
    perCredit: 1000,
    // rows counted as delivered: a client that leaves pays for the rows it was sent
    owed: (delivered, rows, completed) => (completed ? credits(rows) : credits(delivered)),
  };
}

export function historicalRoutes(s: Services, x: ExportServices): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/historical/closing-lines.json',
      auth: 'key',
      streamed: true,
      tag: 'historical',
      summary: 'Observed closing lines of one game day (1 credit per 1,000 rows, minimum 1); headers X-Export-Rows, X-Export-Credits, X-Export-Rate',
      params: dayParams,
      responseHeaders: EXPORT_HEADERS,
      errors: EXPORT_ERRORS,
      response: { type: 'object', properties: { as_of: str, date: str, filters: { type: 'object' }, row_count: { type: 'integer' }, rows: { type: 'array', items: ClosingRowSchema } } },
      handle: (ctx) => {
        const f: ClosingFilter = { date: ctx.params.date as string, sports: sportFilter(ctx), sources: sourceFilter(ctx), limit: ctx.params.limit as number };
        return exportReply(s, x, ctx, cacheKey(ctx, 'json'), jsonSpec(ctx, f, {
          date: f.date, filters: { sport_key: ctx.params.sport_key ?? null, source: ctx.params.source ?? null, limit: f.limit },
        }));
      },
    },
    {
      method: 'GET',
      path: '/v1/historical/closing-lines.csv',
      auth: 'key',
      streamed: true,
      tag: 'historical',
      summary: 'The closing lines of one game day as RFC 4180 CSV, columns of the JSON rows (1 credit per request)',
      contentType: 'text/csv; charset=utf-8',
      responseHeaders: [...EXPORT_HEADERS, 'Content-Disposition'],
      errors: EXPORT_ERRORS,
      params: dayParams,
      handle: (ctx) => {
        const f: ClosingFilter = { date: ctx.params.date as string, sports: sportFilter(ctx), sources: sourceFilter(ctx), limit: ctx.params.limit as number };
        return exportReply(s, x, ctx, cacheKey(ctx, 'csv'), {
          format: 'csv',
          contentType: 'text/csv; charset=utf-8',
          filter: f,
          headers: (rows, more) => [['X-Export-Rows', String(rows)], ['X-Export-Credits', '1'], ['X-Export-Rate', '1 credit per request'],
            ['x-result-has-more', String(more)], ['Cache-Control', CACHE_CONTROL], ['Content-Disposition', `attachment; filename="closing-lines-${f.date}.csv"`]],
          head: () => CSV_COLUMNS.join(',') + '\r\n',
          tail: '',
          cost: () => 1,
          owed: () => 1,
        });
      },
    },
    {
      method: 'GET',
      path: '/v1/sports/{sport_key}/closing-lines',
      auth: 'key',
      streamed: true,
      tag: 'historical',
      summary: 'Closing lines of a sport\'s events started in the last daysFrom days (default book: the sharp book); 1 credit per 1,000 rows, minimum 1',
      params: [
        { name: 'bookmakers', type: 'csv', default: DEFAULT_SHARP_BOOK, maxItems: 50, description: 'CSV of book keys (default the sharp book, pinnacle)' },
        { name: 'daysFrom', type: 'integer', default: 3, min: 1, max: 30, description: 'days back from now (1 to 30)' },
        limitParam,
      ],
      responseHeaders: EXPORT_HEADERS,
      errors: EXPORT_ERRORS,
      response: { type: 'object', properties: { as_of: str, sport_key: str, filters: { type: 'object' }, row_count: { type: 'integer' }, rows: { type: 'array', items: ClosingRowSchema } } },
      handle: (ctx) => {
        const sports = sportKeys(ctx.args[0]);
        const raw = ctx.params.bookmakers;
        const books = Array.isArray(raw) ? raw : [String(raw)];
        const bad = books.filter((b) => bookByKey(b) === undefined);
        if (bad.length > 0) invalid('bookmakers', `unknown book key(s) ${bad.join(', ')}`, raw);
        const days = ctx.params.daysFrom as number;
        const f: ClosingFilter = { from: ctx.now - days * 86_400_000, to: ctx.now, sports, sources: books, limit: ctx.params.limit as number };
        const spec = jsonSpec(ctx, f, { sport_key: ctx.args[0], filters: { bookmakers: books, daysFrom: days, limit: f.limit } });
        // a window ending now: a game captured after the request (it starts later) belongs in it too, so any capture
        // from the window's start on makes the body stale; and the window moves, so a body serves one minute at most
        spec.scope = { ...f, to: undefined };
        return exportReply(s, x, ctx, `${cacheKey(ctx, 'sport')}:${Math.floor(ctx.now / 60_000)}`, spec);
      },
    },
  ];
}
