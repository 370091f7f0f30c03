// Player names across books: one canonical spelling per person. Books write the same player differently
// ("Luka Dončić", "Luka Doncic", "Jaren Jackson Jr.", "Jaren Jackson"): names are matched on a key that ignores
// case, accents, punctuation and generational suffixes, and the first spelling seen is the one served.
//
// Initials ("J. Tatum" for "Jayson Tatum") cannot be settled by the key alone: "J. Williams" is Jalen in one game
// and Jaylin in another, or both in one. They are resolved per event (canonicalInEvent): an initial spelling
// joins the one full name of the same event that shares its initial and surname; with two such full names, or
// none, it stays a player of its own.

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

/** Interns players by key: ids are dense, name(id) is the first spelling seen. */
export class PlayerNames {
  private readonly keys = new Interner();
  private readonly names: string[] = [];
  /** spellings already seen: the hot path skips the normalisation (a Unicode decomposition and three regexes) */
  private readonly seen = new Map<string, number>();

  id(name: string): number {
    const hit = this.seen.get(name);
    if (hit !== undefined) return hit;
    const id = this.keys.id(playerKey(name));
    if (id === this.names.length) this.names.push(name);
    this.seen.set(name, id);
    return id;
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
export function canonicalInEvent(ids: Iterable<number>, names: PlayerNames): Map<number, number> {
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
