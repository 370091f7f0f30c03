// GET /v1/sports/{sport_key}/best-bets (issue 5): every line of the sport graded by the verdict engine, the +EV
// ones at the caller's books ranked by edge, with edge alerts for prices far off the market
// (engine/verdict-best-bets.ts). Books are scoped like /v1/verdict, saved preferences included.

import { BOOKMAKERS, MARKETS } from '../../engine/catalogue.js';
import { MARKET_INDEX, SLOT } from '../../engine/ingest.js';
import { decimalToAmerican, tidy } from '../../engine/odds.js';
import { kellyFraction, sideLine, type Bet } from '../../engine/verdict.js';
import { MAX_ALERTS, sweep } from '../../engine/verdict-best-bets.js';
import type { ParamSpec } from '../params.js';
import type { Route } from '../router.js';
import { isoSeconds, type Services } from '../services.js';
import { activeBooks } from './odds.js';
import { openEvents, scopeJson, scopeOf, SHARP_KEYS, VERDICT_REGIONS, type PrefsStore } from './verdict-scope.js';
import { cmp } from '../compare.js';

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

function sideName(bet: Bet): string {
  if (MARKETS[bet.market].shape === 'over_under') return bet.slot === SLOT.OVER ? 'Over' : 'Under';
  return bet.slot === SLOT.HOME ? bet.ev.home : bet.slot === SLOT.AWAY ? bet.ev.away : 'Draw';
}

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
      if (p.books !== undefined) activeBooks(p.books as string[], 'books');
      const events = openEvents(s, ctx.args[0]);
      const saved = p.books === undefined && p.region === undefined ? await prefs.get(ctx.key!.id) : null;
      const scope = scopeOf(p.books as string[] | undefined, p.region as string | undefined, saved);
      let markets: Set<number> | null = null;
      if (p.markets !== undefined) {
        markets = new Set((p.markets as string[]).map((k) => MARKET_INDEX.get(k)!));
        if (markets.has(MARKET_INDEX.get('h2h')!)) markets.add(H2H_3_WAY);
      }
      const { bets, alerts } = sweep(rm, s.hub.players, events, {
        markets, scope: scope.books, sharp: BOOK_INDEX.get(p.sharpBook as string)!, minEdge: p.min_edge as number,
        minBooks: p.min_books as number, alertPct: p.alert_pct as number, includeLive: p.include_live === true, now: ctx.now,
      });
      const order = (a: Bet, b: Bet) => a.ev.commence - b.ev.commence || cmp(a.ev.id, b.ev.id) || cmp(MARKETS[a.market].key, MARKETS[b.market].key)
        || a.player - b.player || a.slot - b.slot;
      bets.sort((a, b) => b.edge - a.edge || order(a.bet, b.bet) || cmp(BOOKMAKERS[a.quote.book].key, BOOKMAKERS[b.quote.book].key));
      alerts.sort((a, b) => Math.abs(b.distance) - Math.abs(a.distance) || order(a.bet, b.bet) || cmp(BOOKMAKERS[a.book].key, BOOKMAKERS[b.book].key));
      const alerted = new Set(alerts.map((a) => `${a.bet.ev.id}|${a.bet.market}|${a.bet.player}|${a.bet.point}|${a.bet.slot}|${a.book}`));
      const head = (bet: Bet, book: number, price: number) => ({
        event_id: bet.ev.id, sport_key: bet.ev.sport, commence_time: isoSeconds(bet.ev.commence), home_team: bet.ev.home,
        away_team: bet.ev.away, market: MARKETS[bet.market].key, market_label: MARKETS[bet.market].label,
        player: bet.player < 0 ? null : s.hub.players.name(bet.player), side: sideName(bet), line: sideLine(bet),
        book: BOOKMAKERS[book].key, price, price_american: decimalToAmerican(price),
      });
      const page = bets.slice(0, p.limit as number);
      const body = {
        sport_key: ctx.args[0], sharp_book: p.sharpBook as string, devig: 'multiplicative', min_edge: p.min_edge as number,
        min_books: p.min_books as number, scope: scopeJson(scope), count: page.length,
        bets: page.map((b, i) => ({
          rank: i + 1, verdict: b.verdict, ...head(b.bet, b.quote.book, b.quote.price),
          effective_price: tidy(b.quote.eff), fair_prob: tidy(b.fair), fair_price: tidy(1 / b.fair),
          fair_price_american: decimalToAmerican(1 / b.fair), edge_pct: b.edge,
          kelly_fraction: tidy(kellyFraction(b.fair, b.quote.eff) / 2), books_compared: b.booksCompared,
          age_seconds: Math.max(0, (ctx.now - b.oldest) / 1000),
          edge_alert: alerted.has(`${b.bet.ev.id}|${b.bet.market}|${b.bet.player}|${b.bet.point}|${b.bet.slot}|${b.quote.book}`),
        })),
        edge_alerts: alerts.slice(0, MAX_ALERTS).map((a) => {
          const above = a.distance > 0;
          const who = BOOKMAKERS[a.book].key;
          const since = Math.round((ctx.now - a.changedAt) / 1000);
          // the head's object with the alert's fields added in turn: a literal opening with a spread of it cost about
          // 1 us per field after it on Node 20 (one with a field before the spread, as the bets above, does not)
          return Object.assign(head(a.bet, a.book, a.price), {
            consensus_prob: tidy(a.consensusProb),
            consensus_price: tidy(1 / a.consensusProb),
            distance_pct: a.distance, direction: above ? 'above' : 'below', kind: a.kind, books_in_consensus: a.others,
            line_changed_at: new Date(a.changedAt).toISOString(),
            reason: `${who} pays ${a.price.toFixed(3)}, ${Math.abs(a.distance).toFixed(1)} % ${above ? 'more' : 'less'} than the ${a.others} other books' no-vig consensus `
              + `${(1 / a.consensusProb).toFixed(3)}: ${a.kind === 'stale_line'
                ? `a stale line (not moved for ${since} s while every other book has moved since)`
                : 'off the market (possibly a wrong line or different rules); the other books have not all moved since it did'}`,
          });
        }),
      };
      return { status: 200, body: JSON.stringify(body) };
    },
  }];
}
