// GET /v1/sports/{sport_key}/odds: The Odds API v4 shape built from the read model.
//
// Bodies are cached per (sports, parameters) and reused until the data version of a sport changes or the
// clock reaches the first moment the answer would change by itself (an event starting, or a verification
// ageing past 5 s). Under the simulator a body is rebuilt at most once per applied batch, and the cache turns
// the rest of the requests into a map lookup (bench/http.ts).

import { WindowLimiter } from '../ip-limiter.js';
import { BOOKMAKERS, MARKETS, OUTRIGHTS, REGIONS, SPORTS, booksForRegions, outrightsOnly, sportByKey } from '../../engine/catalogue.js';
import { ApiError } from '../../engine/errors.js';
import { MARKET_INDEX, SLOT } from '../../engine/ingest.js';
import { decimalToAmerican } from '../../engine/odds.js';
import type { EventView, ReadModel } from '../../engine/read-model.js';
import type { Region } from '../../engine/types.js';
import { invalid, type ParamSpec, type Params } from '../params.js';
import type { RequestCtx, Route } from '../router.js';
import { AnyTime, IsoTime, OddsDocSchema, RawOddsEventSchema, UnixTime, oddsEventSchema } from '../schemas.js';
import { joinRows, rowBytes } from '../row-cache.js';
import { compile } from '../serialize.js';
import { isoMillis, isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';
import { PROPS_WINDOW_MS, propPrice } from './prop-rules.js';
import { canonicalInEvent } from '../../engine/players.js';

/** a bookmaker entry is `is_current` when every price it serves was verified within this many ms (its verified_at is
 *  the oldest of their verifications) */
export const CURRENT_MS = 5000;
const ODDS_MARKETS = ['h2h', 'h2h_3_way', 'spreads', 'totals'] as const;
const BOOK_KEYS = BOOKMAKERS.map((b) => b.key);
const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
/** a book's own two-way moneyline whose implied probabilities sum outside this range is not served */

export const ODDS_PARAMS: readonly ParamSpec[] = [
  { name: 'regions', type: 'csv', values: REGIONS, default: 'us', description: 'Regions whose books are returned' },
  { name: 'markets', type: 'csv', values: [...ODDS_MARKETS, OUTRIGHTS], default: 'h2h', description: 'Game markets, and outrights: the futures and event markets of the sport (events without teams), each book\'s price on every selection to win' },
  { name: 'oddsFormat', type: 'enum', values: ['decimal', 'american'], default: 'decimal', description: 'Price format' },
  { name: 'dateFormat', type: 'enum', values: ['iso', 'unix'], default: 'iso', description: 'Time format' },
  { name: 'bookmakers', type: 'csv', values: BOOK_KEYS, maxItems: 200, description: 'Book keys; overrides regions' },
  { name: 'eventIds', type: 'csv', maxItems: 500, description: 'Only these event ids' },
  { name: 'commenceTimeFrom', type: 'datetime', description: 'Events starting at or after (ISO 8601)' },
  { name: 'commenceTimeTo', type: 'datetime', description: 'Events starting at or before (ISO 8601)' },
  { name: 'date', type: 'date', description: 'YYYY-MM-DD (UTC): the whole day; explicit commenceTime* win' },
  { name: 'include', type: 'csv', values: ['normalized', 'slim', 'raw', 'verification'], default: 'normalized', description: 'Shape tokens, e.g. slim,verification' },
  { name: 'verified', type: 'boolean', default: false, description: 'Alias for include=verification' },
  { name: 'live', type: 'boolean', default: false, description: 'Only games already started' },
  { name: 'include_live', type: 'boolean', default: false, description: 'Include in-progress games alongside pregame' },
];

/** Refuses books that serve no prices (merged, decommissioned, not yet integrated), saying where to look. */
export function activeBooks(keys: readonly string[], name = 'bookmakers'): void {
  for (const key of keys) {
    const b = BOOKMAKERS[BOOK_INDEX.get(key)!];
    if (b.status === 'active') continue;
    const why = b.status === 'merged' ? `is merged into ${b.merged_into}: ask for ${b.merged_into}` : `is ${b.status.replace(/_/g, ' ')}${b.note ? ` (${b.note})` : ''}`;
    invalid(name, `${key} ${why}`, keys.join(','));
  }
}

/** Credits: markets x regions, minimum 1; with bookmakers, each started group of 10 books is one region. */
export function oddsCost(p: Params): number {
  const markets = (p.markets as string[] | string);
  const nMarkets = Array.isArray(markets) ? markets.length : 1;
  const nRegions = p.bookmakers !== undefined
    ? Math.ceil((p.bookmakers as string[]).length / 10)
    : Array.isArray(p.regions) ? p.regions.length : 1;
  return Math.max(1, nMarkets * nRegions);
}

interface OddsQuery {
  books: Set<number>;
  /** the same books in catalogue order: the order bookmakers are listed in */
  bookOrder: number[];
  markets: string[];
  american: boolean;
  unix: boolean;
  shape: 'normalized' | 'slim' | 'raw';
  verification: boolean;
  ids: Set<string> | null;
  from: number;
  to: number;
  live: boolean;
  includeLive: boolean;
  /** /live: only events started within this many ms */
  maxAgeMs: number;
  /** /live: merge the books' player props into their markets */
  includeProps: boolean;
  /** with includeProps: only these prop market keys (null: every one) */
  propMarkets: Set<string> | null;
  /** /try: only the first this many events */
  maxEvents: number;
  /** one event's odds: the body is the event object, not a list */
  single: boolean;
  /** the v4 sport key `upcoming`: every game in play and the next this many to start, across sports (else 0) */
  upcoming: number;
}

/** `sent`: the query as sent, for the inputs a 422 echoes (the parameters hold times normalised to ISO 8601) */
function toQuery(p: Params, sent: URLSearchParams | null = null): OddsQuery {
  const include = Array.isArray(p.include) ? p.include : [String(p.include)];
  const shapes = include.filter((t) => t !== 'verification');
  if (shapes.length > 1) invalid('include', 'takes at most one of normalized, slim, raw', include.join(','));
  // raw returns only ids and raw_json (SPEC): the verification fields would be dropped without a word
  if (shapes[0] === 'raw' && (include.includes('verification') || p.verified === true)) {
    invalid(include.includes('verification') ? 'include' : 'verified', 'raw returns only ids and raw_json: verification combines with normalized or slim', include.join(','));
  }
  let from = -Infinity;
  let to = Infinity;
  if (p.date !== undefined) {
    from = Date.parse(`${p.date}T00:00:00Z`);
    to = Date.parse(`${p.date}T23:59:59Z`);
  }
  if (p.commenceTimeFrom !== undefined) from = Date.parse(p.commenceTimeFrom as string);
  if (p.commenceTimeTo !== undefined) to = Date.parse(p.commenceTimeTo as string);
  if (from > to) {
    // name a parameter the request sent: the end of the range came from commenceTimeTo or from the date's day
    if (p.commenceTimeTo !== undefined) invalid('commenceTimeTo', 'is before commenceTimeFrom', sent?.get('commenceTimeTo') ?? p.commenceTimeTo);
    invalid('commenceTimeFrom', `is after the end of date ${p.date as string}`, sent?.get('commenceTimeFrom') ?? p.commenceTimeFrom);
  }
  if (p.bookmakers !== undefined) activeBooks(p.bookmakers as string[]);
  const books = p.bookmakers !== undefined
    ? new Set((p.bookmakers as string[]).map((k) => BOOK_INDEX.get(k)!))
    // a region's sportsbooks, exchanges and prediction markets, not its DFS pick'em boards: their per-entry payouts
    // are no single bet's price (served at the midpoint 2.0, as /props' default), which a best-price bot asking for
    // regions=us read as a real +100 on both sides of a prop. Named in bookmakers, they are served
    : new Set(booksForRegions((Array.isArray(p.regions) ? p.regions : [p.regions]) as Region[]).filter((b) => b.kind !== 'dfs').map((b) => BOOK_INDEX.get(b.key)!));
  return {
    books,
    bookOrder: [...books].sort((a, b) => a - b),
    markets: Array.isArray(p.markets) ? p.markets : [String(p.markets)],
    american: p.oddsFormat === 'american',
    unix: p.dateFormat === 'unix',
    shape: (shapes[0] ?? 'normalized') as OddsQuery['shape'],
    verification: include.includes('verification') || p.verified === true,
    ids: p.eventIds === undefined ? null : new Set(p.eventIds as string[]),
    from,
    to,
    live: p.live === true,
    includeLive: p.include_live === true,
    maxAgeMs: Infinity,
    includeProps: false,
    propMarkets: null,
    maxEvents: Infinity,
    single: false,
    upcoming: 0,
  };
}

interface MarketEntry {
  key: string;
  last_update: string | number;
  outcomes: { name: string; price: number; point?: number; description?: string }[];
  /** newest write of the entry (ms), for props merged one quote at a time */
  _t?: number;
}

interface Built {
  /** encoded once: uWebSockets.js would otherwise encode a string on every send */
  body: Buffer;
  /** the body stays right until this time (ms) unless data changes */
  validUntil: number;
}

/** A book's market is served only complete: both sides, all three for 3-way, and a sane own-book moneyline. */
function completeOutcomes(rm: ReadModel, r: number, shape: string): boolean {
  const p0 = rm.price(r, 0);
  const p1 = rm.price(r, 1);
  if (p0 === 0 || p1 === 0) return false;
  if (shape === 'three_way') return rm.price(r, 2) > 0;
  // a book's own moneyline pair must be consistent: the rule every analytics view applies too
  return rm.consistent(r);
}

/** Outcomes from..n-1 of record r are prices of the game as it stands: of a started game, only quotes observed since
 *  the start. The shards drop a game's older quotes at the first tick after its start (Hub.tick); this covers the
 *  second before it. */
function inPlayOk(rm: ReadModel, r: number, n: number, commence: number, now: number, from = 0): boolean {
  if (commence > now) return true;
  for (let o = from; o < n; o++) if (Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o)) < commence) return false;
  return true;
}

/** One event's document as served (game markets only), kept until the event or one of its game lines moves
 *  (EventView.gameVersion) or the clock reaches `validUntil`. */
interface Fragment {
  version: number;
  validUntil: number;
  /** UTF-8, joined into bodies as bytes (http/row-cache.ts joinRows) */
  bytes: Buffer;
}

/** A cached body with what it holds in memory besides its bytes: its key (every parameter as sent, up to 500 event
 *  ids of 128 characters: 64 KB for a body of `[]`) and the data versions it was built at. */
interface CachedBody {
  body: Buffer;
  validUntil: number;
  version: string;
  /** bytes counted for it in `cacheBytes` (bodyCost) */
  cost: number;
}

/** bytes of whole bodies, their keys and versions kept at most */
export const BODY_CACHE_BYTES = 64 * 1024 * 1024;
/** bodies kept at most */
export const BODY_CACHE_ENTRIES = 5000;
/** per kept body, besides its bytes and strings: its map slot, its record, the Buffer and ArrayBuffer objects (about
 *  490 bytes of heap for a body of `[]`, measured with 5,000 of them) */
const BODY_OVERHEAD = 512;
/** bytes of event documents kept at most (with their shapes' overhead): past it the shapes least recently built
 *  for are dropped */
export const FRAGMENT_BUDGET = 32 * 1024 * 1024;
/** shapes whose documents are kept at most (one per distinct books, markets and formats: a client's bookmakers list
 *  makes one of its own): past it the least recently built for goes */
export const FRAGMENT_SHAPES = 512;
/** per shape, besides its key: its map slot, record and WeakMap */
const SHAPE_OVERHEAD = 512;
/** per kept document, besides its bytes: its record, the Buffer and ArrayBuffer objects, the WeakMap's slot (400 shapes
 *  of the test board's NBA grew the heap by what was counted, to 1 %) */
const FRAGMENT_OVERHEAD = 256;

/** One query shape's event documents, and what they hold (FRAGMENT_OVERHEAD each, with their bytes, and the shape's
 *  own `base`) */
interface Shape {
  docs: WeakMap<EventView, Fragment>;
  base: number;
  bytes: number;
}

export interface OddsCacheHeld {
  bodies: number;
  bodyBytes: number;
  shapes: number;
  fragmentBytes: number;
}

/** What a kept body costs: strings are counted at 2 bytes a character, what V8 takes for any string holding a
 *  character past U+00FF (an event id may; an ASCII key takes half). */
function bodyCost(key: string, body: Buffer, version: string): number {
  return BODY_OVERHEAD + 2 * (key.length + version.length) + body.length;
}

export class OddsView {
  /** in the order the bodies were built (a hit does not move its body: a hit stays a single lookup), so the ones
   *  built longest ago go first when a bound is passed */
  private readonly cache = new Map<string, CachedBody>();
  /** what the bodies in `cache` hold (bodyCost) */
  private cacheBytes = 0;
  /** per event serialiser, by shape (time format, verification, include shape) */
  private readonly serializers = new Map<string, (doc: unknown) => string>();
  /** Event documents kept per query that shapes them (books, markets, formats; not the filters that pick events):
   *  a sport's body is rebuilt whenever any of its events moves (about every 100 ms under the simulator), and most
   *  of its events have not moved since the last build (one in five to eight per 150 ms: bench/http.ts). Weakly held
   *  per event, so an event that leaves takes its documents with it. The shape least recently built for first. */
  private readonly fragments = new Map<string, Shape>();
  /** what `fragments` holds (an upper bound: the documents of events that left are counted until their shape goes) */
  private fragmentBytes = 0;

  constructor(private readonly s: Services) {}

  private serializer(q: OddsQuery): (doc: unknown) => string {
    const key = `${q.unix}:${q.verification}:${q.shape}`;
    let fn = this.serializers.get(key);
    if (fn === undefined) {
      const time = q.unix ? UnixTime : IsoTime;
      fn = compile(q.shape === 'raw' ? RawOddsEventSchema : oddsEventSchema({ time, verification: q.verification, rawJson: q.shape === 'normalized' }));
      this.serializers.set(key, fn);
    }
    return fn;
  }

  serve(ctx: RequestCtx, keys: string[], mode: 'odds' | 'live' | 'try' | 'event' | 'upcoming' = 'odds'): Buffer {
    const rm = this.s.hub.readModel;
    const version = keys.map((k) => rm.version(k)).join(',');
    // the path's arguments too: one event's odds are cached per event id
    const cacheKey = `${mode}:${ctx.args.join('/')}:` + keys.join(',') + JSON.stringify(ctx.params);
    const hit = this.cache.get(cacheKey);
    const now = ctx.now;
    if (hit !== undefined && hit.version === version && now < hit.validUntil) {
      this.s.metrics.bodyCache.inc({ result: 'hit' });
      return hit.body;
    }
    this.s.metrics.bodyCache.inc({ result: 'miss' });
    const q = toQuery(mode === 'try' ? { ...TRY_QUERY, ...ctx.params } : ctx.params, ctx.query);
    if (mode === 'try') q.maxEvents = TRY_EVENTS;
    if (mode === 'live') {
      q.live = true;
      q.maxAgeMs = (ctx.params.max_age_hours as number) * 3_600_000;
      q.includeProps = true;
    }
    if (mode === 'upcoming') {
      q.includeLive = true;
      q.upcoming = UPCOMING_EVENTS;
      // "in play" as /live holds it by default: started within the last 6 hours (a game never made final leaves)
      q.maxAgeMs = UPCOMING_LIVE_HOURS * 3_600_000;
    }
    if (mode === 'event') {
      // one event, started or not, with the prop markets asked for beside the game markets
      q.ids = new Set([ctx.args[1]]);
      q.includeLive = true;
      q.single = true;
      // outrights are kept as a prop's selections are, but served as their own market (outrightsEntry)
      const props = q.markets.filter((m) => m !== OUTRIGHTS && MARKETS[MARKET_INDEX.get(m)!]?.kind === 'prop');
      q.markets = q.markets.filter((m) => !props.includes(m));
      q.includeProps = props.length > 0;
      q.propMarkets = new Set(props);
    }
    const built = this.build(q, keys, now);
    this.keep(cacheKey, hit, { body: built.body, validUntil: built.validUntil, version, cost: bodyCost(cacheKey, built.body, version) });
    return built.body;
  }

  /** Keeps a body built for `key` (in place of `old`), bounded in count and in what the bodies hold with their keys
   *  (bodies of a few hundred KB each, one per distinct query; or keys of 64 KB for bodies of 2 bytes): past either,
   *  the bodies built longest ago go, down to this one. */
  private keep(key: string, old: CachedBody | undefined, entry: CachedBody): void {
    if (old !== undefined) {
      // rebuilt: to the back of the order, as if new
      this.cache.delete(key);
      this.cacheBytes -= old.cost;
    }
    this.cache.set(key, entry);
    this.cacheBytes += entry.cost;
    if (this.cache.size <= BODY_CACHE_ENTRIES && this.cacheBytes <= BODY_CACHE_BYTES) return;
    for (const [k, e] of this.cache) {
      if (e === entry || (this.cache.size <= BODY_CACHE_ENTRIES && this.cacheBytes <= BODY_CACHE_BYTES)) break;
      this.cache.delete(k);
      this.cacheBytes -= e.cost;
    }
  }

  /** what the caches hold, as counted against their bounds (linewire_odds_body_cache_* and linewire_odds_event_doc_* in
   *  /metrics) */
  get held(): OddsCacheHeld {
    return { bodies: this.cache.size, bodyBytes: this.cacheBytes, shapes: this.fragments.size, fragmentBytes: this.fragmentBytes };
  }

  /** The events a query serves, in order, and until when that choice holds by itself. */
  private pick(q: OddsQuery, keys: string[], now: number): { events: EventView[]; validUntil: number } {
    let validUntil = Infinity;
    const events: EventView[] = [];
    // a game is listed for a game market (or props merged in); markets=outrights alone lists none
    const gameMarkets = q.includeProps || q.markets.some((m) => m !== OUTRIGHTS);
    for (const key of keys) {
      for (const ev of this.s.hub.readModel.sportEvents(key)) {
        // futures and event markets have no teams and no game lines: served for markets=outrights (as v4 serves a
        // futures sport's), and a game has no outrights
        if (ev.status === 'final') continue;
        // one event asked for by id is served whatever its kind, with the markets of it asked for (none: no books)
        if (!q.single && (ev.kind === 'game' ? !gameMarkets : !q.markets.includes(OUTRIGHTS))) continue;
        if (q.ids !== null && !q.ids.has(ev.id)) continue;
        if (ev.commence < q.from || ev.commence > q.to) continue;
        // a season-long future trades until it settles, its start long past (as /props serves it): not in play
        if (ev.kind === 'futures') {
          if (!q.live && q.maxAgeMs === Infinity) events.push(ev);
          continue;
        }
        // /live serves games only (as /ws/live): a started event market asked for by markets=outrights was let in
        // and its records went down the props merge (a NaN point: a 500)
        if (q.live && ev.kind !== 'game') continue;
        const started = ev.commence <= now;
        // at now == commence the event counts as started, so the body is stale from that very millisecond
        if (!started) validUntil = Math.min(validUntil, ev.commence);
        if (q.live ? !started : started && !q.includeLive) continue;
        if (ev.commence < now - q.maxAgeMs) continue;
        // a started event leaves /live once it is older than max_age_hours
        if (q.maxAgeMs !== Infinity) validUntil = Math.min(validUntil, ev.commence + q.maxAgeMs + 1);
        events.push(ev);
      }
    }
    events.sort((a, b) => a.commence - b.commence || (a.id < b.id ? -1 : 1));
    if (events.length > q.maxEvents) events.length = q.maxEvents;
    if (q.upcoming > 0) {
      // in play first in the order (they started earlier): keep them all, then the next q.upcoming to start
      const live = events.filter((ev) => ev.commence <= now).length;
      if (events.length > live + q.upcoming) events.length = live + q.upcoming;
    }
    return { events, validUntil };
  }

  private build(q: OddsQuery, keys: string[], now: number): Built {
    const { events, validUntil: picked } = this.pick(q, keys, now);
    let validUntil = picked;
    const serialize = this.serializer(q);
    // props merged in (/live, one event's props) are read through the player registry, which changes apart from
    // the event: those documents are built every time
    // no event, nothing to keep: a sport out of season made a shape per distinct query, none ever counted
    const kept = q.includeProps || events.length === 0 ? null
      : this.shape(`${q.unix}:${q.verification}:${q.shape}:${q.american}:${q.markets.join(',')}:${q.bookOrder.join(',')}`);
    const parts: Fragment[] = [];
    let built = 0;
    for (const ev of events) {
      let f = kept?.docs.get(ev);
      if (f === undefined || f.version !== ev.gameVersion || now >= f.validUntil) {
        built++;
        const doc = this.eventDoc(q, ev, now);
        const old = f;
        f = { version: ev.gameVersion, validUntil: doc.validUntil, bytes: rowBytes(serialize(doc.doc)) };
        if (kept !== null) this.keepDoc(kept, ev, old, f);
      }
      validUntil = Math.min(validUntil, f.validUntil);
      parts.push(f);
    }
    if (built > 0) this.s.metrics.eventDocs.inc({ result: 'built' }, built);
    if (built < events.length) this.s.metrics.eventDocs.inc({ result: 'kept' }, events.length - built);
    // one event's odds: the event object itself, not a list of one
    // kept in the body cache: a small body cut from the shared 8 KB slab would hold all of it there
    const body = q.single ? (parts[0]?.bytes ?? Buffer.alloc(0)) : joinRows(parts, null, true);
    return { body, validUntil };
  }

  /** The documents kept for a shape, made most recently used (made if new, within FRAGMENT_SHAPES). */
  private shape(key: string): Shape {
    let sh = this.fragments.get(key);
    if (sh !== undefined) {
      this.fragments.delete(key);
      this.fragments.set(key, sh);
      return sh;
    }
    const base = SHAPE_OVERHEAD + 2 * key.length;
    sh = { docs: new WeakMap(), base, bytes: base };
    this.fragments.set(key, sh);
    this.fragmentBytes += base;
    this.trimShapes(sh);
    return sh;
  }

  /** Keeps `f` for `ev` in `sh` in place of `old` (the document `sh` held for it, if any); past FRAGMENT_BUDGET the
   *  other shapes least recently built for go, and then, if `sh` alone is past it, its other documents. */
  private keepDoc(sh: Shape, ev: EventView, old: Fragment | undefined, f: Fragment): void {
    const cost = FRAGMENT_OVERHEAD + f.bytes.length - (old === undefined ? 0 : FRAGMENT_OVERHEAD + old.bytes.length);
    sh.docs.set(ev, f);
    sh.bytes += cost;
    this.fragmentBytes += cost;
    if (this.fragmentBytes <= FRAGMENT_BUDGET) return;
    this.trimShapes(sh);
    if (this.fragmentBytes <= FRAGMENT_BUDGET) return;
    sh.docs = new WeakMap([[ev, f]]);
    this.fragmentBytes -= sh.bytes;
    sh.bytes = sh.base + FRAGMENT_OVERHEAD + f.bytes.length;
    this.fragmentBytes += sh.bytes;
  }

  /** drops the shapes least recently built for, never `keep`, until both bounds hold (or `keep` is the only one) */
  private trimShapes(keep: Shape): void {
    for (const [k, sh] of this.fragments) {
      if (this.fragments.size <= FRAGMENT_SHAPES && this.fragmentBytes <= FRAGMENT_BUDGET) return;
      if (sh === keep) continue;
      this.fragments.delete(k);
      this.fragmentBytes -= sh.bytes;
    }
  }

  /** One event's document for a query at `now`, and until when it holds unless the event moves. */
  private eventDoc(q: OddsQuery, ev: EventView, now: number): { doc: unknown; validUntil: number } {
    const time = (ms: number) => (q.unix ? Math.floor(ms / 1000) : isoMillis(ms));
    // a game not started yet serves its quotes until it starts (inPlayOk)
    let validUntil = ev.commence > now ? ev.commence : Infinity;
    const sport = sportByKey(ev.sport)!;
    let canon: Map<number, number> | null = null;
    const books = [];
    const rm = this.s.hub.readModel;
    for (const bookId of q.bookOrder) {
      if (!q.books.has(bookId)) continue;
      const def = BOOKMAKERS[bookId];
      const markets: MarketEntry[] = [];
      const raw = [];
      let last = 0;
      // the oldest verification of the prices served: is_current says every one of them was seen within 5 s (the
      // freshest made an 8-second-old opposite side current when one side was polled again)
      let verified = Infinity;
      let changed = 0;
      for (const mkey of q.markets) {
        if (mkey === OUTRIGHTS) {
          const m = ev.kind === 'game' ? null : outrightsEntry(rm, ev, bookId, q.american, this.s.hub.players, canon ??= canonicalInEvent(ev.records.map((r) => rm.player(r)), this.s.hub.players), time);
          if (m === null) continue;
          markets.push(m.entry);
          last = Math.max(last, m.last);
          verified = Math.min(verified, m.verified);
          changed = Math.max(changed, m.changed);
          if (q.shape !== 'slim') raw.push(...m.raw);
          continue;
        }
        let idx = MARKET_INDEX.get(mkey)!;
        if (mkey === 'h2h' && sport.three_way) idx = MARKET_INDEX.get('h2h_3_way')!;
        else if (mkey === 'h2h_3_way' && !sport.three_way) continue;
        const r = rm.find(ev.idx, idx, -1, bookId);
        if (r < 0) continue;
        const mdef = MARKETS[idx];
        if (!completeOutcomes(rm, r, mdef.shape) || !inPlayOk(rm, r, mdef.shape === 'three_way' ? 3 : 2, ev.commence, now)) continue;
        const outcomes = [];
        const n = mdef.shape === 'three_way' ? 3 : 2;
        const linePoint = rm.point(r);
        let mLast = 0;
        for (let o = 0; o < n; o++) {
          const name = mdef.shape === 'over_under' ? (o === SLOT.OVER ? 'Over' : 'Under')
            : o === SLOT.HOME ? ev.home : o === SLOT.AWAY ? ev.away : 'Draw';
          const point = linePoint !== linePoint ? undefined : mkey === 'spreads' && o === SLOT.AWAY ? -linePoint || 0 : linePoint;
          const d = rm.price(r, o);
          const c = rm.changedAt(r, o);
          const v = rm.verifiedAt(r, o);
          outcomes.push({ name, price: q.american ? decimalToAmerican(d) : d, point });
          mLast = Math.max(mLast, c, v);
          verified = Math.min(verified, v);
          changed = Math.max(changed, c);
          if (q.shape !== 'slim') raw.push({ market: mdef.key, outcome: name, point, price: d, ts: Math.max(c, v) });
        }
        last = Math.max(last, mLast);
        markets.push({ key: mkey, last_update: time(mLast), outcomes });
      }
      if (q.includeProps) {
        // read as /props reads them: a player's one spelling in the event, each side within the 60-minute window,
        // DFS legs at the midpoint (http/routes/prop-rules.ts)
        canon ??= canonicalInEvent(ev.records.map((r) => rm.player(r)), this.s.hub.players);
        for (const r of ev.records) {
          // outrights are kept as props are (a selection per line) but served as their own market (outrightsEntry)
          if (rm.book(r) !== bookId || MARKETS[rm.market(r)].kind !== 'prop' || rm.market(r) === OUTRIGHT) continue;
          const mdef = MARKETS[rm.market(r)];
          if (q.propMarkets !== null && !q.propMarkets.has(mdef.key)) continue;
          const player = this.s.hub.players.name(canon.get(rm.player(r))!);
          for (let o = 0; o < 2; o++) {
            const sent = rm.price(r, o);
            if (sent === 0 || !inPlayOk(rm, r, o + 1, ev.commence, now, o)) continue;
            const written = Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o));
            if (written < now - PROPS_WINDOW_MS) continue;
            // the body goes stale when this side leaves the window
            validUntil = Math.min(validUntil, written + PROPS_WINDOW_MS + 1);
            const d = propPrice(bookId, sent, false);
            // the market's entry is made by its first served side: no empty market, no time of 0
            let m = markets.find((x) => x.key === mdef.key);
            if (m === undefined) markets.push((m = { key: mdef.key, last_update: time(0), outcomes: [], _t: 0 }));
            const lu = Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o));
            m.outcomes.push({ name: o === 0 ? 'Over' : 'Under', price: q.american ? decimalToAmerican(d) : d, point: rm.point(r), description: player });
            m._t = Math.max(m._t ?? 0, lu);
            m.last_update = time(m._t);
            last = Math.max(last, lu);
            verified = Math.min(verified, rm.verifiedAt(r, o));
            changed = Math.max(changed, rm.changedAt(r, o));
            if (q.shape !== 'slim') raw.push({ market: mdef.key, outcome: o === 0 ? 'Over' : 'Under', point: rm.point(r), player, price: sent, ts: lu });
          }
        }
      }
      if (markets.length === 0) continue;
      const entry: Record<string, unknown> = { key: def.key, title: def.title, last_update: time(last), markets };
      if (q.verification) {
        entry.verified_at = time(verified);
        entry.line_changed_at = time(changed);
        const current = now - verified <= CURRENT_MS;
        entry.is_current = current;
        if (current) validUntil = Math.min(validUntil, verified + CURRENT_MS + 1);
      }
      if (q.shape !== 'slim') entry.raw_json = { feed: ev.source ?? (this.s.feed === 'none' ? 'none' : 'ingest'), quotes: raw };
      books.push(entry);
    }
    const doc = {
      id: ev.id,
      sport_key: ev.sport,
      sport_title: sport.title,
      commence_time: q.unix ? Math.floor(ev.commence / 1000) : isoSeconds(ev.commence),
      // v4 names a futures event by its sport and leaves the teams null; the title says what it is
      home_team: ev.kind === 'game' ? ev.home : null,
      away_team: ev.kind === 'game' ? ev.away : null,
      event_title: ev.kind === 'game' ? undefined : ev.title ?? '',
      probable_pitchers: ev.pitchers ?? undefined,
      bookmakers: books,
    };
    return { doc, validUntil };
  }
}

const OUTRIGHT = MARKET_INDEX.get(OUTRIGHTS)!;

interface OutrightsEntry {
  entry: MarketEntry;
  last: number;
  /** the oldest verification of its picks */
  verified: number;
  changed: number;
  raw: { market: string; outcome: string; price: number; ts: number }[];
}

/** One book's outrights on a futures or event-market event, as v4 serves a futures sport: each selection it prices
 *  to win (its Yes side; a prediction market's No contract is not a price on the selection) with the selection as the
 *  outcome's name, favourite first; null when it prices none. */
function outrightsEntry(rm: ReadModel, ev: EventView, book: number, american: boolean, players: { name(id: number): string },
  canon: Map<number, number>, time: (ms: number) => string | number): OutrightsEntry | null {
  const picks: { name: string; price: number; c: number; v: number }[] = [];
  for (const r of ev.records) {
    if (rm.book(r) !== book || rm.market(r) !== OUTRIGHT) continue;
    const d = rm.price(r, SLOT.YES);
    // a venue's own Yes and No that cross are held back everywhere (ReadModel.consistent), as /odds holds a moneyline
    if (d === 0 || !rm.consistent(r)) continue;
    picks.push({ name: players.name(canon.get(rm.player(r)) ?? rm.player(r)), price: d, c: rm.changedAt(r, SLOT.YES), v: rm.verifiedAt(r, SLOT.YES) });
  }
  if (picks.length === 0) return null;
  picks.sort((a, b) => a.price - b.price || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let last = 0;
  let verified = Infinity;
  let changed = 0;
  for (const p of picks) {
    last = Math.max(last, p.c, p.v);
    verified = Math.min(verified, p.v);
    changed = Math.max(changed, p.c);
  }
  return {
    entry: { key: OUTRIGHTS, last_update: time(last), outcomes: picks.map((p) => ({ name: p.name, price: american ? decimalToAmerican(p.price) : p.price })) },
    last, verified, changed,
    raw: picks.map((p) => ({ market: OUTRIGHTS, outcome: p.name, price: p.price, ts: Math.max(p.c, p.v) })),
  };
}

export function oddsRoutes(s: Services): Route[] {
  const view = new OddsView(s);
  s.metrics.watchOddsCache(() => view.held);
  return [
    {
      method: 'GET',
      path: '/v1/sports/{sport_key}/odds',
      auth: 'key',
      tag: 'odds',
      summary: 'Odds per event and bookmaker (The Odds API v4 shape); pregame only by default',
      params: ODDS_PARAMS,
      cost: oddsCost,
      response: OddsDocSchema,
      handle: (ctx) => {
        // v4's `upcoming`: games in play and the next UPCOMING_EVENTS to start, across every sport
        if (ctx.args[0] === UPCOMING) return { status: 200, body: view.serve(ctx, SPORTS.map((x) => x.key), 'upcoming') };
        const keys = sportKeys(ctx.args[0]);
        // a futures sport (basketball_nba_championship_winner) holds no game: markets left out means its outrights,
        // as v4 answers a futures sport's odds; the cost is the same one market
        if (!ctx.query.has('markets') && outrightsOnly(keys)) ctx.params.markets = [OUTRIGHTS];
        return { status: 200, body: view.serve(ctx, keys) };
      },
    },
    {
      method: 'GET',
      path: '/v1/sports/{sport_key}/live',
      auth: 'key',
      tag: 'odds',
      summary: 'In-play events only (started within max_age_hours): game lines with the books\' player props merged',
      params: LIVE_PARAMS,
      cost: () => 3,
      response: OddsDocSchema,
      handle: (ctx) => {
        const keys = sportKeys(ctx.args[0]);
        return { status: 200, body: view.serve(ctx, keys, 'live') };
      },
    },
    {
      method: 'GET',
      path: '/v1/sports/{sport_key}/events/{event_id}/odds',
      auth: 'key',
      tag: 'odds',
      summary: 'One event\'s odds (The Odds API v4 event-odds shape: the event object), game markets and player props, pregame or in play',
      params: EVENT_ODDS_PARAMS,
      cost: oddsCost,
      errors: ['EVENT_NOT_FOUND'],
      response: { oneOf: [oddsEventSchema({ time: AnyTime, verification: true, rawJson: true }), RawOddsEventSchema] },
      handle: (ctx) => {
        const keys = sportKeys(ctx.args[0]);
        const id = ctx.args[1];
        const ev = s.hub.readModel.event(s.hub.eventIds.peek(id));
        if (ev === undefined || !keys.includes(ev.sport) || ev.status === 'final') {
          throw new ApiError('EVENT_NOT_FOUND', `no event ${id} of ${ctx.args[0]} with prices to serve (it may have ended, or the id is of another sport)`);
        }
        return { status: 200, body: view.serve(ctx, [ev.sport], 'event') };
      },
    },
    tryRoute(view),
  ];
}

/** The Odds API v4's sport key for "in play and next to start, across sports" (/odds only) */
export const UPCOMING = 'upcoming';
export const UPCOMING_EVENTS = 8;
const UPCOMING_LIVE_HOURS = 6;

/** prop market keys: the event-odds endpoint serves them beside the game markets (as v4's does) */
const PROP_MARKETS = MARKETS.filter((m) => m.kind === 'prop').map((m) => m.key);

/** one event's odds: /odds' parameters but the event filters, and player props among the markets */
export const EVENT_ODDS_PARAMS: readonly ParamSpec[] = [
  ...ODDS_PARAMS.filter((p) => ['regions', 'oddsFormat', 'dateFormat', 'bookmakers', 'include', 'verified'].includes(p.name)),
  { name: 'markets', type: 'csv', values: [...ODDS_MARKETS, ...PROP_MARKETS], default: 'h2h', description: 'Game markets, player prop market keys, and outrights (a futures or event-market event)' },
];

/** /v1/try: six sports, moneylines of US books, the first five events, no key, 60 requests an hour per address */
export const TRY_SPORTS: readonly string[] = ['basketball_nba', 'americanfootball_nfl', 'baseball_mlb', 'icehockey_nhl', 'soccer_epl', 'mma_mixed_martial_arts'];
export const TRY_EVENTS = 5;
export const TRY_PER_HOUR = 60;
const TRY_QUERY = { regions: ['us'], markets: ['h2h'], include: ['slim'], verified: false, live: false, include_live: false };

function tryRoute(view: OddsView): Route {
  const limiter = new WindowLimiter(TRY_PER_HOUR, 3_600_000);
  return {
    method: 'GET',
    path: '/v1/try/{sport_key}/odds',
    auth: 'none',
    tag: 'odds',
    summary: `Try without a key: moneylines of US books for the first ${TRY_EVENTS} events of ${TRY_SPORTS.join(', ')}; ${TRY_PER_HOUR} requests an hour per address`,
    params: ODDS_PARAMS.filter((p) => p.name === 'oddsFormat' || p.name === 'dateFormat'),
    errors: ['EXCEEDED_FREQ_LIMIT'],
    response: { type: 'array', items: oddsEventSchema({ time: AnyTime, verification: false, rawJson: false }) },
    handle: (ctx) => {
      const sport = ctx.args[0];
      if (!TRY_SPORTS.includes(sport)) throw new ApiError('UNKNOWN_SPORT', `/v1/try covers ${TRY_SPORTS.join(', ')}; other sports need a key`);
      const wait = limiter.hit(ctx.ip, ctx.now);
      if (wait > 0) {
        throw new ApiError('EXCEEDED_FREQ_LIMIT', `/v1/try allows ${TRY_PER_HOUR} requests an hour per address; retry in ${wait} s or use a key`, undefined, { retryAfter: wait });
      }
      return { status: 200, body: view.serve(ctx, [sport], 'try') };
    },
  };
}

/** /live: SPEC's parameters (American odds by default, no date filters) */
export const LIVE_PARAMS: readonly ParamSpec[] = [
  ...ODDS_PARAMS.filter((p) => ['bookmakers', 'markets', 'regions', 'include'].includes(p.name)),
  { name: 'oddsFormat', type: 'enum', values: ['decimal', 'american'], default: 'american', description: 'Price format' },
  { name: 'max_age_hours', type: 'number', default: 6, min: 0.5, max: 24, description: 'Events started within this many hours' },
];
