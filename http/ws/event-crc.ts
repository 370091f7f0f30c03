// The per-event CRC of the stream frames (frames.ts: canonical, crcOf), kept cheap for events with many quotes.
//
// Built from scratch, the canonical string of an event costs about 2.5 us a quote (an NBA game of the simulator holds
// about 1,400 with its props: 2.5 ms), most of it making a line per quote and sorting them; an odds-fast delta touches
// about seven such games, so the CRCs took about 20 ms of the main thread per delta, in series with its send
// (bench/ws.ts). Here each event keeps its quotes' line prefixes (`book|market|player|point|outcome|`) and their
// sorted order. A line's prefix fixes its place: every prefix ends with '|', which no field holds, so two lines
// first differ inside their prefixes and a price never reorders them. While an event's quotes keep their identity
// (book, market, point, player, outcome, in the read model's order) only the prices are read again; a quote added,
// removed or moved to another point rebuilds the event's entry.

import { crc32 } from 'node:zlib';
import { BOOKMAKERS, MARKETS } from '../../engine/catalogue.js';
import type { EventView, ReadModel } from '../../engine/read-model.js';
import { crcOf, eventItems, outcomeName, outcomePoint } from './frames.js';

/** per quote in `ident`: its record and outcome (r * 3 + o), then the book, market, point and player of the record */
const ID = 5;

interface Entry {
  home: string;
  away: string;
  /** quotes, in the read model's order (records of ev.records, then outcomes) */
  n: number;
  ident: Float64Array;
  /** each quote's line without its price, and its whole line for the price in `priced` */
  prefixes: string[];
  lines: string[];
  priced: Float64Array;
  /** quote indexes in canonical order */
  order: Int32Array;
  /** false when a field holds '|' or two prefixes are equal: the prefixes do not fix the order, so the event's CRC
   *  is computed from scratch */
  exact: boolean;
}

const same = (a: number, b: number): boolean => a === b || (a !== a && b !== b);
const byPrefix = (prefixes: string[]) => (a: number, b: number): number => (prefixes[a] < prefixes[b] ? -1 : prefixes[a] > prefixes[b] ? 1 : 0);

export class EventCrcs {
  /** by event: dropped with the event's view */
  private readonly entries = new WeakMap<EventView, Entry>();
  private prices = new Float64Array(1024);
  /** events whose entry was (re)built, for tests and the benchmark */
  rebuilds = 0;

  constructor(private readonly rm: ReadModel, private readonly player: (id: number) => string | null) {}

  /** crcOf(eventItems(rm, ev, player)), as a client computes it over its book */
  of(ev: EventView): number {
    const rm = this.rm;
    let e = this.entries.get(ev);
    let ok = e !== undefined && e.home === ev.home && e.away === ev.away;
    let k = 0;
    for (const r of ev.records) {
      const book = rm.book(r);
      const market = rm.market(r);
      const point = rm.point(r);
      const player = rm.player(r);
      for (let o = 0; o < 3; o++) {
        const price = rm.price(r, o);
        if (price === 0) continue;
        if (ok) {
          const at = k * ID;
          const id = e!.ident;
          ok = k < e!.n && id[at] === r * 3 + o && id[at + 1] === book && id[at + 2] === market && same(id[at + 3], point) && id[at + 4] === player;
        }
        if (k === this.prices.length) {
          const grown = new Float64Array(k * 2);
          grown.set(this.prices);
          this.prices = grown;
        }
        this.prices[k++] = price;
      }
    }
    if (e === undefined || !ok || k !== e.n) e = this.rebuild(ev, k, e !== undefined && e.home === ev.home && e.away === ev.away ? e : undefined);
    if (!e.exact) return crcOf(eventItems(rm, ev, this.player));
    const { order, prefixes, lines, priced } = e;
    const prices = this.prices;
    let s = '';
    for (let i = 0; i < k; i++) {
      const q = order[i];
      // String(price) costs about 100 ns: a line is made again only when its price moved
      if (priced[q] !== prices[q]) {
        priced[q] = prices[q];
        lines[q] = prefixes[q] + String(prices[q]);
      }
      s += i === 0 ? lines[q] : '\n' + lines[q];
    }
    return crc32(Buffer.from(s, 'utf8')) >>> 0;
  }

  /** A new entry for the event's n quotes. With the event's previous entry (same teams), the quotes that kept their
   *  identity keep their prefixes and their order: only the others are sorted, then merged in (a price move of an
   *  event with 1,400 quotes otherwise re-sorts them all when one of its books moves a line). */
  private rebuild(ev: EventView, n: number, was: Entry | undefined): Entry {
    this.rebuilds++;
    const rm = this.rm;
    const ident = new Float64Array(n * ID);
    const prefixes: string[] = new Array<string>(n);
    const lines: string[] = new Array<string>(n).fill('');
    const priced = new Float64Array(n);
    let exact = !ev.home.includes('|') && !ev.away.includes('|');
    /** per previous quote, its index in the new entry (-1: gone or changed) */
    const kept = was === undefined ? null : new Int32Array(was.n).fill(-1);
    const prevAt = was === undefined ? null : new Map<number, number>();
    if (was !== undefined) for (let i = 0; i < was.n; i++) prevAt!.set(was.ident[i * ID], i);
    const fresh: number[] = [];
    let k = 0;
    for (const r of ev.records) {
      const book = rm.book(r);
      const market = rm.market(r);
      const point = rm.point(r);
      const playerId = rm.player(r);
      let player: string | null = null;
      for (let o = 0; o < 3; o++) {
        if (rm.price(r, o) === 0) continue;
        const at = k * ID;
        ident[at] = r * 3 + o;
        ident[at + 1] = book;
        ident[at + 2] = market;
        ident[at + 3] = point;
        ident[at + 4] = playerId;
        const p = prevAt?.get(r * 3 + o);
        if (p !== undefined) {
          const id = was!.ident;
          const pa = p * ID;
          if (id[pa + 1] === book && id[pa + 2] === market && same(id[pa + 3], point) && id[pa + 4] === playerId) {
            prefixes[k] = was!.prefixes[p];
            lines[k] = was!.lines[p];
            priced[k] = was!.priced[p];
            kept![p] = k++;
            continue;
          }
        }
        if (player === null) {
          player = this.player(playerId) ?? '';
          if (player.includes('|')) exact = false;
        }
        prefixes[k] = `${BOOKMAKERS[book].key}|${MARKETS[market].key}|${player}|${outcomePoint(market, point, o) ?? ''}|${outcomeName(ev, market, o)}|`;
        fresh.push(k++);
      }
    }
    if (was !== undefined && !was.exact) exact = false;
    const cmp = byPrefix(prefixes);
    fresh.sort(cmp);
    const order = new Int32Array(n);
    let m = 0;
    let f = 0;
    // the kept quotes in their previous order, merged with the new ones
    if (was !== undefined) {
      for (let i = 0; i < was.n; i++) {
        const q = kept![was.order[i]];
        if (q < 0) continue;
        while (f < fresh.length && cmp(fresh[f], q) < 0) order[m++] = fresh[f++];
        order[m++] = q;
      }
    }
    while (f < fresh.length) order[m++] = fresh[f++];
    for (let i = 1; i < n && exact; i++) if (prefixes[order[i]] === prefixes[order[i - 1]]) exact = false;
    const e: Entry = { home: ev.home, away: ev.away, n, ident, prefixes, lines, priced, order, exact };
    this.entries.set(ev, e);
    return e;
  }
}
