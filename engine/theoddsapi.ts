// The Odds API v4, read side: its JSON (the sports list, the odds of a sport, the odds of one event) and its
// usage headers and error bodies, mapped into ingest batches (DESIGN.md section 5). Pure: the connector
// (workers/theoddsapi-feed.ts) fetches, this file only reads what came back.
//
// Shapes (the v4 documentation; fixtures in test/fixtures/theoddsapi/):
//   GET /v4/sports?all=true          [{key, group, title, description, active, has_outrights}]
//   GET /v4/sports/{sport}/odds      [{id, sport_key, sport_title, commence_time, home_team, away_team,
//                                      bookmakers: [{key, title, last_update, markets: [{key, last_update,
//                                      outcomes: [{name, price, point?, description?}]}]}]}]
//   GET /v4/sports/{sport}/events/{id}/odds   one such event object (player props: `description` names the
//                                      player, `name` is Over or Under, `point` the line)
//   GET /v4/sports/{sport}/events    the same events without bookmakers (costs no quota)
// Outright sports list events with home_team and away_team null: they become `futures` events titled by
// sport_title, and each outcome is a selection (ingest's outright form).
//
// The mapping is faithful: an item ingest would refuse (a book missing a price, an outcome named after no team)
// is passed on and rejected there one by one, so it counts towards parser.degraded. Only what is not a price
// observation at all is left out and counted here: lay prices of exchanges (`h2h_lay`: the price to bet against
// a selection, not a back price), books the catalogue does not list, and structure that is not objects/arrays.

import { bookByKey, marketByKey, OUTRIGHTS } from './catalogue.js';
import type { PriceInput } from './types.js';

/** Markets the sport odds endpoint serves; every other market is asked per event (/events/{id}/odds). */
export const FEATURED_MARKETS: ReadonlySet<string> = new Set(['h2h', 'spreads', 'totals', OUTRIGHTS]);

/** The shape of the document was not what v4 serves (not JSON, or not an array/object where one belongs). */
export class UpstreamShapeError extends Error {
  override readonly name = 'UpstreamShapeError';
}

export interface UpstreamSport {
  key: string;
  active: boolean;
  has_outrights: boolean;
}

/** An event as sent to ingest (games carry teams; outright events a kind and a title). */
export interface MappedEvent {
  id: unknown;
  sport_key: unknown;
  commence_time: unknown;
  home_team?: unknown;
  away_team?: unknown;
  kind?: 'futures';
  title?: unknown;
  status?: 'final';
}

export interface MappedBatch {
  events: MappedEvent[];
  prices: PriceInput[];
}

export interface MapStats {
  /** book keys that sent at least one price */
  books: Set<string>;
  /** upstream book keys the catalogue does not list (their prices are left out) */
  unknownBooks: Set<string>;
  /** lay-price markets left out (h2h_lay) */
  layMarkets: number;
  /** bookmaker, market or outcome entries that were not objects, or lists that were not arrays */
  malformed: number;
}

export function newMapStats(): MapStats {
  return { books: new Set(), unknownBooks: new Set(), layMarkets: 0, malformed: 0 };
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses a response body as JSON; throws UpstreamShapeError when it is not. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UpstreamShapeError(`response is not JSON: ${(e as Error).message}`, { cause: e });
  }
}

/** GET /v4/sports: the sports upstream knows, with `active` false for those out of season. */
export function parseSports(doc: unknown): Map<string, UpstreamSport> {
  if (!Array.isArray(doc)) throw new UpstreamShapeError('/v4/sports did not answer an array');
  const out = new Map<string, UpstreamSport>();
  for (const s of doc) {
    if (!isObj(s) || typeof s.key !== 'string') continue;
    out.set(s.key, { key: s.key, active: s.active === true, has_outrights: s.has_outrights === true });
  }
  return out;
}

/** An ISO 8601 time as epoch ms; the raw value when it is not one (ingest then rejects it as INVALID_TIMESTAMP). */
function tsOf(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : v;
}

/** The event record of an upstream event (without its prices). */
export function mapEvent(e: Obj): MappedEvent {
  const base = { id: e.id, sport_key: e.sport_key, commence_time: e.commence_time };
  // outright events name no teams
  if ((e.home_team === null || e.home_team === undefined) && (e.away_team === null || e.away_team === undefined)) {
    return { ...base, kind: 'futures', title: e.sport_title };
  }
  return { ...base, home_team: e.home_team, away_team: e.away_team };
}

/**
 * Appends one upstream event (from /odds or /events/{id}/odds) to `out`: its event record once (`seen` keeps
 * the ids already added) and one price per outcome of every market of every bookmaker. `ts` is the market's
 * `last_update`, else the bookmaker's.
 */
export function mapEventOdds(e: unknown, out: MappedBatch, stats: MapStats, seen: Set<string>): void {
  if (!isObj(e)) {
    stats.malformed++;
    return;
  }
  const id = typeof e.id === 'string' ? e.id : '';
  if (!seen.has(id)) {
    seen.add(id);
    out.events.push(mapEvent(e));
  }
  const books = e.bookmakers ?? [];
  if (!Array.isArray(books)) {
    stats.malformed++;
    return;
  }
  for (const b of books) {
    if (!isObj(b) || typeof b.key !== 'string' || !Array.isArray(b.markets)) {
      stats.malformed++;
      continue;
    }
    if (bookByKey(b.key) === undefined) {
      stats.unknownBooks.add(b.key);
      continue;
    }
    let any = false;
    for (const m of b.markets) {
      if (!isObj(m) || typeof m.key !== 'string' || !Array.isArray(m.outcomes)) {
        stats.malformed++;
        continue;
      }
      if (m.key.endsWith('_lay')) {
        stats.layMarkets++;
        continue;
      }
      const def = marketByKey(m.key);
      // `description` names the player of a prop; on other markets it is not a player (ingest refuses one)
      const isProp = def !== undefined && def.kind === 'prop' && def.key !== OUTRIGHTS;
      const ts = tsOf(m.last_update ?? b.last_update);
      if (americanLooking(m.outcomes)) {
        stats.malformed += m.outcomes.length;
        continue;
      }
      for (const o of m.outcomes) {
        if (!isObj(o)) {
          stats.malformed++;
          continue;
        }
        const p: PriceInput = {
          book: b.key,
          event_id: id,
          market: m.key,
          outcome: o.name as string,
          point: (o.point ?? null) as number | null,
          player: isProp ? (o.description ?? null) as string | null : null,
          price: o.price as number,
        };
        if (ts !== undefined) p.ts = ts as number;
        out.prices.push(p);
        any = true;
      }
    }
    if (any) stats.books.add(b.key);
  }
}

/**
 * A market whose prices read as American odds though decimal ones were asked for (a proxy or stand-in at
 * THE_ODDS_API_BASE answering in its own format): a negative price, or every one of two or more a whole number of
 * 100 or more (decimal 150 / 210 / 240 on a three-way market is an implied sum of 0.016). Its prices would pass as
 * decimal odds above 1, and only a two-way moneyline's own consistency check caught them: the ingest audit served a
 * 6,312 % arbitrage. The whole market is left out and counted malformed.
 */
function americanLooking(outcomes: unknown[]): boolean {
  let n = 0;
  let big = 0;
  for (const o of outcomes) {
    if (!isObj(o) || typeof o.price !== 'number') continue;
    n++;
    if (o.price < 0) return true;
    if (Number.isInteger(o.price) && o.price >= 100) big++;
  }
  return n >= 2 && big === n;
}

/** GET /v4/sports/{sport}/odds: an array of events. */
export function mapSportOdds(doc: unknown, out: MappedBatch, stats: MapStats, seen: Set<string>): string[] {
  if (!Array.isArray(doc)) throw new UpstreamShapeError('the odds endpoint did not answer an array of events');
  const ids: string[] = [];
  for (const e of doc) {
    mapEventOdds(e, out, stats, seen);
    if (isObj(e) && typeof e.id === 'string') ids.push(e.id);
  }
  return ids;
}

/** An upstream event's id and start (from /odds or /events), for choosing which events to ask props for. */
export interface EventRef {
  id: string;
  commence: number;
  event: MappedEvent;
}

/** GET /v4/sports/{sport}/events (or the /odds array): id, start and event record of each well-formed event. */
export function eventRefs(doc: unknown): EventRef[] {
  if (!Array.isArray(doc)) throw new UpstreamShapeError('the events endpoint did not answer an array of events');
  const out: EventRef[] = [];
  for (const e of doc) {
    if (!isObj(e) || typeof e.id !== 'string' || typeof e.commence_time !== 'string') continue;
    const t = Date.parse(e.commence_time);
    if (Number.isFinite(t)) out.push({ id: e.id, commence: t, event: mapEvent(e) });
  }
  return out;
}

/** The usage headers of a response; NaN for each header absent or not a number. */
export interface Usage {
  remaining: number;
  used: number;
  last: number;
}

export function readUsage(get: (name: string) => string | null): Usage {
  const num = (name: string) => {
    const v = get(name);
    if (v === null || v.trim() === '') return Number.NaN;
    const n = Number(v);
    return Number.isFinite(n) && n >= 0 ? n : Number.NaN;
  };
  return { remaining: num('x-requests-remaining'), used: num('x-requests-used'), last: num('x-requests-last') };
}

/** The v4 error body {message, error_code, details_url}; fields null when absent or the body is not one. */
export function readError(text: string): { code: string | null; message: string | null } {
  try {
    const doc: unknown = JSON.parse(text);
    if (isObj(doc)) {
      return {
        code: typeof doc.error_code === 'string' ? doc.error_code : null,
        message: typeof doc.message === 'string' ? doc.message : null,
      };
    }
  } catch {
    // not JSON: a proxy's page, say
  }
  return { code: null, message: null };
}

/** The longest wait a Retry-After is taken for: past it the connector tries again (a value of 99999999999 s
 *  stopped the feed for millennia: the ingest audit). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry-After as ms: delay-seconds or an HTTP date, at most MAX_RETRY_AFTER_MS; null when absent or unreadable. */
export function retryAfterMs(v: string | null, now: number): number | null {
  if (v === null || v.trim() === '') return null;
  const s = v.trim();
  if (/^\d+$/.test(s)) return Math.min(MAX_RETRY_AFTER_MS, Number(s) * 1000);
  const t = Date.parse(s);
  return Number.isFinite(t) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, t - now)) : null;
}
