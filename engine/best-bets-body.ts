// The body of GET /v1/sports/{sport_key}/best-bets: the sweep of engine/verdict-best-bets.ts ranked and written as
// JSON. Pure; it runs in the piscina pool (workers/best-bets-task.ts) over a snapshot of the sport's events, so the
// sweep (about 8 ms at the simulator's NBA with its props) does not hold the main thread and its streams.

import { BOOKMAKERS, MARKETS } from './catalogue.js';
import { cmp } from './compare.js';
import { SLOT } from './ingest.js';
import { decimalToAmerican, tidy } from './odds.js';
import type { EventView, PlayerLookup, ReadModel } from './read-model.js';
import { kellyFraction, sideLine, type Bet } from './verdict.js';
import { MAX_ALERTS, sweep } from './verdict-best-bets.js';

/** What a best-bets request asks, resolved to ids (the route checks the parameters and the caller's scope). */
export interface BestBetsQuery {
  sport: string;
  sharpBook: string;
  sharp: number;
  minEdge: number;
  minBooks: number;
  alertPct: number;
  includeLive: boolean;
  limit: number;
  /** market ids, null for all */
  markets: number[] | null;
  /** the caller's books */
  scope: number[];
  /** the scope as the body shows it */
  scopeJson: { source: string; region: string | null; books: string[] };
  now: number;
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

function sideName(bet: Bet): string {
  if (MARKETS[bet.market].shape === 'over_under') return bet.slot === SLOT.OVER ? 'Over' : 'Under';
  return bet.slot === SLOT.HOME ? bet.ev.home : bet.slot === SLOT.AWAY ? bet.ev.away : 'Draw';
}

export function bestBetsBody(rm: ReadModel, players: PlayerLookup, events: Iterable<EventView>, q: BestBetsQuery): string {
  const { bets, alerts } = sweep(rm, players, events, {
    markets: q.markets === null ? null : new Set(q.markets), scope: q.scope, sharp: q.sharp, minEdge: q.minEdge,
    minBooks: q.minBooks, alertPct: q.alertPct, includeLive: q.includeLive, now: q.now,
  });
  const order = (a: Bet, b: Bet) => a.ev.commence - b.ev.commence || cmp(a.ev.id, b.ev.id) || cmp(MARKETS[a.market].key, MARKETS[b.market].key)
    || a.player - b.player || a.slot - b.slot;
  bets.sort((a, b) => b.edge - a.edge || order(a.bet, b.bet) || cmp(BOOKMAKERS[a.quote.book].key, BOOKMAKERS[b.quote.book].key));
  alerts.sort((a, b) => Math.abs(b.distance) - Math.abs(a.distance) || order(a.bet, b.bet) || cmp(BOOKMAKERS[a.book].key, BOOKMAKERS[b.book].key));
  const alerted = new Set(alerts.map((a) => `${a.bet.ev.id}|${a.bet.market}|${a.bet.player}|${a.bet.point}|${a.bet.slot}|${a.book}`));
  const head = (bet: Bet, book: number, price: number) => ({
    event_id: bet.ev.id, sport_key: bet.ev.sport, commence_time: isoSeconds(bet.ev.commence), home_team: bet.ev.home,
    away_team: bet.ev.away, market: MARKETS[bet.market].key, market_label: MARKETS[bet.market].label,
    player: bet.player < 0 ? null : players.name(bet.player), side: sideName(bet), line: sideLine(bet),
    book: BOOKMAKERS[book].key, price, price_american: decimalToAmerican(price),
  });
  const page = bets.slice(0, q.limit);
  const body = {
    sport_key: q.sport, sharp_book: q.sharpBook, devig: 'multiplicative', min_edge: q.minEdge, min_books: q.minBooks,
    scope: q.scopeJson, count: page.length,
    bets: page.map((b, i) => ({
      rank: i + 1, verdict: b.verdict, ...head(b.bet, b.quote.book, b.quote.price),
      effective_price: tidy(b.quote.eff), fair_prob: tidy(b.fair), fair_price: tidy(1 / b.fair),
      fair_price_american: decimalToAmerican(1 / b.fair), edge_pct: b.edge,
      kelly_fraction: tidy(kellyFraction(b.fair, b.quote.eff) / 2), books_compared: b.booksCompared,
      age_seconds: Math.max(0, (q.now - b.oldest) / 1000),
      edge_alert: alerted.has(`${b.bet.ev.id}|${b.bet.market}|${b.bet.player}|${b.bet.point}|${b.bet.slot}|${b.quote.book}`),
    })),
    edge_alerts: alerts.slice(0, MAX_ALERTS).map((a) => {
      const above = a.distance > 0;
      const who = BOOKMAKERS[a.book].key;
      const since = Math.round((q.now - a.changedAt) / 1000);
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
  return JSON.stringify(body);
}
