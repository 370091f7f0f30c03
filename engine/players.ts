// Player names across books: one canonical spelling per person. Books write the same player differently
// ("Luka Dončić", "Luka Doncic", "Jaren Jackson Jr.", "Jaren Jackson"): names are matched on a key that ignores
// case, accents, punctuation and generational suffixes, and the first spelling seen is the one served.

import { Interner } from './interner.js';

const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'v']);

/** the matching key of a player name */
export function playerKey(name: string): string {
  const words = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9 ]+/g, ' ').split(' ').filter((w) => w.length > 0);
  while (words.length > 1 && SUFFIXES.has(words[words.length - 1])) words.pop();
  return words.join(' ');
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
}
