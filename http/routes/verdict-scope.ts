// What the verdict calculators share (GET /v1/verdict, POST /v1/parlay/verdict, best bets): the caller's saved
// preferences and the book scope rule: books, else region, else the saved books, else the saved region, else us.

import { SHARP_BOOK_IDS } from '../../engine/analytics-rows.js';
import { BOOKMAKERS, booksForRegions } from '../../engine/catalogue.js';
import { BOOK_INDEX } from '../../engine/ingest.js';
import type { EventView } from '../../engine/read-model.js';
import type { Region } from '../../engine/types.js';
import { bookScope, notFound, type Complaints } from '../../engine/verdict.js';
import { getPrefs, setPrefs, type Prefs } from '../../sql/prefs.js';
import { invalid } from '../params.js';
import type { Services } from '../services.js';
import { sportKeys } from './discovery.js';
import { activeBooks } from './odds.js';

export const VERDICT_REGIONS = ['us', 'eu', 'uk', 'au', 'ca'];
/** the books whose no-vig line a verdict may grade against, as /ev's sharpBook (a DFS board or a prediction market
 *  as the fair line graded every bet against per-entry payouts) */
export const SHARP_KEYS: readonly string[] = SHARP_BOOK_IDS.map((id) => BOOKMAKERS[id].key);
/** the books whose own price can be graded: not DFS pick'em boards, whose prices are per-entry payouts that no
 *  other view serves as a single bet's price */
export const GRADABLE_KEYS: readonly string[] = BOOKMAKERS.filter((b) => b.kind !== 'dfs').map((b) => b.key);

/** A `books` list of a verdict: active books whose prices can be graded, or a 422 (a merged, decommissioned or DFS
 *  book left the scope silently, and the answer said no book had a price). */
export function gradableBooks(keys: readonly string[], name = 'books'): void {
  activeBooks(keys, name);
  const dfs = keys.filter((k) => !GRADABLE_KEYS.includes(k));
  if (dfs.length > 0) invalid(name, `${dfs.join(', ')}: DFS pick'em boards, whose prices are per-entry payouts, are not graded`, keys.join(','));
}

/** A `books` list in a JSON body (saved preferences, the parlay verdict): 1 to 200 active books whose prices can be
 *  graded. Returns the keys, or what is wrong with the list (the caller answers 422 at its own field). */
export function bodyBooks(list: unknown): string[] | string {
  if (!Array.isArray(list) || list.length === 0 || list.length > 200) return 'must be a list of 1 to 200 book keys';
  const unknown = list.filter((k) => typeof k !== 'string' || BOOKMAKERS[BOOK_INDEX.get(k) ?? -1]?.status !== 'active');
  if (unknown.length > 0) return `unknown or inactive: ${unknown.join(', ')}`;
  const dfs = (list as string[]).filter((k) => !GRADABLE_KEYS.includes(k));
  if (dfs.length > 0) return `${dfs.join(', ')}: DFS pick'em boards, whose prices are per-entry payouts, are not graded`;
  return [...new Set(list as string[])];
}

/** Saved preferences by key id, read once from PostgreSQL and kept current on write. */
export class PrefsStore {
  private readonly cache = new Map<number, Prefs>();
  constructor(private readonly s: Services) {}

  async get(keyId: number): Promise<Prefs> {
    let p = this.cache.get(keyId);
    if (p === undefined) this.cache.set(keyId, (p = await getPrefs(this.s.db, keyId)));
    return p;
  }

  async set(keyId: number, p: Prefs): Promise<void> {
    await setPrefs(this.s.db, keyId, p);
    this.cache.set(keyId, p);
  }
}

export interface Scope {
  books: number[];
  /** what decided it: books, region, saved_books, saved_region or default (us) */
  source: 'books' | 'region' | 'saved_books' | 'saved_region' | 'default';
  region: string | null;
}

/** books, else region, else the saved preference (books, else region), else us; DFS pick'em never counts */
export function scopeOf(books: readonly string[] | undefined, region: string | undefined, saved: Prefs | null): Scope {
  const fromRegion = (r: string) => bookScope(booksForRegions([r as Region]).map((b) => b.key));
  if (books !== undefined) return { books: bookScope(books), source: 'books', region: null };
  if (region !== undefined) return { books: fromRegion(region), source: 'region', region };
  if (saved?.books != null) return { books: bookScope(saved.books), source: 'saved_books', region: null };
  if (saved?.region != null) return { books: fromRegion(saved.region), source: 'saved_region', region: saved.region };
  return { books: fromRegion('us'), source: 'default', region: 'us' };
}

export function scopeJson(sc: Scope): { source: string; region: string | null; books: string[] } {
  return { source: sc.source, region: sc.region, books: sc.books.map((b) => BOOKMAKERS[b].key) };
}

/** 422s naming query parameters */
export const QUERY_COMPLAINTS: Complaints = { invalid, notFound };

/** the non-final events of a sport key (umbrellas resolved), or of the keys it resolved to */
export function openEvents(s: Services, sport: string | readonly string[]): EventView[] {
  return (typeof sport === 'string' ? sportKeys(sport) : sport).flatMap((k) => [...s.hub.readModel.sportEvents(k)]).filter((e) => e.status !== 'final');
}
