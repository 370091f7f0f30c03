// The order-book-style price store of DESIGN.md section 2.
//
// A quote is (event, market, point, player, outcome, book) -> decimal price with line_changed_at and
// verified_at (last_update is the later of the two). Quotes live in flat typed arrays indexed by an integer
// slot (about 26 bytes a quote plus its ladder entry; `npm run bench` measures it) instead of string-keyed
// objects (about 400 bytes each, DESIGN.md section 6).
//
// Per (event, market, point, player) a Line keeps, per outcome, the ladder of quote slots ordered best-first
// like one side of an order book: highest decimal price first, then the earliest to post it, then book id.
// Per (event, market, player) a Group keeps the lines by point and each book's current line: a book quotes one
// line of a market at a time, so a quote at a new point moves the book there and removes its old quotes.

import { CHANGE, CHG, OBS, RESTORE, RecordBuffer } from './records.js';

const NO_POINT = 0;
const POINT_OFFSET = 8192;
/** largest |point| a line can carry; points are multiples of 0.25 */
export const MAX_POINT = 2000;
export const MAX_OUTCOMES = 3;

export function pointCode(point: number): number {
  return point !== point ? NO_POINT : Math.round(point * 4) + POINT_OFFSET;
}

export class Line {
  /** quote slots best-first, one ladder per outcome slot */
  readonly ladders: number[][] = [[], [], []];
  quotes = 0;
  constructor(
    readonly event: number,
    readonly market: number,
    readonly point: number,
    readonly player: number,
    readonly code: number,
  ) {}
}

export class Group {
  readonly lines = new Map<number, Line>();
  readonly bookLine = new Map<number, Line>();
  constructor(readonly event: number, readonly market: number, readonly player: number) {}
}

class EventEntry {
  readonly groups = new Map<number, Group>();
  quotes = 0;
}

function groupKey(market: number, player: number): number {
  return market * 2097152 + (player + 1);
}

export interface QuoteView {
  price: number;
  lineChangedAt: number;
  verifiedAt: number;
  lastUpdate: number;
}

export class PriceStore {
  price: Float64Array;
  changedAt: Float64Array;
  verifiedAt: Float64Array;
  book: Uint16Array;
  private free: number[] = [];
  private next = 0;
  private live = 0;
  private readonly events = new Map<number, EventEntry>();
  /** observations ignored because they were older than the quote they would update */
  staleIgnored = 0;

  constructor(capacity = 1024) {
    this.price = new Float64Array(capacity);
    this.changedAt = new Float64Array(capacity);
    this.verifiedAt = new Float64Array(capacity);
    this.book = new Uint16Array(capacity);
  }

  get quoteCount(): number {
    return this.live;
  }

  get eventCount(): number {
    return this.events.size;
  }

  /** Applies `count` observations laid out as OBS, appending change records to `out`. Returns how many changed
   *  or verified a quote (stale ones are counted in `staleIgnored`). */
  apply(obs: Float64Array, count: number, out: RecordBuffer): number {
    let applied = 0;
    for (let i = 0, off = 0; i < count; i++, off += OBS.STRIDE) {
      if (this.observe(obs[off + OBS.EVENT], obs[off + OBS.MARKET], obs[off + OBS.POINT], obs[off + OBS.PLAYER],
        obs[off + OBS.OUTCOME], obs[off + OBS.BOOK], obs[off + OBS.PRICE], obs[off + OBS.TS], out)) applied++;
    }
    return applied;
  }

  observe(event: number, market: number, point: number, player: number, outcome: number, book: number,
    price: number, ts: number, out: RecordBuffer): boolean {
    const line = this.lineFor(event, market, point, player, book, ts, out);
    if (line === null) {
      this.staleIgnored++;
      return false;
    }
    const ladder = line.ladders[outcome];
    const at = this.find(ladder, book);
    if (at < 0) {
      const slot = this.alloc();
      this.price[slot] = price;
      this.changedAt[slot] = ts;
      this.verifiedAt[slot] = ts;
      this.book[slot] = book;
      this.insert(ladder, slot);
      line.quotes++;
      this.events.get(event)!.quotes++;
      this.live++;
      this.emit(out, CHANGE.NEW, line, outcome, slot);
      return true;
    }
    const slot = ladder[at];
    if (ts < this.changedAt[slot] || ts < this.verifiedAt[slot]) {
      this.staleIgnored++;
      return false;
    }
    this.verifiedAt[slot] = ts;
    if (this.price[slot] === price) {
      this.emit(out, CHANGE.VERIFIED, line, outcome, slot);
      return true;
    }
    this.price[slot] = price;
    this.changedAt[slot] = ts;
    this.reposition(ladder, at);
    this.emit(out, CHANGE.PRICE, line, outcome, slot);
    return true;
  }

  /** Rebuilds quotes from full state laid out as RESTORE, emitting nothing. */
  restore(rec: Float64Array, count: number): void {
    const sink = new RecordBuffer(CHG.STRIDE, 1);
    for (let i = 0, off = 0; i < count; i++, off += RESTORE.STRIDE) {
      const event = rec[off + RESTORE.EVENT];
      const book = rec[off + RESTORE.BOOK];
      const verified = rec[off + RESTORE.VERIFIED_AT];
      const line = this.lineFor(event, rec[off + RESTORE.MARKET], rec[off + RESTORE.POINT], rec[off + RESTORE.PLAYER],
        book, verified, sink);
      if (line === null) continue;
      const ladder = line.ladders[rec[off + RESTORE.OUTCOME]];
      if (this.find(ladder, book) >= 0) continue;
      const slot = this.alloc();
      this.price[slot] = rec[off + RESTORE.PRICE];
      this.changedAt[slot] = rec[off + RESTORE.LINE_CHANGED_AT];
      this.verifiedAt[slot] = verified;
      this.book[slot] = book;
      this.insert(ladder, slot);
      line.quotes++;
      this.events.get(event)!.quotes++;
      this.live++;
      sink.length = 0;
    }
  }

  /** Removes every quote of an event, emitting REMOVED records. */
  removeEvent(event: number, out: RecordBuffer): number {
    const entry = this.events.get(event);
    if (entry === undefined) return 0;
    let removed = 0;
    for (const group of entry.groups.values()) {
      for (const line of group.lines.values()) {
        for (let o = 0; o < MAX_OUTCOMES; o++) {
          const ladder = line.ladders[o];
          for (let k = 0; k < ladder.length; k++) {
            this.emit(out, CHANGE.REMOVED, line, o, ladder[k]);
            this.release(ladder[k]);
            removed++;
          }
          ladder.length = 0;
        }
      }
    }
    this.events.delete(event);
    return removed;
  }

  /** Returns the book's line for this observation, moving the book off another line of the group if needed;
   *  null when the observation is older than the book's quotes on its current line. */
  private lineFor(event: number, market: number, point: number, player: number, book: number, ts: number,
    out: RecordBuffer): Line | null {
    let entry = this.events.get(event);
    if (entry === undefined) {
      entry = new EventEntry();
      this.events.set(event, entry);
    }
    const gk = groupKey(market, player);
    let group = entry.groups.get(gk);
    if (group === undefined) {
      group = new Group(event, market, player);
      entry.groups.set(gk, group);
    }
    const code = pointCode(point);
    const current = group.bookLine.get(book);
    if (current !== undefined && current.code === code) return current;
    if (current !== undefined) {
      if (ts < this.newestOfBook(current, book)) return null;
      this.removeBookFromLine(group, current, book, entry, out);
    }
    let line = group.lines.get(code);
    if (line === undefined) {
      line = new Line(event, market, point, player, code);
      group.lines.set(code, line);
    }
    group.bookLine.set(book, line);
    return line;
  }

  private newestOfBook(line: Line, book: number): number {
    let newest = 0;
    for (let o = 0; o < MAX_OUTCOMES; o++) {
      const at = this.find(line.ladders[o], book);
      if (at >= 0) {
        const slot = line.ladders[o][at];
        newest = Math.max(newest, this.changedAt[slot], this.verifiedAt[slot]);
      }
    }
    return newest;
  }

  private removeBookFromLine(group: Group, line: Line, book: number, entry: EventEntry, out: RecordBuffer): void {
    for (let o = 0; o < MAX_OUTCOMES; o++) {
      const ladder = line.ladders[o];
      const at = this.find(ladder, book);
      if (at < 0) continue;
      const slot = ladder[at];
      this.emit(out, CHANGE.REMOVED, line, o, slot);
      ladder.splice(at, 1);
      this.release(slot);
      line.quotes--;
      entry.quotes--;
    }
    group.bookLine.delete(book);
    if (line.quotes === 0) group.lines.delete(line.code);
  }

  private find(ladder: number[], book: number): number {
    for (let k = 0; k < ladder.length; k++) if (this.book[ladder[k]] === book) return k;
    return -1;
  }

  /** true when slot a ranks above slot b */
  private better(a: number, b: number): boolean {
    const pa = this.price[a];
    const pb = this.price[b];
    if (pa !== pb) return pa > pb;
    const ca = this.changedAt[a];
    const cb = this.changedAt[b];
    if (ca !== cb) return ca < cb;
    return this.book[a] < this.book[b];
  }

  private insert(ladder: number[], slot: number): void {
    let k = ladder.length;
    ladder.push(slot);
    while (k > 0 && this.better(slot, ladder[k - 1])) {
      ladder[k] = ladder[k - 1];
      k--;
    }
    ladder[k] = slot;
  }

  private reposition(ladder: number[], at: number): void {
    const slot = ladder[at];
    let k = at;
    while (k > 0 && this.better(slot, ladder[k - 1])) {
      ladder[k] = ladder[k - 1];
      k--;
    }
    while (k < ladder.length - 1 && this.better(ladder[k + 1], slot)) {
      ladder[k] = ladder[k + 1];
      k++;
    }
    ladder[k] = slot;
  }

  private emit(out: RecordBuffer, kind: number, line: Line, outcome: number, slot: number): void {
    const off = out.push();
    const d = out.data;
    d[off + CHG.KIND] = kind;
    d[off + CHG.EVENT] = line.event;
    d[off + CHG.MARKET] = line.market;
    d[off + CHG.POINT] = line.point;
    d[off + CHG.PLAYER] = line.player;
    d[off + CHG.OUTCOME] = outcome;
    d[off + CHG.BOOK] = this.book[slot];
    d[off + CHG.PRICE] = this.price[slot];
    d[off + CHG.LINE_CHANGED_AT] = this.changedAt[slot];
    d[off + CHG.VERIFIED_AT] = this.verifiedAt[slot];
  }

  private alloc(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    if (this.next === this.price.length) this.grow();
    return this.next++;
  }

  private release(slot: number): void {
    this.price[slot] = 0;
    this.free.push(slot);
    this.live--;
  }

  private grow(): void {
    const n = Math.ceil(this.price.length * 1.5) + 16;
    const price = new Float64Array(n);
    price.set(this.price);
    this.price = price;
    const changedAt = new Float64Array(n);
    changedAt.set(this.changedAt);
    this.changedAt = changedAt;
    const verifiedAt = new Float64Array(n);
    verifiedAt.set(this.verifiedAt);
    this.verifiedAt = verifiedAt;
    const book = new Uint16Array(n);
    book.set(this.book);
    this.book = book;
  }

  // Reads (tests, analytics, rebuilds).

  line(event: number, market: number, point: number, player: number): Line | undefined {
    return this.events.get(event)?.groups.get(groupKey(market, player))?.lines.get(pointCode(point));
  }

  group(event: number, market: number, player: number): Group | undefined {
    return this.events.get(event)?.groups.get(groupKey(market, player));
  }

  quote(event: number, market: number, point: number, player: number, outcome: number, book: number): QuoteView | null {
    const line = this.line(event, market, point, player);
    if (line === undefined) return null;
    const at = this.find(line.ladders[outcome], book);
    if (at < 0) return null;
    const slot = line.ladders[outcome][at];
    return {
      price: this.price[slot],
      lineChangedAt: this.changedAt[slot],
      verifiedAt: this.verifiedAt[slot],
      lastUpdate: Math.max(this.changedAt[slot], this.verifiedAt[slot]),
    };
  }

  /** book ids of a ladder, best first */
  ladderBooks(event: number, market: number, point: number, player: number, outcome: number): number[] {
    const line = this.line(event, market, point, player);
    if (line === undefined) return [];
    return line.ladders[outcome].map((slot) => this.book[slot]);
  }

  /** Calls fn for every live quote of an event. */
  forEachQuote(event: number, fn: (line: Line, outcome: number, slot: number) => void): void {
    const entry = this.events.get(event);
    if (entry === undefined) return;
    for (const group of entry.groups.values()) {
      for (const line of group.lines.values()) {
        for (let o = 0; o < MAX_OUTCOMES; o++) for (const slot of line.ladders[o]) fn(line, o, slot);
      }
    }
  }

  eventIds(): IterableIterator<number> {
    return this.events.keys();
  }
}
