// The simulator's futures (engine/simulator.ts): per team league, one season-long championship, an event of kind
// `futures` named by its title, whose selections are the league's teams. Title chances are a softmax of latent
// strengths that random-walk slowly. Sportsbooks quote every team to win (outcome: the team) with a futures
// overround spread over the field, as books do (15 to 30 %); prediction markets quote each team's Yes and No
// contracts in whole cents (outcome Yes or No, the team as player), and only on teams given at least MIN_PM_P: the
// No of a longshot, held at the 98-cent ceiling below 1 - p, would cross a sportsbook's Yes with no staleness.
// Every quote is at least the fair probability (Yes: p (1 + margin share), No: 1 - p plus a half spread), so two
// books that share a view never cross (the games' rule): an arbitrage needs a stale board. Each book refreshes its
// whole board on its own cadence; an unchanged price is reported (a verification) half the time.
//
// Seeded apart from the games (FUTURES_SEED), so adding the futures left the games' stream of random numbers, and
// every seeded game the tests and benchmarks read, as it was. Pure and synchronous, like the simulator.

import { Prng } from './prng.js';
import type { EventInput, PriceInput } from './types.js';

/** what a futures board needs of a book (engine/simulator.ts BOOK_ROWS) */
export interface FuturesBook {
  readonly key: string;
  readonly prediction: boolean;
  /** sportsbooks: overround added to every selection's probability (p (1 + margin)); prediction markets: the half
   *  spread in probability added to each contract */
  readonly margin: number;
  /** mean ms between refreshes of its board */
  readonly refreshMs: number;
  /** the decimal price of an implied probability, rounded in the book's favour */
  price(q: number): number;
}

/** the league's championship: its title before the season (e.g. "NBA Championship 2026-27") */
export interface FuturesLeague {
  readonly sportKey: string;
  readonly name: string;
  readonly teams: readonly string[];
}

export const FUTURES_SEED = 0x5eed_f075;
/** spread of the initial strengths (log-odds): the favourite near 15 to 25 %, the weakest a fraction of a percent */
const STRENGTH_SD = 1.1;
/** random walk of a strength, per sqrt(second): about 3 % of a team's chance an hour */
const DRIFT = 0.0005;
/** a book's fixed bias on a team, as a share of its margin (below 1: every quote stays above the fair chance) */
const BIAS_MAX = 0.4;
/** the least and most probability a sportsbook quotes (prices of 500.0 and 1.05) */
const MIN_Q = 0.002;
const MAX_Q = 0.95;
/** prediction markets list contracts on teams given at least this chance */
const MIN_PM_P = 0.02;
const VERIFY_P = 0.5;

export class FuturesBoard {
  readonly id: string;
  readonly title: string;
  readonly commence: number;
  /** reported by the simulator's step() */
  reported = false;
  private readonly strength: Float64Array;
  private readonly p: Float64Array;
  /** per (book, team): the book's bias, and its last price per side (Yes / No; 0: not quoted) */
  private readonly bias: Float64Array;
  private readonly lastYes: Float64Array;
  private readonly lastNo: Float64Array;
  private readonly due: Float64Array;
  /** per book: the next team of a refresh the step's budget cut short (0: none under way) */
  private readonly cursor: Int32Array;

  constructor(rng: Prng, readonly league: FuturesLeague, private readonly books: readonly FuturesBook[], now: number) {
    this.id = rng.hexId();
    const d = new Date(now);
    const y = d.getUTCMonth() >= 6 ? d.getUTCFullYear() : d.getUTCFullYear() - 1;
    this.title = `${league.name} ${y}-${String((y + 1) % 100).padStart(2, '0')}`;
    // settled at the end of the season: about five months ahead, at midnight UTC
    this.commence = Math.ceil((now + 150 * 86_400_000) / 86_400_000) * 86_400_000;
    const n = league.teams.length;
    this.strength = Float64Array.from({ length: n }, () => STRENGTH_SD * rng.normal());
    this.p = new Float64Array(n);
    this.bias = Float64Array.from({ length: books.length * n }, () => rng.range(-BIAS_MAX, BIAS_MAX));
    this.lastYes = new Float64Array(books.length * n);
    this.lastNo = new Float64Array(books.length * n);
    // the first refreshes spread over each book's cadence
    this.due = Float64Array.from(books, (b) => now + rng.range(0, 1) * b.refreshMs);
    this.cursor = new Int32Array(books.length);
    this.chances();
  }

  toInput(): EventInput {
    return {
      id: this.id, sport_key: this.league.sportKey, commence_time: new Date(this.commence).toISOString().slice(0, 19) + 'Z',
      kind: 'futures', title: this.title, status: 'upcoming',
    };
  }

  /** the teams' title chances now (they sum to 1) */
  chancesNow(): Float64Array {
    return this.p;
  }

  /** Moves the strengths over `dt` seconds. */
  drift(rng: Prng, dt: number): void {
    const s = DRIFT * Math.sqrt(dt);
    for (let i = 0; i < this.strength.length; i++) this.strength[i] += s * rng.normal();
    this.chances();
  }

  /** The books' boards due by `now`: their prices onto `out` (unchanged ones half the time) while it holds fewer
   *  than `budget`; a board cut short goes on from the same team at the next step. */
  refreshDue(rng: Prng, now: number, out: PriceInput[], budget: number): void {
    const n = this.league.teams.length;
    for (let b = 0; b < this.books.length; b++) {
      if (this.due[b] > now) continue;
      let i = this.cursor[b];
      for (; i < n && out.length < budget; i++) this.quote(rng, b, i, now, out, false);
      if (i < n) {
        this.cursor[b] = i;
        return;
      }
      this.cursor[b] = 0;
      this.due[b] = now + this.books[b].refreshMs * rng.range(0.5, 1.5);
    }
  }

  /** Every book's current board; changes no state. */
  snapshot(rng: Prng, now: number, out: PriceInput[]): void {
    for (let b = 0; b < this.books.length; b++) for (let i = 0; i < this.league.teams.length; i++) this.quote(rng, b, i, now, out, true);
  }

  private chances(): void {
    let max = -Infinity;
    for (let i = 0; i < this.strength.length; i++) max = Math.max(max, this.strength[i]);
    let sum = 0;
    for (let i = 0; i < this.strength.length; i++) sum += this.p[i] = Math.exp(this.strength[i] - max);
    for (let i = 0; i < this.p.length; i++) this.p[i] /= sum;
  }

  /** book b's price(s) on team i */
  private quote(rng: Prng, b: number, i: number, now: number, out: PriceInput[], all: boolean): void {
    const book = this.books[b];
    const team = this.league.teams[i];
    const k = b * this.league.teams.length + i;
    const p = this.p[i];
    // the margin share with the book's bias on the team: between (1 - BIAS_MAX) and (1 + BIAS_MAX) of it
    const m = book.margin * (1 + this.bias[k]);
    if (!book.prediction) {
      const yes = book.price(Math.min(MAX_Q, Math.max(MIN_Q, p * (1 + m))));
      this.report(out, book.key, team, null, yes, this.lastYes, k, now, rng, all);
      return;
    }
    if (p < MIN_PM_P) return;
    this.report(out, book.key, 'Yes', team, book.price(p + m), this.lastYes, k, now, rng, all);
    this.report(out, book.key, 'No', team, book.price(1 - p + m), this.lastNo, k, now, rng, all);
  }

  /** `all` (a snapshot): every price, and nothing remembered */
  private report(out: PriceInput[], book: string, outcome: string, player: string | null, price: number, last: Float64Array,
    k: number, now: number, rng: Prng, all: boolean): void {
    if (!all) {
      const changed = last[k] !== price;
      last[k] = price;
      if (!changed && rng.next() >= VERIFY_P) return;
    }
    out.push({ book, event_id: this.id, market: 'outrights', outcome, point: null, player, price, ts: now });
  }
}
