// Parlay verdict math (issue 5). Each leg is graded by engine/verdict.ts against the sharp book's no-vig line.
// The parlay's fair probability is the product of the legs' no-vig probabilities, which assumes the legs are
// independent: false for two legs of one game (a same-game parlay), hence the warning. A parlay is placed at one
// book, so a book's parlay price is the product of its own effective prices and only a book quoting every leg
// fresh can take it. EV = (P * D - 1) * 100.

import type { ReadModel } from './read-model.js';
import { quoteOf, type Bet, type Quote } from './verdict.js';

/** product of the legs' fair probabilities */
export function parlayFairProb(probs: readonly number[]): number {
  let p = 1;
  for (const x of probs) p *= x;
  return p;
}

/** product of the legs' decimal prices */
export function parlayPrice(prices: readonly number[]): number {
  let d = 1;
  for (const x of prices) d *= x;
  return d;
}

export interface ParlayBook {
  book: number;
  /** product of the book's effective leg prices */
  price: number;
  legs: Quote[];
}

/** The book's quotes on every leg, or null when it misses one. */
export function parlayAt(rm: ReadModel, bets: readonly Bet[], book: number, now: number): ParlayBook | null {
  const legs: Quote[] = [];
  for (const bet of bets) {
    const q = quoteOf(rm, bet, book, now);
    if (q === null) return null;
    legs.push(q);
  }
  return { book, price: parlayPrice(legs.map((q) => q.eff)), legs };
}

/** Every book of the scope quoting every leg fresh, best parlay price first (ties keep the scope's order). */
export function parlayBooks(rm: ReadModel, bets: readonly Bet[], scope: readonly number[], now: number): ParlayBook[] {
  const out: ParlayBook[] = [];
  for (const b of scope) {
    const pb = parlayAt(rm, bets, b, now);
    if (pb !== null) out.push(pb);
  }
  return out.sort((a, b) => b.price - a.price);
}

export interface SameGame {
  event_id: string;
  /** leg indexes, ascending */
  legs: number[];
}

/** legs sharing an event: their outcomes are correlated, so the product of their probabilities is not fair */
export function sameGameGroups(bets: readonly Bet[]): SameGame[] {
  const by = new Map<string, number[]>();
  bets.forEach((b, i) => {
    const list = by.get(b.ev.id);
    if (list === undefined) by.set(b.ev.id, [i]);
    else list.push(i);
  });
  return [...by].filter(([, legs]) => legs.length > 1).map(([event_id, legs]) => ({ event_id, legs }));
}

/** index of the lowest edge, skipping NaN (ungraded legs); the first on a tie; -1 when none is graded */
export function weakestLeg(edges: readonly number[]): number {
  let at = -1;
  for (let i = 0; i < edges.length; i++) if (edges[i] === edges[i] && (at < 0 || edges[i] < edges[at])) at = i;
  return at;
}
