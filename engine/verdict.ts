// Verdicts (issue 5, calculators): a bet graded against the sharp book's fresh no-vig line. Shared by the single
// bet verdict, the parlay verdict and best bets. Pure and synchronous: reads the read model, takes the clock.
//
// Rule: NO_DATA when the sharp book has no fresh complete outcome set on the bet's line; otherwise by the graded
// price's edge (p * d - 1) * 100, p the multiplicative no-vig probability and d the effective decimal price:
// BET at 2 % or more, LEAN 0.5 to 2 %, FAIR above -0.5 to 0.5 %, PASS below.

import { BOOKMAKERS, MARKETS } from './catalogue.js';
import { devig } from './devig.js';
import { ApiError } from './errors.js';
import { MARKET_INDEX, SLOT } from './ingest.js';
import { kelly } from './analytics-math.js';
import { MAX_PRICE, MIN_TYPED_PRICE, americanToDecimal } from './odds.js';
import { canonicalInEvent, fold, nameMatcher, type PlayerNames } from './players.js';
import { effectiveAt } from './price-store.js';
import type { EventView, ReadModel } from './read-model.js';
import { STALE_MS } from './sla.js';
import type { SportDef } from './types.js';

export type Verdict = 'BET' | 'LEAN' | 'FAIR' | 'PASS' | 'NO_DATA';

const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));


/** American with a sign (-110, +150) or decimal (1.91), as a decimal price from MIN_TYPED_PRICE (American
 *  -10,000,000) to MAX_PRICE (100000, American +9,999,900); NaN otherwise. */
export function parsePrice(raw: string): number {
  const s = raw.trim();
  let d = Number.NaN;
  if (/^[+-]\d+(\.\d+)?$/.test(s)) d = americanToDecimal(Number(s));
  else if (/^\d+(\.\d+)?$/.test(s)) d = Number(s);
  return d >= MIN_TYPED_PRICE && d <= MAX_PRICE ? d : Number.NaN;
}

export function verdictOf(edgePct: number): Exclude<Verdict, 'NO_DATA'> {
  return edgePct >= 2 ? 'BET' : edgePct >= 0.5 ? 'LEAN' : edgePct > -0.5 ? 'FAIR' : 'PASS';
}

/** full-Kelly fraction of the bankroll, 0 when the bet is not +EV (beyond the float noise) or not graded */
export function kellyFraction(p: number, d: number): number {
  return kelly(p, d, 1) || 0;
}

/** Book keys to catalogue ids a verdict may grade: active books, not DFS pick'em (per-entry payouts, not bets). */
export function bookScope(keys: readonly string[]): number[] {
  const out: number[] = [];
  for (const k of keys) {
    const b = BOOK_INDEX.get(k);
    if (b !== undefined && BOOKMAKERS[b].status === 'active' && BOOKMAKERS[b].kind !== 'dfs') out.push(b);
  }
  return out;
}

/** The bet as a caller names it (query parameters of /v1/verdict, one leg of a parlay). */
export interface BetQuery {
  market: string;
  side: string;
  home?: string;
  away?: string;
  event?: string;
  team?: string;
  player?: string;
  line?: number;
  /** the game's id: picks one of two games of the same teams (a doubleheader), which the names cannot */
  eventId?: string;
}

/** How the caller reports a bad field (a 422 naming the query parameter or the leg's body field). */
export interface Complaints {
  invalid(field: string, msg: string, input: unknown): never;
  notFound(msg: string): never;
}

export interface Bet {
  ev: EventView;
  market: number;
  /** the person's ids in this event (a book may spell them with an initial); [-1] for game markets */
  players: number[];
  /** the id served as the person, -1 for game markets */
  player: number;
  slot: number;
  /** the stored point: the home side's for spreads, NaN for moneylines */
  point: number;
}

/** the line as the side sees it (spreads: the away side's is the negated home point); null for moneylines */
export function sideLine(bet: Bet): number | null {
  if (bet.point !== bet.point) return null;
  return MARKETS[bet.market].key === 'spreads' && bet.slot === SLOT.AWAY ? -bet.point || 0 : bet.point;
}

/** Whether an event holds a line of `q.market` for a player `q.player` names (a prop bet that names no game). */
export function quotesPlayer(rm: ReadModel, names: PlayerNames, q: BetQuery): ((ev: EventView) => boolean) | undefined {
  const market = MARKET_INDEX.get(q.market);
  if (market === undefined || MARKETS[market].kind !== 'prop' || q.player === undefined) return undefined;
  const matches = nameMatcher(q.player);
  return (ev) => ev.records.some((r) => {
    const pid = rm.player(r);
    return rm.market(r) === market && pid >= 0 && matches(names.name(pid));
  });
}

/** The game of a bet: home and away, event ("Away @ Home"), team, or, for a player prop without any of these, the
 *  one game in which the player is quoted on the market (`byPlayer`, quotesPlayer). */
export function findGame(events: readonly EventView[], q: BetQuery, c: Complaints, byPlayer?: (ev: EventView) => boolean): EventView {
  const same = (a: string, b: string) => fold(a) === fold(b);
  // several games answer to the names (a doubleheader): never one of them silently
  const one = (field: string, hits: readonly EventView[], input: unknown): EventView => {
    if (hits.length > 1) {
      const games = hits.map((e) => `${e.id} (${e.away} @ ${e.home}, ${new Date(e.commence).toISOString().slice(0, 19)}Z)`).join('; ');
      c.invalid(field, `matches ${hits.length} games: ${games}; give eventId`, input);
    }
    return hits[0];
  };
  if (q.eventId !== undefined) {
    const ev = events.find((e) => e.id === q.eventId);
    if (ev === undefined) c.notFound(`no upcoming or live game ${q.eventId} in this sport`);
    // the names given besides must be this game's
    if (q.home === undefined && q.away === undefined && q.event === undefined && q.team === undefined) return ev;
    events = [ev];
  }
  let home = q.home;
  let away = q.away;
  if (q.event !== undefined) {
    const parts = q.event.split('@');
    if (parts.length !== 2) c.invalid('event', 'must be "Away @ Home"', q.event);
    [away, home] = [parts[0].trim(), parts[1].trim()];
    // two ways of naming the game that disagree: neither silently wins
    if (q.home !== undefined && !same(q.home, home)) c.invalid('home', `differs from event's home team ${home}`, q.home);
    if (q.away !== undefined && !same(q.away, away)) c.invalid('away', `differs from event's away team ${away}`, q.away);
  }
  if (home !== undefined && away !== undefined) {
    const hits = events.filter((e) => same(home!, e.home) && same(away!, e.away));
    if (hits.length === 0) c.notFound(`no upcoming or live game ${away} @ ${home}${q.eventId === undefined ? '' : ` with id ${q.eventId}`}`);
    const ev = one(q.event !== undefined ? 'event' : 'home', hits, q.event ?? q.home);
    if (q.team !== undefined) {
      const t = fold(q.team);
      if (!fold(ev.home).includes(t) && !fold(ev.away).includes(t)) c.invalid('team', `names neither team of ${ev.away} @ ${ev.home}`, q.team);
    }
    return ev;
  }
  if (q.team !== undefined) {
    const t = fold(q.team);
    const hits = events.filter((e) => fold(e.home).includes(t) || fold(e.away).includes(t));
    if (hits.length === 0) c.notFound(`no upcoming or live game of ${q.team}${q.eventId === undefined ? '' : ` with id ${q.eventId}`}`);
    return one('team', hits, q.team);
  }
  if (q.home !== undefined || q.away !== undefined) {
    const name = q.home !== undefined ? 'home' : 'away';
    return c.invalid(name, 'alone does not identify the game: give home and away, event ("Away @ Home") or team', q[name]);
  }
  if (byPlayer !== undefined) {
    // SPEC leaves the game's identifiers optional: a player quoted in one game names it
    const hits = events.filter(byPlayer);
    if (hits.length === 0) c.notFound(`no upcoming or live game with a ${q.market} line for ${q.player}`);
    if (hits.length > 1) c.invalid('player', `is quoted in several games: ${hits.map((e) => `${e.id} (${e.away} @ ${e.home})`).join('; ')}; give team, event or eventId`, q.player);
    return hits[0];
  }
  return c.invalid('event', 'is required to identify the game, or home and away, or team, or eventId (or player, for a prop)', null);
}

/** Resolves market, side, player and line of a bet on a found game; the line defaults to the sharp book's. */
export function resolveBet(rm: ReadModel, names: PlayerNames, ev: EventView, sport: SportDef, q: BetQuery,
  sharp: number, c: Complaints): Bet {
  let market = MARKET_INDEX.get(q.market);
  if (market === undefined) return c.invalid('market', 'must be h2h, h2h_3_way, spreads, totals or a player prop key', q.market);
  if (q.market === 'h2h' && sport.three_way) market = MARKET_INDEX.get('h2h_3_way')!;
  const mdef = MARKETS[market];
  if (mdef.key === 'h2h_3_way' && !sport.three_way) c.invalid('market', `${sport.key} has a two-way moneyline`, q.market);
  if (mdef.kind === 'prop' && !mdef.families.includes(sport.family)) c.invalid('market', `${mdef.key} does not apply to ${sport.key}`, q.market);
  const side = fold(q.side.trim());
  let slot: number;
  // a whole name, else a part of exactly one team's ("Los Angeles" in a Lakers-Clippers game names neither: it was
  // graded as the home team without a word)
  const home = fold(ev.home);
  const away = fold(ev.away);
  const inHome = side !== '' && home.includes(side);
  const inAway = side !== '' && away.includes(side);
  if (mdef.shape === 'over_under') slot = side === 'over' ? SLOT.OVER : side === 'under' ? SLOT.UNDER : -1;
  else if (side === 'home' || side === home) slot = SLOT.HOME;
  else if (side === 'away' || side === away) slot = SLOT.AWAY;
  else if (inHome && inAway) return c.invalid('side', `matches both ${ev.home} and ${ev.away}: name one of them, or home or away`, q.side);
  else if (inHome) slot = SLOT.HOME;
  else if (inAway) slot = SLOT.AWAY;
  else slot = mdef.shape === 'three_way' && side === 'draw' ? SLOT.DRAW : -1;
  if (slot < 0) {
    c.invalid('side', mdef.shape === 'over_under' ? 'must be over or under' : `must be ${ev.home}, ${ev.away}, home or away${mdef.shape === 'three_way' ? ' or draw' : ''}`, q.side);
  }
  // a line or a player the market has not: 422, not graded as the moneyline (a spread's leg sent without its
  // market was graded as the moneyline and answered 200)
  if ((mdef.key === 'h2h' || mdef.key === 'h2h_3_way') && q.line !== undefined) c.invalid('line', `is for spreads, totals and props: ${mdef.key} has no line (set market)`, q.line);
  if (mdef.kind !== 'prop' && q.player !== undefined) c.invalid('player', `is for player props: ${mdef.key} has no player (set market)`, q.player);
  let players = [-1];
  let player = -1;
  if (mdef.kind === 'prop') {
    if (q.player === undefined) c.invalid('player', `is required for ${mdef.key}`, null);
    const canon = canonicalInEvent(ev.records.map((r) => rm.player(r)), names);
    const matches = nameMatcher(q.player);
    const people = new Set<number>();
    for (const r of ev.records) {
      const pid = rm.player(r);
      if (rm.market(r) === market && pid >= 0 && matches(names.name(pid))) people.add(canon.get(pid)!);
    }
    if (people.size === 0) c.notFound(`no ${mdef.key} line for ${q.player} in ${ev.away} @ ${ev.home}`);
    if (people.size > 1) c.invalid('player', `matches several players: ${[...people].map((i) => names.name(i)).join(', ')}`, q.player);
    player = [...people][0];
    players = [...canon].filter(([, to]) => to === player).map(([from]) => from);
  }
  let point = Number.NaN;
  if (mdef.key !== 'h2h' && mdef.key !== 'h2h_3_way') {
    if (q.line !== undefined) point = mdef.key === 'spreads' && slot === SLOT.AWAY ? -q.line || 0 : q.line;
    else {
      const r = findRecord(rm, ev.idx, market, players, sharp);
      if (r < 0) c.invalid('line', `is required: ${BOOKMAKERS[sharp].key} has no ${mdef.key} line here`, null);
      point = rm.point(r);
    }
  }
  return { ev, market, players, player, slot, point };
}

function findRecord(rm: ReadModel, ev: number, market: number, players: readonly number[], book: number): number {
  for (const pid of players) {
    const r = rm.find(ev, market, pid, book);
    if (r >= 0) return r;
  }
  return -1;
}

function samePoint(a: number, b: number): boolean {
  return a === b || (a !== a && b !== b);
}

/** the newest write of an outcome's quote (last change or no-change verification) */
export function lastWrite(rm: ReadModel, r: number, o: number): number {
  return Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o));
}

export interface Quote {
  book: number;
  /** decimal price as quoted */
  price: number;
  /** what a bettor gets (exchange commission off) */
  eff: number;
  /** newest write, ms */
  lu: number;
}

/** the book's fresh price on the bet's side and line, or null */
export function quoteOf(rm: ReadModel, bet: Bet, book: number, now: number): Quote | null {
  const r = findRecord(rm, bet.ev.idx, bet.market, bet.players, book);
  if (r < 0 || !samePoint(rm.point(r), bet.point)) return null;
  const price = rm.price(r, bet.slot);
  const lu = lastWrite(rm, r, bet.slot);
  // an inconsistent own moneyline pair is held back from /odds and every view (ReadModel.consistent)
  if (!(price > 0) || now - lu > STALE_MS[book] || !rm.consistent(r)) return null;
  return { book, price, eff: effectiveAt(price, book), lu };
}

/** the best fresh effective price among the books, and how many of them quote the side on this line */
export function bestQuote(rm: ReadModel, bet: Bet, scope: readonly number[], now: number): { best: Quote | null; compared: number } {
  let best: Quote | null = null;
  let compared = 0;
  for (const b of scope) {
    const q = quoteOf(rm, bet, b, now);
    if (q === null) continue;
    compared++;
    if (best === null || q.eff > best.eff) best = q;
  }
  return { best, compared };
}

export interface Fair {
  /** no-vig probability of the bet's side, NaN when there is none */
  prob: number;
  /** oldest write among the sharp set's quotes (ms), NaN when none */
  lu: number;
  /** why there is no fair probability, '' when there is */
  reason: string;
}

const implied3 = new Float64Array(3);
const fair3 = new Float64Array(3);

/** The sharp book's fresh complete outcome set on the bet's line, de-vigged multiplicatively. */
export function sharpFair(rm: ReadModel, bet: Bet, sharp: number, now: number): Fair {
  const key = BOOKMAKERS[sharp].key;
  const r = findRecord(rm, bet.ev.idx, bet.market, bet.players, sharp);
  if (r < 0 || !samePoint(rm.point(r), bet.point)) return { prob: Number.NaN, lu: Number.NaN, reason: `${key} has no quote on this line` };
  if (!rm.consistent(r)) return { prob: Number.NaN, lu: Number.NaN, reason: `${key}'s moneyline is inconsistent (implied probabilities summing outside 0.98 to 1.5): held back` };
  const n = MARKETS[bet.market].shape === 'three_way' ? 3 : 2;
  let oldest = now;
  for (let o = 0; o < n; o++) {
    const price = rm.price(r, o);
    const lu = lastWrite(rm, r, o);
    if (!(price > 0) || now - lu > STALE_MS[sharp]) return { prob: Number.NaN, lu: Number.NaN, reason: `${key} has no fresh ${n}-way set on this line` };
    implied3[o] = 1 / price;
    oldest = Math.min(oldest, lu);
  }
  const implied = implied3.subarray(0, n);
  const out = fair3.subarray(0, n);
  if (!devig(implied, 'multiplicative', out)) return { prob: Number.NaN, lu: Number.NaN, reason: `${key}'s set is underround: not de-vigged` };
  return { prob: out[bet.slot], lu: oldest, reason: '' };
}

/** Thrown-error helpers for query parameters. */
export function notFound(msg: string): never {
  throw new ApiError('EVENT_NOT_FOUND', msg);
}
