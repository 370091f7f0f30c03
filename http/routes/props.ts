// GET /v1/sports/{sport_key}/props (issue 5): player-prop rows from the read model, one per book and
// (event, market, player): its current line with the Over and Under prices (a missing side is null, never
// synthesised), flat or grouped per (event, player, market, line), paged by rows. Futures and event markets
// (events without teams, engine/ingest.ts EventKind) are served only when asked: their rows carry `event_title`
// instead of `home_team` and `away_team`, and an outright selection's row has `line` null, the selection in
// `player`, the Yes price (it wins) in `over_price` and the No price in `under_price`.

import { BOOKMAKERS, MARKETS } from '../../engine/catalogue.js';
import { decimalToAmerican } from '../../engine/odds.js';
import { PROPS_WINDOW_MS, propPrice } from './prop-rules.js';
import { canonicalInEvent, nameMatcher } from '../../engine/players.js';
import type { EventView, PlayerLookup, ReadModel } from '../../engine/read-model.js';
import type { ParamSpec } from '../params.js';
import type { Route } from '../router.js';
import { PAGE_HEADERS } from '../openapi.js';
import { compile } from '../serialize.js';
import { isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';
import { activeBooks } from './odds.js';
import { cmp } from '../../engine/compare.js';
import { RowCache, joinRows, rowBytes } from '../row-cache.js';

/** SPEC Pagination: props offset 0 to 10000 */
const MAX_OFFSET = 10_000;
const PROP_KEYS = MARKETS.filter((m) => m.kind === 'prop').map((m) => m.key);
const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
const PREDICTION_BOOKS = new Set(BOOKMAKERS.flatMap((b, i) => (b.kind === 'prediction' ? [i] : [])));

const str = { type: 'string' } as const;
const nullableNum = { type: ['number', 'null'] } as const;
const teams = {
  home_team: { type: 'string', description: 'absent on futures and event markets' },
  away_team: { type: 'string', description: 'absent on futures and event markets' },
  event_title: { type: 'string', description: 'the name of a futures or event-market event ("NBA Championship 2026-27"); absent on games' },
} as const;
const line = { type: ['number', 'null'], description: 'null on outrights (a selection has no line)' } as const;
const sides = {
  over_price: { type: ['number', 'null'], description: 'Over; on outrights the Yes price (the selection wins)' },
  under_price: { type: ['number', 'null'], description: 'Under; on outrights the No price (it does not), from prediction markets and exchanges' },
} as const;
const rowProps = {
  event_id: str, sport_key: str, commence_time: str, ...teams, bookmaker: str,
  player: { type: 'string', description: 'the player; on outrights the selection (a team, a player, a horse)' },
  market_key: str, market_label: str, line, ...sides, age_seconds: { type: 'number' },
} as const;
export const PropRowSchema = { type: 'object', properties: rowProps } as const;
export const PropGroupSchema = {
  type: 'object',
  properties: {
    event_id: str, sport_key: str, commence_time: str, ...teams, player: str, market_key: str, market_label: str, line,
    books: { type: 'array', items: { type: 'object', properties: { bookmaker: str, ...sides, age_seconds: { type: 'number' } } } },
  },
} as const;
const rowJson = compile(PropRowSchema);

/** A row serialised up to its age (UTF-8, through `"age_seconds":`, the schema's last field), with what it shows:
 *  the serialised page of the simulator's NBA (5,000 rows, 1.8 MB) took about 10 ms to make and as long again to
 *  encode as it went to the socket, every request. */
interface PropItem {
  bytes: Buffer;
  over: number;
  under: number;
  line: number;
  player: string;
  book: number;
  market: number;
}

const AGE_TAIL = ',"age_seconds":0}';

function propItem(r: Row, line: number | null, over: number | null, under: number | null): PropItem {
  const ev = r.ev;
  const game = ev.kind === 'game';
  const json = rowJson({
    event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), home_team: game ? ev.home : undefined,
    away_team: game ? ev.away : undefined, event_title: game ? undefined : ev.title ?? '', bookmaker: BOOKMAKERS[r.book].key,
    player: r.player, market_key: MARKETS[r.market].key, market_label: MARKETS[r.market].label, line, over_price: over,
    under_price: under, age_seconds: 0,
  });
  if (!json.endsWith(AGE_TAIL)) throw new Error('a prop row does not end with its age');
  return { bytes: rowBytes(json.slice(0, -2)), over: r.over, under: r.under, line: r.line, player: r.player, book: r.book, market: r.market };
}
const groupsJson = compile({ type: 'array', items: PropGroupSchema });

export const PROPS_PARAMS: readonly ParamSpec[] = [
  { name: 'markets', type: 'csv', values: PROP_KEYS, maxItems: 100, description: 'Prop market keys' },
  { name: 'bookmakers', type: 'csv', values: BOOKMAKERS.map((b) => b.key), maxItems: 200, description: 'Book keys' },
  { name: 'player', type: 'string', description: 'Partial player name, case- and accent-insensitive' },
  { name: 'eventId', type: 'string', description: 'One event id' },
  { name: 'oddsFormat', type: 'enum', values: ['american', 'decimal'], default: 'american', description: 'Price format' },
  { name: 'dfsOdds', type: 'enum', values: ['midpoint', 'effective'], default: 'midpoint', description: "DFS pick'em legs: midpoint (+100/-100, zero vig) or effective (the operator's per-leg price from its payout table)" },
  { name: 'limit', type: 'integer', default: 5000, min: 1, max: 10_000, description: 'Rows per page (counts rows, also when grouped)' },
  { name: 'offset', type: 'integer', default: 0, min: 0, max: MAX_OFFSET, description: 'Rows to skip' },
  { name: 'grouped', type: 'boolean', default: false, description: 'One entry per (event, player, market, line) with books[]' },
  { name: 'include_event_markets', type: 'boolean', description: 'Include futures and event markets: rows of events without a single home and away team (outrights, tournament winners, prediction-market questions). Default false; when omitted, true if bookmakers names a prediction-market book' },
  { name: 'include_futures', type: 'boolean', default: false, description: 'Include season-long futures (events of kind futures)' },
  { name: 'maxAgeSec', type: 'integer', min: 1, max: 3600, description: 'Drop rows older than this' },
];


interface Row {
  /** the read model's record of the book-line */
  rec: number;
  ev: EventView;
  book: number;
  player: string;
  market: number;
  line: number;
  over: number;
  under: number;
  lu: number;
}

export function propsRoutes(s: Services): Route[] {
  const rm = s.hub.readModel;
  /** kept rows per price format: decimal or American, DFS legs at midpoint or effective */
  const rowCaches = [0, 1, 2, 3].map(() => new RowCache<PropItem>());
  /** per event: its prop records in serving order, with their players' names, while its propVersion holds (the
   *  order changes only when a prop book-line is added or changes line; sorting every row of a sport per request
   *  took about 2 ms of the main thread a request at the simulator's NBA; bench/http.ts /props) */
  const orders = new WeakMap<EventView, PropOrder>();
  const orderOf = (ev: EventView): PropOrder => {
    let o = orders.get(ev);
    if (o === undefined || o.version !== ev.propVersion) {
      o = propOrder(rm, ev, s.hub.players);
      orders.set(ev, o);
    }
    return o;
  };
  return [{
    method: 'GET',
    path: '/v1/sports/{sport_key}/props',
    auth: 'key',
    tag: 'props',
    summary: 'Player props: one row per book with its current line, Over and Under prices; futures and event-market outrights on request',
    params: PROPS_PARAMS,
    cost: () => 3,
    response: { type: 'array', items: { oneOf: [PropRowSchema, PropGroupSchema] }, description: 'rows; with grouped=true, entries with books[]' },
    responseHeaders: [...PAGE_HEADERS, 'x-result-row-count'],
    handle: (ctx) => {
      const p = ctx.params;
      const keys = sportKeys(ctx.args[0]);
      if (p.bookmakers !== undefined) activeBooks(p.bookmakers as string[]);
      const books = p.bookmakers === undefined ? null : new Set((p.bookmakers as string[]).map((k) => BOOK_INDEX.get(k)!));
      // SPEC: auto-enabled when bookmakers includes a prediction-market book; an explicit false still wins
      const eventMarkets = p.include_event_markets === undefined
        ? books !== null && [...books].some((b) => PREDICTION_BOOKS.has(b))
        : p.include_event_markets === true;
      const futures = eventMarkets || p.include_futures === true;
      const markets = p.markets === undefined ? null : new Set(p.markets as string[]);
      const who = p.player === undefined ? null : nameMatcher(p.player as string);
      const american = p.oddsFormat === 'american';
      const effective = p.dfsOdds === 'effective';
      const oldest = ctx.now - (p.maxAgeSec === undefined ? PROPS_WINDOW_MS : Math.min(PROPS_WINDOW_MS, (p.maxAgeSec as number) * 1000));
      const limit = p.limit as number;
      const offset = p.offset as number;
      // events in serving order (start, then id), each one's prop records in theirs (orderOf): the rows come out
      // sorted as they are met, and the walk stops at the first row past the page
      const events: EventView[] = [];
      for (const key of keys) {
        for (const ev of rm.sportEvents(key)) {
          if (ev.status === 'final' || (p.eventId !== undefined && ev.id !== p.eventId)) continue;
          if (ev.kind === 'futures' ? !futures : ev.kind === 'event_market' && !eventMarkets) continue;
          events.push(ev);
        }
      }
      events.sort((a, b) => a.commence - b.commence || cmp(a.id, b.id));
      const matched = who === null ? null : new Map<string, boolean>();
      const page: Row[] = [];
      let seen = 0;
      let more = false;
      walk: for (const ev of events) {
        const order = orderOf(ev);
        const started = ev.kind === 'game' && ev.commence <= ctx.now;
        for (let i = 0; i < order.recs.length; i++) {
          const r = order.recs[i];
          const market = rm.market(r);
          if (markets !== null && !markets.has(MARKETS[market].key)) continue;
          const book = rm.book(r);
          if (books !== null && !books.has(book)) continue;
          // a venue's own Yes and No that cross (an outright) are held back, as /odds and /v1/prediction-markets hold
          // them (ReadModel.consistent)
          if (!rm.consistent(r)) continue;
          // each side is a write of its own: one older than the window (or maxAgeSec) is not served (null), and the
          // row's age is that of the older side it serves, so a fresh Over never passes off a stale Under as fresh
          const luOver = Math.max(rm.changedAt(r, 0), rm.verifiedAt(r, 0));
          const luUnder = Math.max(rm.changedAt(r, 1), rm.verifiedAt(r, 1));
          // of a started game, a side observed before the start is a pregame price (as /odds and /live hold it)
          const over = luOver >= oldest && !(started && luOver < ev.commence) ? rm.price(r, 0) : 0;
          const under = luUnder >= oldest && !(started && luUnder < ev.commence) ? rm.price(r, 1) : 0;
          if (over === 0 && under === 0) continue;
          const player = order.names[i];
          if (matched !== null) {
            let ok = matched.get(player);
            if (ok === undefined) matched.set(player, (ok = who!(player)));
            if (!ok) continue;
          }
          if (seen++ < offset) continue;
          if (page.length === limit) {
            more = true;
            break walk;
          }
          const lu = Math.min(over === 0 ? Infinity : luOver, under === 0 ? Infinity : luUnder);
          page.push({ rec: r, ev, book, player, market, line: rm.point(r), over, under, lu });
        }
      }
      const price = (d: number, book: number): number | null => {
        if (d === 0) return null;
        const x = propPrice(book, d, effective);
        return american ? decimalToAmerican(x) : x;
      };
      const age = (lu: number) => Math.max(0, (ctx.now - lu) / 1000);
      const head = (r: Row) => (r.ev.kind === 'game'
        ? { event_id: r.ev.id, sport_key: r.ev.sport, commence_time: isoSeconds(r.ev.commence), home_team: r.ev.home, away_team: r.ev.away }
        : { event_id: r.ev.id, sport_key: r.ev.sport, commence_time: isoSeconds(r.ev.commence), event_title: r.ev.title ?? '' });
      const lineOf = (r: Row) => (r.line !== r.line ? null : r.line);
      let body: string | Buffer;
      let size: number;
      if (p.grouped === true) {
        const groups = new Map<string, Record<string, unknown> & { books: object[] }>();
        for (const r of page) {
          const k = `${r.ev.id}|${r.player}|${r.market}|${r.line}`;
          let g = groups.get(k);
          if (g === undefined) {
            // the head's object with the group's fields added: a literal opening with a spread of it cost about 1 us per
            // field after it on Node 20
            groups.set(k, (g = Object.assign(head(r), { player: r.player, market_key: MARKETS[r.market].key, market_label: MARKETS[r.market].label, line: lineOf(r), books: [] as object[] })));
          }
          g.books.push({ bookmaker: BOOKMAKERS[r.book].key, over_price: price(r.over, r.book), under_price: price(r.under, r.book), age_seconds: age(r.lu) });
        }
        body = groupsJson([...groups.values()]);
        size = groups.size;
      } else {
        // each row kept serialised up to its age, per record and price format (RowCache), made again only when what it
        // shows changed; the age is written per request (PropItem)
        const cache = rowCaches[(american ? 2 : 0) + (effective ? 1 : 0)];
        const items: PropItem[] = [];
        const tails: string[] = [];
        for (const r of page) {
          let item = cache.get(r.rec, 0, r.ev, false);
          if (item === undefined || item.over !== r.over || item.under !== r.under || !Object.is(item.line, r.line)
            || item.player !== r.player || item.book !== r.book || item.market !== r.market) {
            item = cache.set(r.rec, 0, r.ev, false, propItem(r, lineOf(r), price(r.over, r.book), price(r.under, r.book)));
          }
          items.push(item);
          tails.push(`${age(r.lu)}}`);
        }
        body = joinRows(items, tails);
        size = page.length;
      }
      const headers: [string, string][] = [
        ['x-result-page-size', String(size)],
        ['x-result-row-count', String(page.length)],
        ['x-result-limit', String(limit)],
        ['x-result-offset', String(offset)],
        ['x-result-has-more', String(more)],
      ];
      // only a page that can be asked for (SPEC bounds offset; past it only a larger limit reaches the rest)
      if (more && offset + page.length <= MAX_OFFSET) headers.push(['x-next-offset', String(offset + page.length)]);
      return { status: 200, body, headers };
    },
  }];
}

/** One event's prop book-lines in the order /props serves them (market key, player, line, book key) and their
 *  players' names (initials joined to the event's one matching full name: "J. Tatum" is Jayson Tatum unless another
 *  J. Tatum plays), made when the event's propVersion moved. */
interface PropOrder {
  version: number;
  recs: Int32Array;
  names: string[];
}

function propOrder(rm: ReadModel, ev: EventView, players: PlayerLookup): PropOrder {
  const version = ev.propVersion;
  const canon = canonicalInEvent(ev.records.map((r) => rm.player(r)), players);
  const items: { r: number; name: string; key: string; line: number; book: string }[] = [];
  for (const r of ev.records) {
    const def = MARKETS[rm.market(r)];
    if (def.kind !== 'prop') continue;
    items.push({ r, name: players.name(canon.get(rm.player(r))!), key: def.key, line: rm.point(r), book: BOOKMAKERS[rm.book(r)].key });
  }
  items.sort((a, b) => cmp(a.key, b.key) || cmp(a.name, b.name) || byLine(a.line, b.line) || cmp(a.book, b.book));
  return { version, recs: Int32Array.from(items, (i) => i.r), names: items.map((i) => i.name) };
}

/** lines ascending; no line (NaN, outrights) first */
function byLine(a: number, b: number): number {
  if (a !== a || b !== b) return (a !== a ? 0 : 1) - (b !== b ? 0 : 1);
  return a - b;
}
