// Stream frames (issue 4): what a delta item is, how snapshots and deltas are shaped, the JSON and msgpack
// encodings, and the per-event CRC a client checks its book against.
//
// Canonical string of an event's quote set (the CRC input): one line per quote,
// `book|market|player|point|outcome|price`, with player '' when none, point '' when none (else the outcome's
// own point, as sent), price the decimal price as JavaScript prints it (String(d)); lines sorted by code
// point and joined with '\n'. crc = CRC-32 (ISO-HDLC, zlib) of its UTF-8 bytes, unsigned.

import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';
import { BOOKMAKERS, MARKETS, sportByKey } from '../../engine/catalogue.js';
import { MARKET_INDEX, SLOT, outcomeLabel } from '../../engine/ingest.js';
import { decimalToAmerican } from '../../engine/odds.js';
import type { EventView, ReadModel } from '../../engine/read-model.js';
import type { EventHead } from './channel.js';

const SPREADS = MARKET_INDEX.get('spreads')!;

/** One changed quote. `price` is decimal; 0 with `removed` when the quote went. */
export interface DeltaItem {
  event_id: string;
  market: string;
  point: number | null;
  player: string | null;
  outcome: string;
  book: string;
  price: number;
  last_update: number;
  removed?: true;
}

export function itemKey(i: DeltaItem): string {
  return `${i.event_id}|${i.market}|${i.player ?? ''}|${i.point ?? ''}|${i.outcome}|${i.book}`;
}

export function outcomeName(ev: EventView, market: number, o: number): string {
  return outcomeLabel(ev, market, o);
}

export function outcomePoint(market: number, point: number, o: number): number | null {
  if (point !== point) return null;
  return market === SPREADS && o === SLOT.AWAY ? -point || 0 : point;
}

/** Every current quote of an event as delta items (snapshots of events joining a live channel, rebuilds). */
export function eventItems(rm: ReadModel, ev: EventView, player: (id: number) => string | null): DeltaItem[] {
  const out: DeltaItem[] = [];
  for (const r of ev.records) {
    const market = rm.market(r);
    for (let o = 0; o < 3; o++) {
      const price = rm.price(r, o);
      if (price === 0) continue;
      out.push({
        event_id: ev.id, market: MARKETS[market].key, point: outcomePoint(market, rm.point(r), o),
        player: player(rm.player(r)), outcome: outcomeName(ev, market, o), book: BOOKMAKERS[rm.book(r)].key,
        price, last_update: Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o)),
      });
    }
  }
  return out;
}

export function canonical(items: Iterable<DeltaItem>): string {
  const lines: string[] = [];
  for (const i of items) lines.push(`${i.book}|${i.market}|${i.player ?? ''}|${i.point ?? ''}|${i.outcome}|${String(i.price)}`);
  lines.sort();
  return lines.join('\n');
}

export function crcOf(items: Iterable<DeltaItem>): number {
  return crc32(Buffer.from(canonical(items), 'utf8')) >>> 0;
}

/** An event's head: the odds shape without `bookmakers` (a delta announces an event with it). */
export function eventHead(ev: EventView): EventHead {
  return {
    id: ev.id, sport_key: ev.sport, sport_title: sportByKey(ev.sport)?.title ?? ev.sport,
    commence_time: new Date(ev.commence).toISOString().slice(0, 19) + 'Z', home_team: ev.home, away_team: ev.away,
  };
}

interface V4Outcome { name: string; price: number; point?: number; description?: string; last_update?: number }

/** The v4 odds shape of one event from its items (all markets, props as outcomes with `description`). */
export function v4Event(ev: EventView, items: DeltaItem[], american: boolean): object {
  const books = new Map<string, Map<string, { last: number; outcomes: object[] }>>();
  let bookLast = new Map<string, number>();
  for (const i of items) {
    let markets = books.get(i.book);
    if (markets === undefined) books.set(i.book, (markets = new Map()));
    let m = markets.get(i.market);
    if (m === undefined) markets.set(i.market, (m = { last: 0, outcomes: [] }));
    m.last = Math.max(m.last, i.last_update);
    bookLast.set(i.book, Math.max(bookLast.get(i.book) ?? 0, i.last_update));
    // fields assigned in turn, in the order of the v4 shape: spreads of `{}` or `{ point }` into each outcome cost
    // about a third more (0.5 us an outcome, 1,400 outcomes of a simulated NBA game)
    const o: V4Outcome = { name: i.outcome, price: american ? decimalToAmerican(i.price) : i.price };
    if (i.point !== null) o.point = i.point;
    if (i.player !== null) o.description = i.player;
    o.last_update = i.last_update;
    m.outcomes.push(o);
  }
  const bookmakers = [...books].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([key, markets]) => ({
    key,
    title: BOOKMAKERS.find((b) => b.key === key)?.title ?? key,
    last_update: new Date(bookLast.get(key)!).toISOString(),
    markets: [...markets].map(([mkey, m]) => ({ key: mkey, last_update: new Date(m.last).toISOString(), outcomes: m.outcomes })),
  }));
  bookLast = new Map();
  // the head's own object, `bookmakers` added last (a literal opening with a spread of the head cost about 1 us per
  // field after it on Node 20)
  const doc: EventHead & { bookmakers?: object[] } = eventHead(ev);
  doc.bookmakers = bookmakers;
  return doc;
}

const packr = new Packr({ useRecords: false });

export type WireFormat = 'json' | 'msgpack';

/** Encodes a frame; prices already in the socket's odds format. */
export function encode(frame: object, format: WireFormat): string | Uint8Array {
  return format === 'json' ? JSON.stringify(frame) : new Uint8Array(packr.pack(frame));
}

/** A copy of an item at another price, removed or not: its fields written out in their order (a literal opening
 *  with a spread of the item, `{ ...i, price }`, cost about 1 us per field after the spread on Node 20). */
export function repriced(i: DeltaItem, price: number, removed: boolean): DeltaItem {
  const o: DeltaItem = { event_id: i.event_id, market: i.market, point: i.point, player: i.player, outcome: i.outcome, book: i.book, price, last_update: i.last_update };
  if (removed) o.removed = true;
  return o;
}

/** Items with prices in the requested format (American as integers). */
export function priced(items: DeltaItem[], american: boolean): object[] {
  if (!american) return items;
  return items.map((i) => repriced(i, i.removed ? 0 : decimalToAmerican(i.price), i.removed === true));
}
