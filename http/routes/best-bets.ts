// GET /v1/sports/{sport_key}/best-bets (issue 5): every line of the sport graded by the verdict engine, the +EV
// ones at the caller's books ranked by edge, with edge alerts for prices far off the market
// (engine/verdict-best-bets.ts, written by engine/best-bets-body.ts in the piscina pool). Books are scoped like
// /v1/verdict, saved preferences included.

import { bestBetsBody, type BestBetsQuery } from '../../engine/best-bets-body.js';
import { BOOKMAKERS, MARKETS } from '../../engine/catalogue.js';
import { MARKET_INDEX } from '../../engine/ingest.js';
import type { ParamSpec } from '../params.js';
import type { Route } from '../router.js';
import type { Services } from '../services.js';
import { sportKeys } from './discovery.js';
import { gradableBooks, openEvents, scopeJson, scopeOf, SHARP_KEYS, VERDICT_REGIONS, type PrefsStore } from './verdict-scope.js';

const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
const H2H_3_WAY = MARKET_INDEX.get('h2h_3_way')!;

export const BEST_BETS_PARAMS: readonly ParamSpec[] = [
  { name: 'region', type: 'enum', values: VERDICT_REGIONS, description: "The caller's books; omitted with books: the saved preference, else us" },
  { name: 'books', type: 'csv', values: BOOKMAKERS.map((b) => b.key), maxItems: 200, description: 'The caller\'s books; overrides region' },
  { name: 'limit', type: 'integer', default: 20, min: 1, max: 50, description: 'Bets returned, best edge first' },
  { name: 'min_edge', type: 'number', default: 2.0, min: 0, max: 30, description: 'Minimum edge percent versus the no-vig fair line' },
  { name: 'min_books', type: 'integer', default: 4, min: 2, max: 20, description: 'Minimum books with a fresh price on the side of the line' },
  { name: 'markets', type: 'csv', values: MARKETS.map((m) => m.key), maxItems: 100, description: 'Market keys (h2h includes three-way moneylines)' },
  { name: 'sharpBook', type: 'enum', values: SHARP_KEYS, default: 'pinnacle', description: 'Sharp reference book, as /ev takes it' },
  { name: 'include_live', type: 'boolean', default: false, description: 'Include games already started' },
  { name: 'alert_pct', type: 'number', default: 10, min: 1, max: 100, description: 'Edge alert when a price is more than this percent from the consensus no-vig price' },
];

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const nullableNum = { type: ['number', 'null'] } as const;
const lineProps = {
  event_id: str, sport_key: str, commence_time: str, home_team: str, away_team: str, market: str, market_label: str,
  player: nullableStr, side: str, line: nullableNum, book: str, price: num, price_american: { type: 'integer' },
} as const;
export const BestBetsSchema = {
  type: 'object',
  properties: {
    sport_key: str, sharp_book: str, devig: str, min_edge: num, min_books: { type: 'integer' },
    scope: { type: 'object', properties: { source: str, region: nullableStr, books: { type: 'array', items: str } } },
    count: { type: 'integer' },
    bets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          rank: { type: 'integer' }, verdict: str, ...lineProps, effective_price: num, fair_prob: num, fair_price: num,
          fair_price_american: { type: 'integer' }, edge_pct: num, kelly_fraction: num, books_compared: { type: 'integer' },
          age_seconds: num, edge_alert: { type: 'boolean' },
        },
      },
    },
    edge_alerts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ...lineProps, consensus_prob: num, consensus_price: num, distance_pct: num, direction: str, kind: str,
          books_in_consensus: { type: 'integer' }, line_changed_at: str, reason: str,
        },
      },
    },
  },
} as const;

export function bestBetsRoutes(s: Services, prefs: PrefsStore): Route[] {
  const rm = s.hub.readModel;
  return [{
    method: 'GET',
    path: '/v1/sports/{sport_key}/best-bets',
    auth: 'key',
    tag: 'analytics',
    summary: 'Every line graded by the verdict engine: the +EV bets at your books ranked by edge, and edge alerts for prices far off the market',
    params: BEST_BETS_PARAMS,
    cost: () => 10,
    response: BestBetsSchema,
    handle: async (ctx) => {
      const p = ctx.params;
      if (p.books !== undefined) gradableBooks(p.books as string[]);
      const keys = sportKeys(ctx.args[0]); // an unknown sport is 404 before the database is asked
      const saved = p.books === undefined && p.region === undefined ? await prefs.get(ctx.key!.id) : null;
      // the events after the wait: one that left meanwhile has had its quote records freed for others
      const events = openEvents(s, keys);
      const scope = scopeOf(p.books as string[] | undefined, p.region as string | undefined, saved);
      let markets: number[] | null = null;
      if (p.markets !== undefined) {
        markets = (p.markets as string[]).map((k) => MARKET_INDEX.get(k)!);
        if (markets.includes(MARKET_INDEX.get('h2h')!)) markets.push(H2H_3_WAY);
      }
      const query: BestBetsQuery = {
        sport: ctx.args[0], sharpBook: p.sharpBook as string, sharp: BOOK_INDEX.get(p.sharpBook as string)!,
        minEdge: p.min_edge as number, minBooks: p.min_books as number, alertPct: p.alert_pct as number,
        includeLive: p.include_live === true, limit: p.limit as number, markets, scope: [...scope.books], scopeJson: scopeJson(scope),
        now: ctx.now,
      };
      // swept in the piscina pool over a snapshot of the sport (about 2 ms of the main thread to take at the
      // simulator's NBA, against 9 to 15 ms for the sweep itself); in this thread where there is no pool
      const pool = s.exports?.pool;
      const body = pool === undefined
        ? bestBetsBody(rm, s.hub.players, events, query)
        : await pool.bestBets({ snapshot: rm.snapshot(events, s.hub.players), query });
      return { status: 200, body };
    },
  }];
}
