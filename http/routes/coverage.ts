// Historical coverage (SPEC "Other endpoints mentioned"): GET /v1/historical/sports/{sport_key}/coverage
// (1 credit), GET /v1/historical/coverage (public), GET /v1/historical/sports/{sport_key}/matches (1 credit,
// X-Coverage-Hint when the range asked reaches beyond the days held). Their counts are heavy queries: admitted as
// the exports are (http/admission.ts).

import { coverageBySource, coverageBySport, heldRange, matches } from '../../sql/history.js';
import type { Admission } from '../admission.js';
import { invalid, type Params } from '../params.js';
import type { RequestCtx, Route } from '../router.js';
import { isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';

const MAX_MATCH_DAYS = 366;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const day = { type: 'string', format: 'date' } as const;
const dayOrNull = { type: ['string', 'null'], format: 'date' } as const;
const object = (properties: Record<string, object>) => ({ type: 'object', required: Object.keys(properties), properties, additionalProperties: false });
const strOrNull = { type: ['string', 'null'] } as const;
/** closing rows of the built-in simulator's events (the exports mark each row `simulated`): coverage of a database
 *  that once ran the simulator is told apart from observed prices */
const SIM_ROWS = { type: 'integer', description: "rows captured from the built-in simulator's events: no bookmaker's observed price" } as const;

const SportCoverageSchema = object({
  sport_key: str, date_from: dayOrNull, date_to: dayOrNull, total_rows: int,
  sources: { type: 'array', items: object({ source: str, rows: int, priced_rows: int, simulated_rows: SIM_ROWS, first_date: day, last_date: day }) },
});
const CoverageSchema = object({
  sports: { type: 'array', items: object({ sport_key: str, rows: int, simulated_rows: SIM_ROWS, events: int, sources: int, first_date: day, last_date: day }) },
});
const MatchesSchema = object({
  sport_key: str, date_from: day, date_to: day,
  matches: {
    type: 'array',
    items: object({
      event_id: str, sport_key: str, game_date: day, commence_time: { type: 'string', format: 'date-time' }, home_team: strOrNull, away_team: strOrNull,
      rows: int, sources: int, simulated: { type: 'boolean', description: "captured from the built-in simulator's event: no bookmaker's observed price" },
    }),
  },
});

function range(p: Params, now: number, defaultDays: number | null): { from: string | undefined; to: string | undefined } {
  let to = p.dateTo as string | undefined;
  let from = p.dateFrom as string | undefined;
  // a 422 names the parameter the client sent: a defaulted dateTo (today) is measured against, not blamed
  const toSent = to !== undefined;
  if (defaultDays !== null) {
    to ??= new Date(now).toISOString().slice(0, 10);
    from ??= new Date(Date.parse(`${to}T00:00:00Z`) - (defaultDays - 1) * 86_400_000).toISOString().slice(0, 10);
  }
  if (from !== undefined && to !== undefined) {
    if (from > to) invalid('dateFrom', toSent ? 'must not be after dateTo' : `must not be after today (${to}) when dateTo is omitted`, from);
    if (defaultDays !== null && (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1 > MAX_MATCH_DAYS) {
      if (toSent) invalid('dateTo', `at most ${MAX_MATCH_DAYS} days after dateFrom`, to);
      invalid('dateFrom', `at most ${MAX_MATCH_DAYS} days before today (${to}) when dateTo is omitted`, from);
    }
  }
  return { from, to };
}

const dateParams = [
  { name: 'dateFrom', type: 'date', description: 'first game day YYYY-MM-DD (UTC), inclusive' },
  { name: 'dateTo', type: 'date', description: 'last game day YYYY-MM-DD (UTC), inclusive' },
] as const;

/** how long /v1/historical/coverage serves an answer while this node captured nothing new */
const COVERAGE_CACHE_MS = 30_000;

/** A keyed heavy request: admitted (429 or 503 beyond the bounds) for as long as `run` takes. */
async function admitted<T>(admission: Admission, ctx: RequestCtx, run: () => Promise<T>): Promise<T> {
  const leave = admission.enter(ctx.key?.account.id ?? null);
  try {
    return await run();
  } finally {
    leave();
  }
}

export function coverageRoutes(s: Services, admission: Admission): Route[] {
  // open to anyone, and three counts over every closing line (0.3 to 0.5 s at 180,000 rows on the embedded database,
  // whose one session then holds every other query: eight clients in a loop made /health answer 503): one answer,
  // shared by concurrent callers, until this node captures a game or COVERAGE_CACHE_MS passes (another node's
  // captures, in a cluster)
  let coverage: { at: number; captured: number; body: Promise<string> } | null = null;
  return [
    {
      method: 'GET',
      path: '/v1/historical/sports/{sport_key}/coverage',
      auth: 'key',
      tag: 'historical',
      summary: 'Closing-line coverage of a sport per source: row counts, rows with both sides priced, first and last game day (1 credit)',
      params: [...dateParams],
      cost: () => 1,
      response: SportCoverageSchema,
      errors: ['CONCURRENCY_LIMIT', 'SERVICE_UNAVAILABLE'],
      handle: async (ctx) => {
        const sports = sportKeys(ctx.args[0]);
        const { from, to } = range(ctx.params, ctx.now, null);
        const sources = await admitted(admission, ctx, () => admission.query(() => coverageBySource(s.db, sports, from, to)));
        return { status: 200, body: JSON.stringify({ sport_key: ctx.args[0], date_from: from ?? null, date_to: to ?? null, total_rows: sources.reduce((a, b) => a + b.rows, 0), sources }) };
      },
    },
    {
      method: 'GET',
      path: '/v1/historical/coverage',
      auth: 'none',
      tag: 'historical',
      summary: 'Closing-line coverage per sport: rows, events, sources, first and last game day',
      response: CoverageSchema,
      handle: async (ctx) => {
        const captured = s.history?.counters.captured ?? 0;
        if (coverage === null || coverage.captured !== captured || ctx.now - coverage.at >= COVERAGE_CACHE_MS || ctx.now < coverage.at) {
          // public and shared: no account to bound, but its query takes its turn
          const body = admission.query(() => coverageBySport(s.db)).then((sports) => JSON.stringify({ sports }));
          const entry = { at: ctx.now, captured, body };
          coverage = entry;
          // a failed count is not kept: the next caller asks again
          body.catch(() => { if (coverage === entry) coverage = null; });
        }
        return { status: 200, body: await coverage.body };
      },
    },
    {
      method: 'GET',
      path: '/v1/historical/sports/{sport_key}/matches',
      auth: 'key',
      tag: 'historical',
      summary: 'Events with closing lines between two game days (default the last 7 days; 1 credit); X-Coverage-Hint when the range reaches beyond the days held',
      params: [...dateParams, { name: 'limit', type: 'integer', default: 100, min: 1, max: 1000, description: 'events at most (1 to 1,000)' }],
      cost: () => 1,
      response: MatchesSchema,
      responseHeaders: ['X-Coverage-Hint'],
      errors: ['CONCURRENCY_LIMIT', 'SERVICE_UNAVAILABLE'],
      handle: async (ctx) => {
        const sports = sportKeys(ctx.args[0]);
        const { from, to } = range(ctx.params, ctx.now, 7) as { from: string; to: string };
        const [rows, held] = await admitted(admission, ctx, () => Promise.all([
          admission.query(() => matches(s.db, sports, from, to, ctx.params.limit as number)), admission.query(() => heldRange(s.db, sports)),
        ]));
        const headers: [string, string][] = [];
        if (held === null) headers.push(['X-Coverage-Hint', `no closing lines held for ${ctx.args[0]}`]);
        else if (from < held.first || to > held.last) headers.push(['X-Coverage-Hint', `closing lines for ${ctx.args[0]} are held from ${held.first} to ${held.last}; asked ${from} to ${to}`]);
        return {
          status: 200,
          headers,
          body: JSON.stringify({
            sport_key: ctx.args[0], date_from: from, date_to: to,
            matches: rows.map((r) => ({ ...r, commence_time: isoSeconds(r.commence_time.getTime()) })),
          }),
        };
      },
    },
  ];
}
