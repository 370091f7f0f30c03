// Closing-line exports (SPEC Historical): GET /v1/historical/closing-lines.json and .csv (one game day per
// request) and GET /v1/sports/{sport_key}/closing-lines (recent days of one sport). Every row is an observed
// closing snapshot (workers/history-service.ts); rows are streamed from a database cursor page by page
// (http/export-stream.ts). Credits: JSON 1 per 1,000 rows delivered (minimum 1), CSV 1 per request.

import { bookByKey, DEFAULT_SHARP_BOOK, sportByKey, umbrellaByKey } from '../../engine/catalogue.js';
import { impliedProb } from '../../engine/closing.js';
import { closingCursor, countClosing, type ClosingFilter, type StoredClosing } from '../../sql/history.js';
import type { StreamPlan, StreamRoute } from '../export-stream.js';
import { invalid, type ParamSpec } from '../params.js';
import type { RequestCtx } from '../router.js';
import { compile } from '../serialize.js';
import { isoMillis, isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';

export const EXPORT_MAX_ROWS = 500_000;
/** rows read from the cursor per page: one page is all the process holds of an export */
export const EXPORT_PAGE_ROWS = 1000;
/** SPEC: closing lines are cached 6 hours (a closing snapshot never changes once written) */
const CACHE_CONTROL = 'private, max-age=21600';

const num = { type: ['number', 'null'] } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const str = { type: 'string' } as const;
export const ClosingRowSchema = {
  type: 'object',
  properties: {
    game_date: str, sport_key: str, commence_time: str, home_team: strOrNull, away_team: strOrNull, source: str,
    player_name: strOrNull, market_key: str, market_label: str, line: num, over_price: num, under_price: num,
    over_implied_prob: num, under_implied_prob: num, snapshot_time: str,
  },
} as const;
const rowJson = compile(ClosingRowSchema);

export const CSV_COLUMNS = ['game_date', 'sport_key', 'commence_time', 'home_team', 'away_team', 'source', 'player_name',
  'market_key', 'market_label', 'line', 'over_price', 'under_price', 'over_implied_prob', 'under_implied_prob', 'snapshot_time'] as const;

function rowOf(r: StoredClosing) {
  return {
    game_date: r.game_date, sport_key: r.sport_key, commence_time: isoSeconds(r.commence_time.getTime()),
    home_team: r.home_team, away_team: r.away_team, source: r.source, player_name: r.player_name === '' ? null : r.player_name,
    market_key: r.market_key, market_label: r.market_label, line: r.line, over_price: r.over_price, under_price: r.under_price,
    over_implied_prob: impliedProb(r.over_price), under_implied_prob: impliedProb(r.under_price),
    snapshot_time: isoMillis(r.snapshot_time.getTime()),
  };
}

/** RFC 4180 field: quoted when it holds a comma, a quote, CR or LF; quotes doubled; null is empty */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

function csvLine(r: StoredClosing): string {
  const o = rowOf(r) as Record<string, string | number | null>;
  let line = '';
  for (let i = 0; i < CSV_COLUMNS.length; i++) line += (i === 0 ? '' : ',') + csvField(o[CSV_COLUMNS[i]]);
  return line + '\r\n';
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

/** pages of the cursor as text: head, each row, separators and tail; counts rows handed to the socket */
async function* pages(s: Services, f: ClosingFilter, head: string, fmt: (r: StoredClosing, first: boolean) => string,
  tail: string, counter: { rows: number }): AsyncGenerator<string> {
  yield head;
  for await (const page of closingCursor(s.db, f, EXPORT_PAGE_ROWS)) {
    let out = '';
    for (const r of page) out += fmt(r, counter.rows++ === 0);
    yield out;
  }
  yield tail;
}

function credits(rows: number): number {
  return Math.max(1, Math.ceil(rows / 1000));
}

async function jsonPlan(s: Services, ctx: RequestCtx, f: ClosingFilter, envelope: Record<string, unknown>): Promise<StreamPlan> {
  const rows = await countClosing(s.db, f);
  const counter = { rows: 0 };
  const head = JSON.stringify({ as_of: isoSeconds(ctx.now), ...envelope, row_count: rows }).slice(0, -1) + ',"rows":[';
  return {
    contentType: 'application/json',
    headers: [['X-Export-Rows', String(rows)], ['X-Export-Credits', String(credits(rows))], ['X-Export-Rate', '1 credit per 1000 rows, minimum 1'], ['Cache-Control', CACHE_CONTROL]],
    cost: credits(rows),
    body: pages(s, f, head, (r, first) => (first ? '' : ',') + rowJson(rowOf(r)), ']}', counter),
    // rows counted as delivered: a client that leaves pays for the rows it was sent
    owed: (completed) => (completed ? credits(rows) : credits(counter.rows)),
  };
}

export function historicalRoutes(s: Services): StreamRoute[] {
  return [
    {
      method: 'GET',
      path: '/v1/historical/closing-lines.json',
      auth: 'key',
      tag: 'historical',
      summary: 'Observed closing lines of one game day (1 credit per 1,000 rows, minimum 1); headers X-Export-Rows, X-Export-Credits, X-Export-Rate',
      params: dayParams,
      response: { type: 'object', properties: { as_of: str, date: str, filters: { type: 'object' }, row_count: { type: 'integer' }, rows: { type: 'array', items: ClosingRowSchema } } },
      plan: (ctx) => {
        const f: ClosingFilter = { date: ctx.params.date as string, sports: sportFilter(ctx), sources: sourceFilter(ctx), limit: ctx.params.limit as number };
        return jsonPlan(s, ctx, f, {
          date: f.date, filters: { sport_key: ctx.params.sport_key ?? null, source: ctx.params.source ?? null, limit: f.limit },
        });
      },
    },
    {
      method: 'GET',
      path: '/v1/historical/closing-lines.csv',
      auth: 'key',
      tag: 'historical',
      summary: 'The closing lines of one game day as RFC 4180 CSV, columns of the JSON rows (1 credit per request)',
      params: dayParams,
      plan: async (ctx) => {
        const f: ClosingFilter = { date: ctx.params.date as string, sports: sportFilter(ctx), sources: sourceFilter(ctx), limit: ctx.params.limit as number };
        const rows = await countClosing(s.db, f);
        return {
          contentType: 'text/csv; charset=utf-8',
          headers: [['X-Export-Rows', String(rows)], ['X-Export-Credits', '1'], ['X-Export-Rate', '1 credit per request'], ['Cache-Control', CACHE_CONTROL],
            ['Content-Disposition', `attachment; filename="closing-lines-${f.date}.csv"`]],
          cost: 1,
          body: pages(s, f, CSV_COLUMNS.join(',') + '\r\n', csvLine, '', { rows: 0 }),
          owed: () => 1,
        };
      },
    },
    {
      method: 'GET',
      path: '/v1/sports/{sport_key}/closing-lines',
      auth: 'key',
      tag: 'historical',
      summary: 'Closing lines of a sport\'s events started in the last daysFrom days (default book: the sharp book); 1 credit per 1,000 rows, minimum 1',
      params: [
        { name: 'bookmakers', type: 'csv', default: DEFAULT_SHARP_BOOK, maxItems: 50, description: 'CSV of book keys (default the sharp book, pinnacle)' },
        { name: 'daysFrom', type: 'integer', default: 3, min: 1, max: 30, description: 'days back from now (1 to 30)' },
        limitParam,
      ],
      response: { type: 'object', properties: { as_of: str, sport_key: str, filters: { type: 'object' }, row_count: { type: 'integer' }, rows: { type: 'array', items: ClosingRowSchema } } },
      plan: (ctx) => {
        const sports = sportKeys(ctx.args[0]);
        const raw = ctx.params.bookmakers;
        const books = Array.isArray(raw) ? raw : [String(raw)];
        const bad = books.filter((b) => bookByKey(b) === undefined);
        if (bad.length > 0) invalid('bookmakers', `unknown book key(s) ${bad.join(', ')}`, raw);
        const days = ctx.params.daysFrom as number;
        const f: ClosingFilter = { from: ctx.now - days * 86_400_000, to: ctx.now, sports, sources: books, limit: ctx.params.limit as number };
        return jsonPlan(s, ctx, f, { sport_key: ctx.args[0], filters: { bookmakers: books, daysFrom: days, limit: f.limit } });
      },
    },
  ];
}
