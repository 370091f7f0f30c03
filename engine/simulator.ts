// Market simulator: a seeded, clock-driven generator of events and price observations (the `FEED=sim` feed).
//
// Model. Each event carries a latent expected margin `d` (home minus away, in the sport's scoring units) and an
// expected total; in play it also carries the running `lead` and `score`, and the remaining uncertainty shrinks
// with the game clock. Every market price is a normal approximation on those latents: moneyline P(home) =
// Phi(E / sigma), spread cover = Phi((E + point) / sigma), over = 1 - Phi((line - E) / sigma), soccer 3-way
// splits at E = +-0.5. The latents random-walk, jump on steam moves (3-6 % in probability) and, in play,
// on scoring.
//
// Books. A quote set is one book's complete outcome set for (event, market, line, player). Each set keeps the
// latent values it saw at its last refresh (its "view"); sets refresh on their book's own cadence (pinnacle and
// exchanges every few seconds, slow books every 30-120 s), so slow books are stale after a steam move and a fast
// book and a lagging one can cross (a short-lived arbitrage). A book quotes the fair probabilities shifted by a
// fixed per-set bias and a small jitter, adds its margin (p + m (1 - p) / (n - 1): the sum is 1 + m and no price
// reaches 1) and rounds in its own favour (American cents, decimals, the exchange ladder, prediction-market cents,
// or the DFS fixed payout). Bias and jitter stay below the book's margin share on each outcome, so two books that
// share a view never cross: every arbitrage comes from staleness.
//
// Layout. Quote sets live in flat typed arrays indexed by an integer slot (STYLE.md: one shape, no string-keyed
// per-price state); a binary heap on the due time picks the sets to refresh. A set that dies (its event ended,
// or its book does not price in play) stays in the heap until popped, and its slot is reused only then, so a
// slot is never in the heap twice.
//
// Pure and synchronous: no timers, no I/O, no wall clock; all randomness comes from one seeded Prng, so the same
// seed and the same sequence of calls give the same output.

import { Prng } from './prng.js';
import { FUTURES_SEED, FuturesBoard, type FuturesBook } from './sim-futures.js';
import type { BookKind, EventInput, EventStatus, IngestBatch, PriceInput } from './types.js';
import {
  FIRST_NAMES, FIRST_PROP, H2H, H2H_3WAY, LAST_NAMES, NAN, SIM_MARKETS, SPORT_SPECS, SPREADS, STRIKEOUTS, TOTALS,
  type RoleSpec, type SportSpec,
} from './sim-data.js';
export { SIM_MARKETS, SIM_SPORTS } from './sim-data.js';

// ---------------------------------------------------------------------------------------------------------------
// Books

const ROUND_AMERICAN = 0; // US books: integer American odds
const ROUND_DEC2 = 1; // decimal, 2 places
const ROUND_DEC3 = 2; // decimal, 3 places (pinnacle, 1xBet, Matchbook)
const ROUND_LADDER = 3; // Betfair-style tick ladder
const ROUND_CENTS = 4; // prediction market: ask in whole cents, decimal = 100 / cents
const ROUND_FIXED = 5; // DFS pick'em: one fixed price per leg

interface BookSpec {
  readonly key: string;
  readonly kind: BookKind;
  /** overround of a complete set (sportsbooks 2-8 %, exchanges and prediction markets about 1 %) */
  readonly margin: number;
  /** mean seconds between refreshes of one quote set, pre-match */
  readonly refreshS: number;
  readonly rounding: number;
  /** quotes spreads and totals */
  readonly lines: boolean;
  readonly props: boolean;
  /** keeps quoting once the event is in play */
  readonly live: boolean;
  /** probability of listing a given event */
  readonly cover: number;
}

type BookRow = readonly [key: string, kind: BookKind, margin: number, refreshS: number, rounding: number,
  lines: boolean, props: boolean, live: boolean, cover: number];

const BOOK_ROWS: readonly BookRow[] = [
  ['pinnacle', 'sportsbook', 0.022, 2, ROUND_DEC3, true, true, true, 1],
  ['draftkings', 'sportsbook', 0.045, 8, ROUND_AMERICAN, true, true, true, 0.97],
  ['fanduel', 'sportsbook', 0.044, 8, ROUND_AMERICAN, true, true, true, 0.97],
  ['betmgm', 'sportsbook', 0.05, 20, ROUND_AMERICAN, true, true, true, 0.9],
  ['williamhill_us', 'sportsbook', 0.048, 25, ROUND_AMERICAN, true, true, true, 0.9],
  ['espnbet', 'sportsbook', 0.05, 20, ROUND_AMERICAN, true, true, true, 0.85],
  ['betrivers', 'sportsbook', 0.058, 60, ROUND_AMERICAN, true, true, true, 0.85],
  ['fanatics', 'sportsbook', 0.05, 30, ROUND_AMERICAN, true, true, true, 0.85],
  ['bovada', 'sportsbook', 0.05, 45, ROUND_AMERICAN, true, true, true, 0.85],
  ['betonlineag', 'sportsbook', 0.035, 15, ROUND_AMERICAN, true, true, true, 0.85],
  ['lowvig', 'sportsbook', 0.024, 15, ROUND_AMERICAN, true, false, true, 0.8],
  ['williamhill', 'sportsbook', 0.06, 40, ROUND_DEC2, true, true, true, 0.8],
  ['paddypower', 'sportsbook', 0.065, 30, ROUND_DEC2, true, true, true, 0.8],
  ['skybet', 'sportsbook', 0.07, 45, ROUND_DEC2, true, true, true, 0.8],
  ['unibet_eu', 'sportsbook', 0.052, 35, ROUND_DEC2, true, true, true, 0.8],
  ['betsson', 'sportsbook', 0.04, 90, ROUND_DEC2, true, true, true, 0.8],
  ['onexbet', 'sportsbook', 0.03, 60, ROUND_DEC3, true, true, true, 0.8],
  ['sportsbet', 'sportsbook', 0.065, 90, ROUND_DEC2, true, true, true, 0.75],
  ['tab', 'sportsbook', 0.075, 120, ROUND_DEC2, true, true, true, 0.75],
  ['betfair_ex_uk', 'exchange', 0.006, 2.5, ROUND_LADDER, true, false, true, 0.95],
  ['smarkets', 'exchange', 0.01, 4, ROUND_LADDER, true, false, true, 0.8],
  ['matchbook', 'exchange', 0.012, 4, ROUND_DEC3, true, false, true, 0.8],
  ['kalshi', 'prediction', 0.01, 6, ROUND_CENTS, false, false, false, 0.7],
  ['polymarket', 'prediction', 0.008, 5, ROUND_CENTS, false, false, false, 0.7],
  ['prizepicks', 'dfs', 0, 60, ROUND_FIXED, false, true, false, 1],
  ['underdog', 'dfs', 0, 60, ROUND_FIXED, false, true, false, 1],
];

const BOOKS: readonly BookSpec[] = BOOK_ROWS.map(([key, kind, margin, refreshS, rounding, lines, props, live, cover]) =>
  ({ key, kind, margin, refreshS, rounding, lines, props, live, cover }));

export interface SimBookInfo {
  readonly key: string;
  readonly kind: BookKind;
  /** nominal overround of a complete set (0 for DFS, whose price is fixed) */
  readonly margin: number;
  /** mean seconds between refreshes of one quote set, pre-match */
  readonly refresh_s: number;
}

export const SIM_BOOKS: readonly SimBookInfo[] = Object.freeze(BOOKS.map((b) =>
  Object.freeze({ key: b.key, kind: b.kind, margin: b.margin, refresh_s: b.refreshS })));

/** The championship each team league's futures board is named after (engine/sim-futures.ts), and the sport key it is
 *  published under: The Odds API v4's futures sport of the league where the catalogue has one (a v4 client asks
 *  basketball_nba_championship_winner for the NBA title), else the league's own key. */
const FUTURES_BOARDS: Readonly<Record<string, readonly [name: string, sportKey: string]>> = {
  basketball_nba: ['NBA Championship', 'basketball_nba_championship_winner'],
  baseball_mlb: ['World Series', 'baseball_mlb_world_series_winner'],
  americanfootball_nfl: ['Super Bowl', 'americanfootball_nfl_super_bowl_winner'],
  icehockey_nhl: ['Stanley Cup', 'icehockey_nhl_championship_winner'],
  soccer_epl: ['Premier League', 'soccer_epl'],
  soccer_spain_la_liga: ['La Liga', 'soccer_spain_la_liga'],
};
/** the sport keys the futures boards are published under */
export const SIM_FUTURES_SPORTS: readonly string[] = Object.freeze(Object.values(FUTURES_BOARDS).map(([, k]) => k));
/** a book's futures board refreshes this many times slower than its game lines */
const FUTURES_REFRESH_FACTOR = 8;
/** the share of a step's budget the futures boards may take */
const FUTURES_SHARE = 0.1;

/** The books that quote futures: the sportsbooks that quote props (a futures overround of 8 % plus three times
 *  their game margin: 15 % at pinnacle, 30 % at the slowest) and the prediction markets (half their spread). */
const FUTURES_BOOKS: readonly FuturesBook[] = BOOKS.filter((b) => (b.kind === 'sportsbook' && b.props) || b.kind === 'prediction')
  .map((b) => ({
    key: b.key, prediction: b.kind === 'prediction', margin: b.kind === 'prediction' ? b.margin / 2 : 0.08 + 3 * b.margin,
    refreshMs: b.refreshS * FUTURES_REFRESH_FACTOR * 1000, price: (q: number) => roundPrice(q, b.rounding),
  }));

/** Per-leg decimal price of a 2-leg pick'em paying 3x (PrizePicks and Underdog power plays): sqrt(3). */
const DFS_LEG_PRICE = Math.sqrt(3);

// ---------------------------------------------------------------------------------------------------------------
// Tunables (seconds and probabilities)

const MAX_SUBSTEP_MS = 60_000;
/** pre-match drift of the latents, in sigmas per sqrt(second): about 0.5 % of probability per hour */
const PRE_DRIFT = 0.0002;
const PROP_DRIFT = 0.0003;
const LIVE_D_DRIFT = 0.001;
const PRE_STEAM_S = 1800;
const LIVE_STEAM_S = 1200;
const LIVE_REFRESH_FACTOR = 0.4;
const PROP_REFRESH_FACTOR = 2;
/** a due refresh that finds the price unchanged is still reported with this probability */
const VERIFY_P = 0.5;
/** a due refresh redraws the book's jitter with this probability (else the price moves only with the view) */
const JITTER_P = 0.25;
const LINE_OFFSET_P = 0.2;
/**
 * A book's fixed bias and per-refresh jitter, in units of its margin share on the outcome: an outcome priced with
 * margin share m w moves by at most (BIAS_MAX + JITTER_MAX) m w < m w, which keeps every cross-book sum of
 * implied probabilities above 1 while the books share a view (no arbitrage without staleness).
 */
const BIAS_MAX = 0.5;
const JITTER_MAX = 0.1;
const DFS_LINE_OFFSET_P = 0.35;
const MIN_P = 0.03;

// ---------------------------------------------------------------------------------------------------------------
// Maths

/** complementary error function (Numerical Recipes erfcc, fractional error < 1.2e-7) */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 +
    t * 0.17087277)))))))));
  return x >= 0 ? r : 2 - r;
}

function cdf(x: number): number {
  return 0.5 * erfc(-x * Math.SQRT1_2);
}

function pdf(x: number): number {
  return Math.exp(-0.5 * x * x) * 0.3989422804014327;
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

function roundHalf(x: number): number {
  return Math.round(x * 2) / 2;
}

const LADDER: readonly (readonly [upTo: number, base: number, tick: number])[] = [
  [2, 1, 0.01], [3, 2, 0.02], [4, 3, 0.05], [6, 4, 0.1], [10, 6, 0.2], [20, 10, 0.5], [30, 20, 1], [50, 30, 2],
  [100, 50, 5], [Infinity, 100, 10],
];

/** Decimal price for a book's implied probability q (< 0.98), rounded in the book's favour. */
function roundPrice(q: number, mode: number): number {
  const d = 1 / q;
  switch (mode) {
    // one division of whole numbers: the nearest double to the quoted price (1 + 122 / 100 is 2.2199999999999998)
    case ROUND_AMERICAN: {
      if (d >= 2) return (100 + Math.floor((d - 1) * 100 + 1e-9)) / 100;
      const x = Math.ceil(100 / (d - 1) - 1e-9);
      return (x + 100) / x;
    }
    case ROUND_DEC2:
      return Math.floor(d * 100 + 1e-9) / 100;
    case ROUND_DEC3:
      return Math.floor(d * 1000 + 1e-9) / 1000;
    case ROUND_LADDER: {
      for (const [upTo, base, tick] of LADDER) {
        if (d < upTo) return Math.round((base + Math.floor((d - base) / tick + 1e-9) * tick) * 100) / 100;
      }
      return d;
    }
    case ROUND_CENTS: {
      const cents = clamp(Math.ceil(q * 100 - 1e-9), 2, 98);
      return 100 / cents;
    }
    default:
      return DFS_LEG_PRICE;
  }
}

/** A stable person id from a name: 'sim-' and the name folded to ASCII lowercase with dashes. */
function personId(name: string): string {
  return 'sim-' + name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

// ---------------------------------------------------------------------------------------------------------------
// State

interface Player {
  readonly name: string;
  readonly role: RoleSpec;
  readonly mus: readonly number[];
}

class SimEvent {
  readonly id: string;
  readonly sport: number;
  readonly home: string;
  readonly away: string;
  readonly commence: number;
  readonly end: number;
  readonly commenceIso: string;
  status: EventStatus;
  /** status last reported by step(), null before the first report */
  reported: EventStatus | null;
  /** expected final margin (pre-match latent) and expected total */
  d: number;
  total: number;
  /** in play: running margin and running total */
  lead: number;
  score: number;
  readonly propMarket: number[];
  readonly propPlayer: string[];
  readonly propMu: number[];
  readonly propSigma: number[];
  readonly propLine: number[];
  readonly propSoFar: number[];
  /** quote-set slots of this event (live or dead) */
  sets: number[];

  constructor(id: string, sport: number, home: string, away: string, commence: number, end: number) {
    this.id = id;
    this.sport = sport;
    this.home = home;
    this.away = away;
    this.commence = commence;
    this.end = end;
    this.commenceIso = isoSeconds(commence);
    this.status = 'upcoming';
    this.reported = null;
    this.d = 0;
    this.total = 0;
    this.lead = 0;
    this.score = 0;
    this.propMarket = [];
    this.propPlayer = [];
    this.propMu = [];
    this.propSigma = [];
    this.propLine = [];
    this.propSoFar = [];
    this.sets = [];
  }

  /** share of the game played, 0 before the start */
  progress(clock: number): number {
    if (this.status !== 'live') return 0;
    return clamp((clock - this.commence) / (this.end - this.commence), 0, 0.985);
  }

  toInput(): EventInput {
    const sport = SPORT_SPECS[this.sport]!;
    const input: EventInput = {
      id: this.id, sport_key: sport.key, commence_time: this.commenceIso,
      home_team: this.home, away_team: this.away, status: this.status,
    };
    if (sport.key === 'baseball_mlb') {
      // the starters are the players with a strikeouts prop, home team first (makeEvent adds home then away)
      const starters = this.propPlayer.filter((_, k) => this.propMarket[k] === STRIKEOUTS);
      const ref = (name: string | undefined) => (name === undefined ? null : { name, person_id: personId(name) });
      input.probable_pitchers = {
        home: ref(starters[0]), away: ref(starters[1]), venue: null,
        game_status: this.status === 'live' ? 'In Progress' : this.status === 'final' ? 'Final' : 'Scheduled',
      };
    }
    return input;
  }
}

/** Quote sets as parallel typed arrays indexed by slot. */
class QuoteSets {
  capacity: number;
  ev: (SimEvent | null)[];
  book: Uint8Array;
  market: Uint8Array;
  /** index into the event's prop arrays, -1 for game markets */
  prop: Int16Array;
  alive: Uint8Array;
  /** current line: home point for spreads, the line for totals and props, NaN for moneylines */
  point: Float64Array;
  /** the book's fixed distance from the main line */
  offset: Float64Array;
  margin: Float64Array;
  bias: Float64Array;
  jitter: Float64Array;
  /** the latent expectation and its standard deviation the book saw at its last refresh */
  viewA: Float64Array;
  viewB: Float64Array;
  p0: Float64Array;
  p1: Float64Array;
  p2: Float64Array;
  due: Float64Array;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.ev = new Array<SimEvent | null>(capacity).fill(null);
    this.book = new Uint8Array(capacity);
    this.market = new Uint8Array(capacity);
    this.prop = new Int16Array(capacity);
    this.alive = new Uint8Array(capacity);
    this.point = new Float64Array(capacity);
    this.offset = new Float64Array(capacity);
    this.margin = new Float64Array(capacity);
    this.bias = new Float64Array(capacity);
    this.jitter = new Float64Array(capacity);
    this.viewA = new Float64Array(capacity);
    this.viewB = new Float64Array(capacity);
    this.p0 = new Float64Array(capacity);
    this.p1 = new Float64Array(capacity);
    this.p2 = new Float64Array(capacity);
    this.due = new Float64Array(capacity);
  }

  grow(): void {
    const n = this.capacity * 2;
    const f64 = (a: Float64Array): Float64Array => { const b = new Float64Array(n); b.set(a); return b; };
    for (let i = this.capacity; i < n; i++) this.ev.push(null);
    const book = new Uint8Array(n); book.set(this.book); this.book = book;
    const mkt = new Uint8Array(n); mkt.set(this.market); this.market = mkt;
    const prop = new Int16Array(n); prop.set(this.prop); this.prop = prop;
    const alive = new Uint8Array(n); alive.set(this.alive); this.alive = alive;
    this.point = f64(this.point);
    this.offset = f64(this.offset);
    this.margin = f64(this.margin);
    this.bias = f64(this.bias);
    this.jitter = f64(this.jitter);
    this.viewA = f64(this.viewA);
    this.viewB = f64(this.viewB);
    this.p0 = f64(this.p0);
    this.p1 = f64(this.p1);
    this.p2 = f64(this.p2);
    this.due = f64(this.due);
    this.capacity = n;
  }
}

function priceInput(book: string, eventId: string, mkt: string, outcome: string, point: number | null,
  player: string | null, price: number, ts: number): PriceInput {
  return { book, event_id: eventId, market: mkt, outcome, point, player, price, ts };
}

// ---------------------------------------------------------------------------------------------------------------
// Simulator

export interface SimulatorOptions {
  seed: number;
  /** epoch ms */
  now: number;
}

export class Simulator {
  private readonly rng: Prng;
  private clock: number;
  /** events not yet final, in creation order */
  private active: SimEvent[];
  /** events that went final since the last step */
  private finished: SimEvent[];
  /** per sport: competitor names (individual sports) and per-team rosters (team sports with props) */
  private readonly pools: string[][];
  private readonly rosters: Player[][][];
  private readonly q: QuoteSets;
  /** slots ever allocated; slots >= highWater are untouched */
  private highWater: number;
  private aliveCount: number;
  private readonly free: number[];
  private heap: Int32Array;
  private heapSize: number;
  /** one season-long futures board per team league, with a random stream of its own (engine/sim-futures.ts) */
  private readonly boards: FuturesBoard[];
  private readonly futuresRng: Prng;
  /** the board the next step's futures refreshes start from */
  private nextBoard = 0;

  constructor(opts: SimulatorOptions) {
    this.rng = new Prng(opts.seed);
    this.clock = opts.now;
    this.active = [];
    this.finished = [];
    this.pools = [];
    this.rosters = [];
    this.q = new QuoteSets(1 << 15);
    this.highWater = 0;
    this.aliveCount = 0;
    this.free = [];
    this.heap = new Int32Array(1 << 15);
    this.heapSize = 0;

    const rng = this.rng;
    for (let s = 0; s < SPORT_SPECS.length; s++) this.buildNames(s);
    const now = opts.now;
    for (let s = 0; s < SPORT_SPECS.length; s++) {
      const spec = SPORT_SPECS[s]!;
      const n = 7 + rng.int(5);
      for (let j = 0; j < n; j++) {
        let commence: number;
        if (j < 2) commence = Math.floor((now - rng.range(0.1, 0.75) * spec.minutes * 60_000) / 60_000) * 60_000;
        else if (j < 4) commence = ceil5(now + rng.range(300, 3 * 3600) * 1000);
        else commence = ceil5(now + rng.range(3 * 3600, 96 * 3600) * 1000);
        this.active.push(this.makeEvent(s, commence));
      }
    }
    this.futuresRng = new Prng((opts.seed ^ FUTURES_SEED) >>> 0);
    this.boards = [];
    for (const spec of SPORT_SPECS) {
      const board = FUTURES_BOARDS[spec.key];
      if (board !== undefined && spec.teams !== null) {
        this.boards.push(new FuturesBoard(this.futuresRng, { sportKey: board[1], name: board[0], teams: spec.teams }, FUTURES_BOOKS, now));
      }
    }
  }

  /** Every event currently known (upcoming and in play), the futures boards last. */
  events(): EventInput[] {
    return [...this.active.map((e) => e.toInput()), ...this.boards.map((f) => f.toInput())];
  }

  /**
   * Advance the clock to `now`, then emit about `count` observations: due refreshes first (most overdue first),
   * then refreshes of random quote sets to fill the budget. A set is emitted whole (2 or 3 outcomes), so the
   * count may exceed `count` by up to 2. Events are those new or changed in status since the last step.
   */
  step(now: number, count: number): IngestBatch {
    this.advance(now);
    const events = this.takeReports();
    const prices: PriceInput[] = [];
    const budget = Math.max(0, Math.floor(count));
    const q = this.q;
    const ts = this.clock;
    // the futures boards due (a few books a minute, each a board of 20 to 32 teams) first, in a tenth of the budget at
    // most: the games' due sets alone often take all of it, and a board cut short goes on at the next step
    // (each step starts from the next board, so that one always due does not starve the others)
    const share = Math.ceil(budget * FUTURES_SHARE);
    for (let j = 0; j < this.boards.length; j++) this.boards[(this.nextBoard + j) % this.boards.length]!.refreshDue(this.futuresRng, ts, prices, share);
    if (this.boards.length > 0) this.nextBoard = (this.nextBoard + 1) % this.boards.length;

    while (prices.length < budget && this.heapSize > 0) {
      const id = this.heap[0]!;
      if (q.due[id]! > ts) break;
      this.heapPop();
      if (q.alive[id] === 0) {
        q.ev[id] = null;
        this.free.push(id);
        continue;
      }
      this.refreshDue(id, ts, prices);
      q.due[id] = ts + this.intervalMs(id) * this.rng.range(0.25, 1.75);
      this.heapPush(id);
    }

    let tries = budget * 8 + 64;
    while (prices.length < budget && this.aliveCount > 0 && tries-- > 0) {
      const id = this.rng.int(this.highWater);
      if (q.alive[id] !== 0) this.refreshFill(id, ts, prices);
    }
    return { events, prices };
  }

  /** The full current quote set, one observation per live quote stamped `now`; changes no state. */
  snapshot(now: number): IngestBatch {
    const prices: PriceInput[] = [];
    const alive = this.q.alive;
    for (let id = 0; id < this.highWater; id++) if (alive[id] !== 0) this.emit(id, now, prices);
    for (const f of this.boards) f.snapshot(this.futuresRng, now, prices);
    return { events: this.events(), prices };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Clock

  private advance(now: number): void {
    while (this.clock < now) {
      const t0 = this.clock;
      const t1 = Math.min(now, t0 + MAX_SUBSTEP_MS);
      this.clock = t1;
      const n = this.active.length;
      let ended = 0;
      for (let i = 0; i < n; i++) {
        if (this.evolve(this.active[i]!, t0, t1)) ended++;
      }
      for (const f of this.boards) f.drift(this.futuresRng, (t1 - t0) / 1000);
      if (ended > 0) this.active = this.active.filter((e) => e.status !== 'final');
    }
  }

  /** Moves one event from t0 to t1; true when it ended (a replacement has then been added). */
  private evolve(e: SimEvent, t0: number, t1: number): boolean {
    const spec = SPORT_SPECS[e.sport]!;
    if (e.status === 'upcoming') {
      const dt = (Math.min(t1, e.commence) - t0) / 1000;
      if (dt > 0) this.driftPre(e, spec, dt);
      if (t1 < e.commence) return false;
      e.status = 'live';
      this.killWhere(e, true);
      t0 = e.commence;
    }
    const dt = (Math.min(t1, e.end) - t0) / 1000;
    if (dt > 0) this.driftLive(e, spec, dt);
    if (t1 < e.end) return false;
    e.status = 'final';
    this.killWhere(e, false);
    this.finished.push(e);
    this.active.push(this.makeEvent(e.sport, ceil5(t1 + this.rng.range(20 * 60, 72 * 3600) * 1000)));
    return true;
  }

  private driftPre(e: SimEvent, spec: SportSpec, dt: number): void {
    const rng = this.rng;
    const sq = Math.sqrt(dt);
    e.d += spec.sigma * PRE_DRIFT * sq * rng.normal();
    if (spec.totalSigma > 0) e.total += spec.totalSigma * PRE_DRIFT * sq * rng.normal();
    const mu = e.propMu;
    for (let k = 0; k < mu.length; k++) {
      mu[k] = Math.max(0.05, mu[k]! + e.propSigma[k]! * PROP_DRIFT * sq * rng.normal());
    }
    if (rng.next() < 1 - Math.exp(-dt / PRE_STEAM_S)) this.steam(e, spec);
  }

  private driftLive(e: SimEvent, spec: SportSpec, dt: number): void {
    const rng = this.rng;
    const frac = dt / ((e.end - e.commence) / 1000);
    const sf = Math.sqrt(frac);
    e.d += spec.sigma * LIVE_D_DRIFT * Math.sqrt(dt) * rng.normal();
    if (spec.discrete) {
      const gh = rng.poisson(Math.max(0.05, (e.total + e.d) / 2) * frac);
      const ga = rng.poisson(Math.max(0.05, (e.total - e.d) / 2) * frac);
      e.lead += gh - ga;
      e.score += gh + ga;
    } else {
      e.lead += e.d * frac + spec.sigma * sf * rng.normal();
      if (spec.totalSigma > 0) e.score += Math.max(0, e.total * frac + spec.totalSigma * sf * rng.normal());
    }
    const mu = e.propMu;
    for (let k = 0; k < mu.length; k++) {
      e.propSoFar[k] = e.propSoFar[k]! + Math.max(0, mu[k]! * frac + 0.7 * e.propSigma[k]! * sf * rng.normal());
    }
    if (rng.next() < 1 - Math.exp(-dt / LIVE_STEAM_S)) this.steam(e, spec);
  }

  /** A steam move: the fair moneyline jumps 3-6 % in probability (sometimes the total and a prop too). */
  private steam(e: SimEvent, spec: SportSpec): void {
    const rng = this.rng;
    const live = e.status === 'live';
    const rem = 1 - e.progress(this.clock);
    const sr = Math.sqrt(Math.max(rem, 0.015));
    const sign = rng.next() < 0.5 ? -1 : 1;
    const dp = rng.range(0.03, 0.06);
    const sigma = spec.sigma * sr;
    const z = (e.lead + e.d * rem) / sigma;
    const shift = sign * dp * sigma / Math.max(0.05, pdf(z));
    if (live) e.lead += shift;
    else e.d += shift;
    if (spec.totalSigma > 0 && rng.next() < 0.3) {
      const tshift = (rng.next() < 0.5 ? -1 : 1) * rng.range(0.03, 0.06) * spec.totalSigma * sr / 0.4;
      if (live) e.score = Math.max(0, e.score + tshift);
      else e.total += tshift;
    }
    if (e.propMu.length > 0 && rng.next() < 0.3) {
      const k = rng.int(e.propMu.length);
      e.propMu[k] = e.propMu[k]! * rng.range(0.8, 1.2);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Events and quote sets

  private buildNames(s: number): void {
    const spec = SPORT_SPECS[s]!;
    const rng = this.rng;
    const taken = new Set<string>();
    const fresh = (): string => {
      for (;;) {
        const name = `${rng.pick(FIRST_NAMES[spec.pool])} ${rng.pick(LAST_NAMES[spec.pool])}`;
        if (!taken.has(name)) {
          taken.add(name);
          return name;
        }
      }
    };
    const pool: string[] = [];
    const rosters: Player[][] = [];
    if (spec.teams === null) {
      for (let i = 0; i < 48; i++) pool.push(fresh());
    } else if (spec.roster.length > 0) {
      for (let t = 0; t < spec.teams.length; t++) {
        const team: Player[] = [];
        for (const role of spec.roster) {
          for (let c = 0; c < role.count; c++) {
            const mus: number[] = [];
            for (const st of role.stats) {
              mus.push(Number.isNaN(st.lo) ? mus[0]! + mus[1]! + mus[2]! : rng.range(st.lo, st.hi));
            }
            team.push({ name: fresh(), role, mus });
          }
        }
        rosters.push(team);
      }
    }
    this.pools.push(pool);
    this.rosters.push(rosters);
  }

  private makeEvent(s: number, commence: number): SimEvent {
    const rng = this.rng;
    const spec = SPORT_SPECS[s]!;
    const names = spec.teams ?? this.pools[s]!;
    const busy = new Set<string>();
    for (const e of this.active) {
      if (e.sport === s && e.status !== 'final') {
        busy.add(e.home);
        busy.add(e.away);
      }
    }
    let hi = rng.int(names.length);
    for (let tries = 0; tries < 20 && busy.has(names[hi]!); tries++) hi = rng.int(names.length);
    let ai = rng.int(names.length);
    for (let tries = 0; tries < 20 && (ai === hi || busy.has(names[ai]!)); tries++) ai = rng.int(names.length);
    if (ai === hi) ai = (hi + 1) % names.length;

    const id = rng.hexId();
    const end = commence + Math.round(spec.minutes * rng.range(0.92, 1.12)) * 60_000;
    const e = new SimEvent(id, s, names[hi]!, names[ai]!, commence, end);
    e.d = spec.dMean + spec.dSd * rng.normal();
    e.total = spec.total + spec.totalSd * rng.normal();
    if (spec.teams !== null && spec.roster.length > 0) {
      for (const t of [hi, ai]) {
        for (const p of this.rosters[s]![t]!) {
          for (let j = 0; j < p.role.stats.length; j++) {
            const st = p.role.stats[j]!;
            e.propMarket.push(st.market);
            e.propPlayer.push(p.name);
            e.propMu.push(p.mus[j]! * rng.range(0.9, 1.1));
            e.propSigma.push(st.sigma);
            e.propLine.push(st.line);
            e.propSoFar.push(0);
          }
        }
      }
    }

    const clock = this.clock;
    if (commence <= clock) {
      e.status = 'live';
      const p = clamp((clock - commence) / (end - commence), 0, 0.985);
      const sp = Math.sqrt(p);
      const lead = e.d * p + spec.sigma * sp * rng.normal();
      const score = Math.max(0, e.total * p + spec.totalSigma * sp * rng.normal());
      e.lead = spec.discrete ? Math.round(lead) : lead;
      e.score = spec.discrete ? Math.round(score) : score;
      for (let k = 0; k < e.propMu.length; k++) {
        e.propSoFar[k] = Math.max(0, e.propMu[k]! * p + 0.7 * e.propSigma[k]! * sp * rng.normal());
      }
    }

    const live = e.status === 'live';
    const moneyline = spec.threeWay ? H2H_3WAY : H2H;
    const propBooks: number[] = [];
    for (let b = 0; b < BOOKS.length; b++) {
      const bk = BOOKS[b]!;
      if (live && !bk.live) continue;
      if (bk.kind === 'dfs') {
        if (e.propMu.length > 0) propBooks.push(b);
        continue;
      }
      if (rng.next() >= bk.cover) continue;
      this.addSet(e, b, moneyline, -1);
      if (bk.lines && spec.spreads !== 'none') {
        this.addSet(e, b, SPREADS, -1);
        this.addSet(e, b, TOTALS, -1);
      }
      if (bk.props) propBooks.push(b);
    }
    for (let k = 0; k < e.propMu.length; k++) {
      for (const b of propBooks) {
        const kind = BOOKS[b]!.kind;
        const p = kind === 'dfs' ? 0.85 : b === 0 ? 0.55 : 0.75;
        if (rng.next() < p) this.addSet(e, b, e.propMarket[k]!, k);
      }
    }
    return e;
  }

  private addSet(e: SimEvent, b: number, m: number, k: number): void {
    const rng = this.rng;
    if (this.highWater === this.q.capacity && this.free.length === 0) {
      this.q.grow();
      const heap = new Int32Array(this.q.capacity);
      heap.set(this.heap);
      this.heap = heap;
    }
    const id = this.free.length > 0 ? this.free.pop()! : this.highWater++;
    const q = this.q;
    const bk = BOOKS[b]!;
    q.ev[id] = e;
    q.book[id] = b;
    q.market[id] = m;
    q.prop[id] = k;
    q.alive[id] = 1;
    this.aliveCount++;
    q.point[id] = NAN;

    let offset = 0;
    if (m === SPREADS || m === TOTALS) {
      if (bk.kind === 'sportsbook' && b !== 0 && rng.next() < LINE_OFFSET_P) offset = rng.next() < 0.5 ? -0.5 : 0.5;
    } else if (k >= 0 && Number.isNaN(e.propLine[k]!)) {
      const p = bk.kind === 'dfs' ? DFS_LINE_OFFSET_P : LINE_OFFSET_P;
      if (rng.next() < p) offset = rng.next() < 0.5 ? -1 : 1;
    }
    q.offset[id] = offset;

    let margin = bk.margin;
    if (bk.kind === 'sportsbook') {
      if (k >= 0) margin *= 1.25;
      margin = clamp(margin * (1 + 0.06 * rng.normal()), 0.021, 0.079);
    } else if (bk.kind !== 'dfs') {
      margin = clamp(margin * (1 + 0.1 * rng.normal()), 0.005, 0.015);
    }
    q.margin[id] = margin;
    q.bias[id] = bk.kind === 'sportsbook' && b !== 0 ? rng.range(-BIAS_MAX, BIAS_MAX) : 0;
    q.jitter[id] = bk.kind === 'dfs' ? 0 : rng.range(-JITTER_MAX, JITTER_MAX);

    this.view(id);
    this.moveLine(id, true);
    this.price(id);
    q.due[id] = this.clock + rng.next() * this.intervalMs(id);
    this.heapPush(id);
    e.sets.push(id);
  }

  /** Kills the event's sets: all of them, or (inPlay) those of books that do not price in play. */
  private killWhere(e: SimEvent, inPlay: boolean): void {
    const q = this.q;
    const keep: number[] = [];
    for (const id of e.sets) {
      if (q.alive[id] === 0) continue;
      if (inPlay && BOOKS[q.book[id]!]!.live) {
        keep.push(id);
        continue;
      }
      q.alive[id] = 0;
      this.aliveCount--;
    }
    e.sets = keep;
  }

  private intervalMs(id: number): number {
    const q = this.q;
    let ms = BOOKS[q.book[id]!]!.refreshS * 1000;
    if (q.ev[id]!.status === 'live') ms *= LIVE_REFRESH_FACTOR;
    if (q.prop[id]! >= 0) ms *= PROP_REFRESH_FACTOR;
    return ms;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Refreshes and pricing

  /** A scheduled refresh: the book catches up with the fair line; emitted if changed, else sometimes. */
  private refreshDue(id: number, ts: number, out: PriceInput[]): void {
    const q = this.q;
    const o0 = q.p0[id]!, o1 = q.p1[id]!, o2 = q.p2[id]!, op = q.point[id]!;
    this.view(id);
    this.moveLine(id, false);
    if (BOOKS[q.book[id]!]!.kind !== 'dfs' && this.rng.next() < JITTER_P) {
      q.jitter[id] = this.rng.range(-JITTER_MAX, JITTER_MAX);
    }
    this.price(id);
    const same = q.p0[id] === o0 && q.p1[id] === o1 && Object.is(q.p2[id], o2) && Object.is(q.point[id], op);
    if (!same || this.rng.next() < VERIFY_P) this.emit(id, ts, out);
  }

  /** A budget-filling poll: a no-change verification, or a small re-shading around the book's stale view. */
  private refreshFill(id: number, ts: number, out: PriceInput[]): void {
    const q = this.q;
    if (BOOKS[q.book[id]!]!.kind !== 'dfs' && this.rng.next() < 0.5) {
      q.jitter[id] = this.rng.range(-JITTER_MAX, JITTER_MAX);
      this.price(id);
    }
    this.emit(id, ts, out);
  }

  /** Records the latent expectation and spread the set's market depends on, as of now. */
  private view(id: number): void {
    const q = this.q;
    const e = q.ev[id]!;
    const spec = SPORT_SPECS[e.sport]!;
    const m = q.market[id]!;
    const rem = 1 - e.progress(this.clock);
    const sr = Math.sqrt(Math.max(rem, 0.015));
    if (m === TOTALS) {
      q.viewA[id] = e.score + e.total * rem;
      q.viewB[id] = spec.totalSigma * sr;
    } else if (m >= FIRST_PROP) {
      const k = q.prop[id]!;
      q.viewA[id] = e.propSoFar[k]! + e.propMu[k]! * rem;
      q.viewB[id] = e.propSigma[k]! * sr;
    } else {
      q.viewA[id] = e.lead + e.d * rem;
      q.viewB[id] = spec.sigma * sr;
    }
  }

  /** Moves a spread, total or prop line toward the book's target, half a point (props: one) at a time. */
  private moveLine(id: number, init: boolean): void {
    const q = this.q;
    const m = q.market[id]!;
    if (m === H2H || m === H2H_3WAY) return;
    const a = q.viewA[id]!;
    let target: number;
    let step: number;
    if (m === SPREADS) {
      if (SPORT_SPECS[q.ev[id]!.sport]!.spreads === 'runline') {
        q.point[id] = a >= 0 ? -1.5 : 1.5;
        return;
      }
      target = 0 - roundHalf(a) + q.offset[id]!;
      step = 0.5;
    } else if (m === TOTALS) {
      target = Math.max(0.5, roundHalf(a) + q.offset[id]!);
      step = 0.5;
    } else {
      const fixed = q.ev[id]!.propLine[q.prop[id]!]!;
      if (!Number.isNaN(fixed)) {
        q.point[id] = fixed;
        return;
      }
      target = Math.max(0.5, Math.floor(a) + 0.5 + q.offset[id]!);
      step = 1;
    }
    const cur = q.point[id]!;
    if (init || Number.isNaN(cur)) {
      q.point[id] = target + 0;
      return;
    }
    const diff = target - cur;
    const ad = Math.abs(diff);
    if (ad >= 3 * step) q.point[id] = target + 0;
    else if (ad >= step - 1e-9 && this.rng.next() < 0.5) q.point[id] = cur + (diff > 0 ? step : -step) + 0;
  }

  /** Prices the set from its view, line, bias, jitter and margin. */
  private price(id: number): void {
    const q = this.q;
    const bk = BOOKS[q.book[id]!]!;
    const m = q.market[id]!;
    const mode = bk.rounding;
    if (mode === ROUND_FIXED) {
      q.p0[id] = DFS_LEG_PRICE;
      q.p1[id] = DFS_LEG_PRICE;
      q.p2[id] = NAN;
      return;
    }
    const a = q.viewA[id]!;
    const s = q.viewB[id]!;
    const margin = q.margin[id]!;
    const shade = (q.bias[id]! + q.jitter[id]!) * margin;
    if (m === H2H_3WAY) {
      let ph = 1 - cdf((0.5 - a) / s);
      let pa = cdf((-0.5 - a) / s);
      // the shade moves home against away, bounded by the smaller of their margin shares (m (1 - p) / 2)
      const sh = shade * 0.5 * Math.min(1 - ph, 1 - pa);
      ph = clamp(ph + sh, 0.025, 0.95);
      pa = clamp(pa - sh, 0.025, 0.95);
      pa = clamp(pa, 0.025, 0.95);
      let pd = Math.max(0.025, 1 - ph - pa);
      const sum = ph + pa + pd;
      ph /= sum;
      pa /= sum;
      pd /= sum;
      const half = margin / 2;
      q.p0[id] = roundPrice(ph + half * (1 - ph), mode);
      q.p1[id] = roundPrice(pd + half * (1 - pd), mode);
      q.p2[id] = roundPrice(pa + half * (1 - pa), mode);
      return;
    }
    let p: number;
    if (m === H2H) p = cdf(a / s);
    else if (m === SPREADS) p = cdf((a + q.point[id]!) / s);
    else p = 1 - cdf((q.point[id]! - a) / s);
    // the shade is bounded by the smaller margin share (m p or m (1 - p)), so books never cross on the same view
    p = clamp(p + shade * Math.min(p, 1 - p), MIN_P, 1 - MIN_P);
    const r = 1 - p;
    q.p0[id] = roundPrice(p + margin * r, mode);
    q.p1[id] = roundPrice(r + margin * p, mode);
    q.p2[id] = NAN;
  }

  private emit(id: number, ts: number, out: PriceInput[]): void {
    const q = this.q;
    const e = q.ev[id]!;
    const book = BOOKS[q.book[id]!]!.key;
    const m = q.market[id]!;
    const key = SIM_MARKETS[m]!;
    switch (m) {
      case H2H:
        out.push(priceInput(book, e.id, key, e.home, null, null, q.p0[id]!, ts));
        out.push(priceInput(book, e.id, key, e.away, null, null, q.p1[id]!, ts));
        return;
      case H2H_3WAY:
        out.push(priceInput(book, e.id, key, e.home, null, null, q.p0[id]!, ts));
        out.push(priceInput(book, e.id, key, 'Draw', null, null, q.p1[id]!, ts));
        out.push(priceInput(book, e.id, key, e.away, null, null, q.p2[id]!, ts));
        return;
      case SPREADS: {
        const point = q.point[id]!;
        out.push(priceInput(book, e.id, key, e.home, point, null, q.p0[id]!, ts));
        out.push(priceInput(book, e.id, key, e.away, 0 - point, null, q.p1[id]!, ts));
        return;
      }
      default: {
        const point = q.point[id]!;
        const k = q.prop[id]!;
        const player = k >= 0 ? e.propPlayer[k]! : null;
        out.push(priceInput(book, e.id, key, 'Over', point, player, q.p0[id]!, ts));
        out.push(priceInput(book, e.id, key, 'Under', point, player, q.p1[id]!, ts));
      }
    }
  }

  private takeReports(): EventInput[] {
    const out: EventInput[] = [];
    for (const e of this.active) {
      if (e.reported !== e.status) {
        e.reported = e.status;
        out.push(e.toInput());
      }
    }
    for (const e of this.finished) {
      e.reported = 'final';
      out.push(e.toInput());
    }
    this.finished = [];
    for (const f of this.boards) {
      if (f.reported) continue;
      f.reported = true;
      out.push(f.toInput());
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Due-time heap

  private heapPush(id: number): void {
    const heap = this.heap;
    const due = this.q.due;
    const key = due[id]!;
    let i = this.heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pid = heap[parent]!;
      if (due[pid]! <= key) break;
      heap[i] = pid;
      i = parent;
    }
    heap[i] = id;
  }

  private heapPop(): number {
    const heap = this.heap;
    const due = this.q.due;
    const top = heap[0]!;
    const n = --this.heapSize;
    if (n === 0) return top;
    const last = heap[n]!;
    const key = due[last]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && due[heap[r]!]! < due[heap[l]!]! ? r : l;
      if (due[heap[c]!]! >= key) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = last;
    return top;
  }
}

function ceil5(ms: number): number {
  return Math.ceil(ms / 300_000) * 300_000;
}
