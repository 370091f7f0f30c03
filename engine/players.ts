// Player names across books: one canonical spelling per person. Books write the same player differently
// ("Luka Dončić", "Luka Doncic", "Jaren Jackson Jr.", "Jaren Jackson"): names are matched on a key that ignores
// case, accents, punctuation and generational suffixes, and the first spelling seen is the one served.
//
// Initials ("J. Tatum" for "Jayson Tatum") cannot be settled by the key alone: "J. Williams" is Jalen in one game
// and Jaylin in another, or both in one. They are resolved per event: an initial spelling joins the one full name
// of the same event that shares its initial and surname; with two such full names, or none, it stays a player of
// its own. Twice: at ingest (EventPlayers, on the hub), so the shards hold one line per person and find the
// arbitrages and middles between books that spell a player differently; and at serve time (canonicalInEvent),
// for the lines ingest could not settle because the initial spelling came first.

import { Interner } from './interner.js';

const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'v']);

/** lower case without accents, for partial matching */
export function fold(s: string): string {
  return s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
}

/** the matching key of a player name */
export function playerKey(name: string): string {
  const words = fold(name).replace(/[^a-z0-9 ]+/g, ' ').split(' ').filter((w) => w.length > 0);
  while (words.length > 1 && SUFFIXES.has(words[words.length - 1])) words.pop();
  return words.join(' ');
}

/** true for a key whose first name is one letter followed by a surname: "j tatum" (not "a j brown", whose
 *  initials are the name itself) */
export function isInitialKey(key: string): boolean {
  return key.length > 3 && key[1] === ' ' && key[3] !== ' ';
}

/** the key a full name would have written with its first initial: "jayson tatum" gives "j tatum"; '' for one word */
export function initialOf(key: string): string {
  const sp = key.indexOf(' ');
  return sp <= 0 ? '' : key[0] + key.slice(sp);
}

/** A player search: whether a served name answers `query`, a part of it (case and accents aside) or its initial
 *  spelling ("T. Haliburton" finds Tyrese Haliburton, the name the initial is served as). The query is read once,
 *  the names of a whole listing tried against it. */
export function nameMatcher(query: string): (name: string) => boolean {
  const part = fold(query);
  const key = playerKey(query);
  const initial = isInitialKey(key);
  return (name) => fold(name).includes(part) || (initial && initialOf(playerKey(name)) === key);
}

/** Interns players by key: ids are dense, name(id) is the first spelling seen. */
export class PlayerNames {
  private readonly keys = new Interner();
  private readonly names: string[] = [];
  /** spellings already seen: the hot path skips the normalisation (a Unicode decomposition and three regexes) */
  private readonly seen = new Map<string, number>();
  /** per id: its key is an initial spelling ("j tatum") */
  private readonly initial: boolean[] = [];
  /** per id: the key its full name would have written with an initial ("jayson tatum" -> "j tatum"), or '' */
  private readonly initialKeys: string[] = [];

  id(name: string): number {
    const hit = this.seen.get(name);
    if (hit !== undefined) return hit;
    const key = playerKey(name);
    const id = this.keys.id(key);
    if (id === this.names.length) {
      this.names.push(name);
      const init = isInitialKey(key);
      this.initial.push(init);
      this.initialKeys.push(init ? '' : initialOf(key));
    }
    this.seen.set(name, id);
    return id;
  }

  /** true when the id's name is an initial spelling ("J. Tatum") */
  isInitial(id: number): boolean {
    return this.initial[id];
  }

  /** the initial key a full name would be written with ("Jayson Tatum" gives "j tatum"); '' for initial spellings
   *  and one-word names */
  initialKey(id: number): string {
    return this.initialKeys[id];
  }

  name(id: number): string {
    return this.names[id];
  }

  /** the matching key of a player id */
  key(id: number): string {
    return this.keys.name(id);
  }
}

/**
 * The players of one event, each mapped to its person: an id spelled with an initial maps to the single full-name
 * id of the event sharing its initial key; every other id (full names, unmatched or ambiguous initials) maps to
 * itself.
 */
export function canonicalInEvent(ids: Iterable<number>, names: { key(id: number): string }): Map<number, number> {
  const out = new Map<number, number>();
  /** initial key -> the full-name id carrying it, or -2 when two do */
  const full = new Map<string, number>();
  const initials: number[] = [];
  for (const id of ids) {
    if (id < 0 || out.has(id)) continue;
    out.set(id, id);
    const key = names.key(id);
    if (isInitialKey(key)) initials.push(id);
    else {
      const ik = initialOf(key);
      if (ik === '') continue;
      const prev = full.get(ik);
      full.set(ik, prev === undefined || prev === id ? id : -2);
    }
  }
  for (const id of initials) {
    const to = full.get(names.key(id));
    if (to !== undefined && to >= 0) out.set(id, to);
  }
  return out;
}

/** What ingest knows about the players of one event. */
class EventState {
  /** player ids already seen in the event */
  readonly seen = new Set<number>();
  /** initial key -> the one full-name id of the event carrying it, or -2 when two do */
  readonly full = new Map<string, number>();
  /** book-line of an initial spelling, (market, player, book) -> the id it was given at its first quote */
  readonly lines = new Map<number, number>();
}

/**
 * Settles initials at ingest, per event, on the hub (workers/hub.ts), before an observation goes to its shard: an
 * initial spelling ("J. Tatum") is stored as the one full name already seen in the same event that shares its
 * initial and surname ("Jayson Tatum"), so the shards hold one line per person and find arbitrages and middles
 * between a book that writes initials and one that writes full names.
 *
 * A book-line (event, market, player, book) keeps the identity its first quote gave it, so one book's quotes
 * never split over two lines. Hence the order matters:
 * - the full name first: every later initial quote joins it;
 * - the initial first: that book's line for that market stays the initial's own for the life of the event (no
 *   full name was known to join); lines the initial spelling opens after the full name has been seen join it.
 *   /props, the verdicts and best bets still serve the early line under the full name (canonicalInEvent), but
 *   the shards hold it apart, so it forms no arbitrage or middle with the full name's line;
 * - two full names sharing the initial and surname (Jalen and Jaylin Williams) make new initial lines ambiguous:
 *   they stay the initial's own. A line settled before the second full name appeared keeps its full name.
 */
export class EventPlayers {
  private readonly events = new Map<number, EventState>();
  private lastEvent = -1;
  private last: EventState | null = null;

  constructor(private readonly names: PlayerNames) {}

  /** the player id to store for a quote of `book` on (event, market) of the player interned as `player` */
  resolve(event: number, market: number, book: number, player: number): number {
    let st = this.lastEvent === event ? this.last : this.events.get(event);
    if (st === undefined || st === null) this.events.set(event, (st = new EventState()));
    this.lastEvent = event;
    this.last = st;
    const names = this.names;
    if (!st.seen.has(player)) {
      st.seen.add(player);
      const ik = names.initialKey(player);
      if (ik !== '') {
        const prev = st.full.get(ik);
        st.full.set(ik, prev === undefined || prev === player ? player : -2);
      }
    }
    if (!names.isInitial(player)) return player;
    // the same integer key as a book-line of the store (engine/price-store.ts blKey)
    const k = (market * 2097152 + (player + 1)) * 1024 + book;
    let to = st.lines.get(k);
    if (to === undefined) {
      const f = st.full.get(names.key(player));
      to = f !== undefined && f >= 0 ? f : player;
      st.lines.set(k, to);
    }
    return to;
  }

  /** Forgets a final event. */
  drop(event: number): void {
    this.events.delete(event);
    if (this.lastEvent === event) {
      this.lastEvent = -1;
      this.last = null;
    }
  }

  /** events with state, for tests */
  get size(): number {
    return this.events.size;
  }
}
