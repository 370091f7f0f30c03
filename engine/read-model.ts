// The main thread's read model: events and the current quote of every (book, market, player), rebuilt from the
// shards' change records so REST and WebSocket reads never wait on a shard (DESIGN.md section 1).

import { CHANGE, CHG, RESTORE, RecordBuffer } from './records.js';
import type { EventStatus } from './types.js';

/** One book's current line of one market (and player) on one event: up to three outcome quotes. */
export class MarketQuote {
  point = Number.NaN;
  /** per outcome slot: decimal price (0 = no quote), line_changed_at, verified_at */
  readonly price = [0, 0, 0];
  readonly changedAt = [0, 0, 0];
  readonly verifiedAt = [0, 0, 0];
  constructor(readonly market: number, readonly player: number) {}

  get lastUpdate(): number {
    let t = 0;
    for (let o = 0; o < 3; o++) {
      if (this.price[o] > 0 && this.verifiedAt[o] > t) t = this.verifiedAt[o];
      if (this.price[o] > 0 && this.changedAt[o] > t) t = this.changedAt[o];
    }
    return t;
  }

  get empty(): boolean {
    return this.price[0] === 0 && this.price[1] === 0 && this.price[2] === 0;
  }
}

export class BookQuotes {
  readonly markets = new Map<number, MarketQuote>();
}

export class EventView {
  status: EventStatus = 'upcoming';
  readonly books = new Map<number, BookQuotes>();
  /** number of live quotes */
  quotes = 0;
  constructor(
    readonly idx: number,
    readonly id: string,
    readonly sport: string,
    public commence: number,
    public home: string,
    public away: string,
    readonly shard: number,
  ) {}
}

function marketKey(market: number, player: number): number {
  return market * 2097152 + (player + 1);
}

export class ReadModel {
  readonly events = new Map<number, EventView>();
  private readonly bySport = new Map<string, Set<EventView>>();
  private readonly versions = new Map<string, number>();
  /** newest write (ms) applied from any record */
  newestWrite = 0;
  /** newest write per book id */
  readonly newestByBook = new Map<number, number>();
  private touched = new Set<string>();

  upsertEvent(idx: number, id: string, sport: string, commence: number, home: string, away: string,
    status: EventStatus, shard: number): EventView {
    let ev = this.events.get(idx);
    if (ev === undefined) {
      ev = new EventView(idx, id, sport, commence, home, away, shard);
      this.events.set(idx, ev);
      let set = this.bySport.get(sport);
      if (set === undefined) {
        set = new Set();
        this.bySport.set(sport, set);
      }
      set.add(ev);
    } else {
      ev.commence = commence;
      ev.home = home;
      ev.away = away;
    }
    ev.status = status;
    this.bump(sport);
    return ev;
  }

  removeEvent(idx: number): void {
    const ev = this.events.get(idx);
    if (ev === undefined) return;
    this.events.delete(idx);
    this.bySport.get(ev.sport)?.delete(ev);
    this.bump(ev.sport);
  }

  sportEvents(sport: string): Iterable<EventView> {
    return this.bySport.get(sport) ?? [];
  }

  /** Data version of a sport: changes whenever anything served for it may have changed. */
  version(sport: string): number {
    return this.versions.get(sport) ?? 0;
  }

  private bump(sport: string): void {
    this.versions.set(sport, (this.versions.get(sport) ?? 0) + 1);
  }

  /** Applies change records laid out as CHG; returns the sports touched. */
  apply(records: Float64Array, count: number): Set<string> {
    const touched = this.touched;
    touched.clear();
    let last: EventView | undefined;
    for (let i = 0, off = 0; i < count; i++, off += CHG.STRIDE) {
      const idx = records[off + CHG.EVENT];
      const ev = last !== undefined && last.idx === idx ? last : this.events.get(idx);
      if (ev === undefined) continue;
      last = ev;
      const bookId = records[off + CHG.BOOK];
      const kind = records[off + CHG.KIND];
      const key = marketKey(records[off + CHG.MARKET], records[off + CHG.PLAYER]);
      const o = records[off + CHG.OUTCOME];
      let book = ev.books.get(bookId);
      if (kind === CHANGE.REMOVED) {
        const mq = book?.markets.get(key);
        if (book === undefined || mq === undefined || mq.price[o] === 0) continue;
        if (mq.point !== records[off + CHG.POINT] && !(mq.point !== mq.point && records[off + CHG.POINT] !== records[off + CHG.POINT])) continue;
        mq.price[o] = 0;
        ev.quotes--;
        if (mq.empty) {
          book.markets.delete(key);
          if (book.markets.size === 0) ev.books.delete(bookId);
        }
        touched.add(ev.sport);
        continue;
      }
      if (book === undefined) {
        book = new BookQuotes();
        ev.books.set(bookId, book);
      }
      let mq = book.markets.get(key);
      if (mq === undefined) {
        mq = new MarketQuote(records[off + CHG.MARKET], records[off + CHG.PLAYER]);
        book.markets.set(key, mq);
      }
      if (mq.price[o] === 0) ev.quotes++;
      mq.point = records[off + CHG.POINT];
      mq.price[o] = records[off + CHG.PRICE];
      mq.changedAt[o] = records[off + CHG.LINE_CHANGED_AT];
      const verified = records[off + CHG.VERIFIED_AT];
      mq.verifiedAt[o] = verified;
      if (verified > this.newestWrite) this.newestWrite = verified;
      if ((this.newestByBook.get(bookId) ?? 0) < verified) this.newestByBook.set(bookId, verified);
      touched.add(ev.sport);
    }
    for (const sport of touched) this.bump(sport);
    return touched;
  }

  /** Every live quote of the events of one shard, laid out as RESTORE, to rebuild a restarted shard. */
  restoreRecords(shard: number): { records: Float64Array; count: number } {
    const buf = new RecordBuffer(RESTORE.STRIDE, 1024);
    for (const ev of this.events.values()) {
      if (ev.shard !== shard) continue;
      for (const [bookId, book] of ev.books) {
        for (const mq of book.markets.values()) {
          for (let o = 0; o < 3; o++) {
            if (mq.price[o] === 0) continue;
            const off = buf.push();
            const d = buf.data;
            d[off + RESTORE.EVENT] = ev.idx;
            d[off + RESTORE.MARKET] = mq.market;
            d[off + RESTORE.POINT] = mq.point;
            d[off + RESTORE.PLAYER] = mq.player;
            d[off + RESTORE.OUTCOME] = o;
            d[off + RESTORE.BOOK] = bookId;
            d[off + RESTORE.PRICE] = mq.price[o];
            d[off + RESTORE.LINE_CHANGED_AT] = mq.changedAt[o];
            d[off + RESTORE.VERIFIED_AT] = mq.verifiedAt[o];
          }
        }
      }
    }
    const count = buf.length;
    return { records: buf.take(), count };
  }
}
