// The main thread's read model: events and the current quotes of every (event, market, player, book), rebuilt
// from the shards' change records so REST and WebSocket reads never wait on a shard (DESIGN.md section 1).
//
// Like the store, quotes live in flat records found through one FlatIndex probe (about 1 us an update where a
// Map of Maps of objects cost about 3 us, bench/ingest.ts): one record per book-line with its point and up to
// three outcome quotes. Each event keeps the list of its records for serving.

import { consistentMoneyline } from './analytics-math.js';
import { MARKETS, OUTRIGHTS } from './catalogue.js';
import { FlatIndex } from './flat-index.js';
import { CHANGE, CHG, RESTORE, RecordBuffer } from './records.js';
import type { EventKind } from './ingest.js';
import type { EventStatus, ProbablePitchers } from './types.js';

const R = {
  EVENT: 0,
  KEY: 1,
  POINT: 2,
  POS: 3,
  BOOK: 4,
  MARKET: 5,
  PLAYER: 6,
  /** outcome o's PRICE, CHANGED, VERIFIED start at Q + o * 3; a PRICE of 0 means no quote */
  Q: 7,
  STRIDE: 16,
} as const;

/** the two-way moneyline, whose book-lines are checked for consistency */
const H2H = MARKETS.findIndex((m) => m.key === 'h2h');
/** an outright's Yes and No, judged as a two-way moneyline (engine/analytics-rows.ts pairJudged) */
const OUTRIGHT = MARKETS.findIndex((m) => m.key === OUTRIGHTS);

/** 1 for a player prop market (EventView.gameVersion leaves them out) */
const PROP = Uint8Array.from(MARKETS, (m) => (m.kind === 'prop' ? 1 : 0));

/** change records warmed at a time (ReadModel.warm): their buckets and records stay in the cache until applied */
const WARM = 64;

function recKey(market: number, player: number, book: number): number {
  return (market * 2097152 + (player + 1)) * 1024 + book;
}

export class EventView {
  status: EventStatus = 'upcoming';
  /** record ids of this event's book-lines */
  readonly records: number[] = [];
  /** number of live quotes */
  quotes = 0;
  pitchers: ProbablePitchers | null = null;
  /** game, futures or event_market (engine/ingest.ts EventKind): only games are served as game lines */
  kind: EventKind = 'game';
  /** the name of a futures or event-market event; null on games (whose home and away are then '') */
  title: string | null = null;
  /** the feed that last sent this event ('sim', 'theoddsapi'); null when it came through POST /v1/ingest */
  source: string | null = null;
  /** changes whenever anything of the event may have changed but its player props: a quote of a game market or an
   *  outright (/odds serves outrights), its start, teams or status (every field above is written through
   *  ReadModel.upsertEvent, or right after it in the same call: Hub.upsertEvent). The game lines' documents of /odds are kept until it moves
   *  (http/routes/odds.ts): a game of the simulator holds about 1,400 quotes, most of them props that move all the
   *  time and that /odds does not serve. */
  gameVersion = 0;
  /** changes whenever the order /props serves the event's player props in may have changed: a prop book-line was
   *  added (a player may join the event's names) or moved to another line (http/routes/props.ts keeps each event's
   *  prop records in serving order until it moves) */
  propVersion = 0;
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

/** The heads and quotes of some events, for a read model of their own in another thread (the best-bets sweep in the
 *  piscina pool: workers/best-bets-task.ts): CHG records with the player ids renumbered densely, and those players'
 *  keys (PlayerNames.key, which canonicalInEvent reads) and names. */
export interface ReadModelSnapshot {
  events: { idx: number; id: string; sport: string; commence: number; home: string; away: string; status: EventStatus; kind: EventKind }[];
  records: Float64Array;
  count: number;
  playerKeys: string[];
  playerNames: string[];
}

/** A player's key and name by id: the PlayerNames registry, or a snapshot's renumbered players. */
export interface PlayerLookup {
  key(id: number): string;
  name(id: number): string;
}

export class ReadModel {
  /** events by interned id (dense) */
  private readonly byIdx: (EventView | undefined)[] = [];
  private readonly bySport = new Map<string, Set<EventView>>();
  private readonly versions = new Map<string, number>();
  private rec = new Float64Array(1024 * R.STRIDE);
  private next = 0;
  private readonly free: number[] = [];
  private readonly index = new FlatIndex(1024);
  private held = 0;
  /** newest write (ms) applied from any record */
  newestWrite = 0;
  /** newest write per book id */
  readonly newestByBook: number[] = [];
  private readonly touched = new Set<string>();
  /** warm(): per record of the group, where its index lookup starts, then its quote's offset (-1: none) */
  private readonly warmAt = new Int32Array(WARM);
  /** what warm() loads ends here, so the loads are not dropped as unused */
  private sink = 0;

  get eventCount(): number {
    return this.held;
  }

  event(idx: number): EventView | undefined {
    return this.byIdx[idx];
  }

  *events(): IterableIterator<EventView> {
    for (const ev of this.byIdx) if (ev !== undefined) yield ev;
  }

  upsertEvent(idx: number, id: string, sport: string, commence: number, home: string, away: string,
    status: EventStatus, shard: number): EventView {
    let ev = this.byIdx[idx];
    if (ev === undefined) {
      ev = new EventView(idx, id, sport, commence, home, away, shard);
      while (this.byIdx.length < idx) this.byIdx.push(undefined);
      this.byIdx[idx] = ev;
      this.held++;
      let set = this.bySport.get(sport);
      if (set === undefined) this.bySport.set(sport, (set = new Set()));
      set.add(ev);
    } else {
      ev.commence = commence;
      ev.home = home;
      ev.away = away;
    }
    ev.status = status;
    ev.gameVersion++;
    this.bump(sport);
    return ev;
  }

  /** Drops an event and whatever quotes it still holds. */
  removeEvent(idx: number): void {
    const ev = this.byIdx[idx];
    if (ev === undefined) return;
    for (const r of ev.records) {
      this.index.delete(idx, this.rec[r * R.STRIDE + R.KEY]);
      this.free.push(r);
    }
    this.byIdx[idx] = undefined;
    this.held--;
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

  // Record reads, for serving.
  book(r: number): number { return this.rec[r * R.STRIDE + R.BOOK]; }
  market(r: number): number { return this.rec[r * R.STRIDE + R.MARKET]; }
  player(r: number): number { return this.rec[r * R.STRIDE + R.PLAYER]; }
  point(r: number): number { return this.rec[r * R.STRIDE + R.POINT]; }
  price(r: number, o: number): number { return this.rec[r * R.STRIDE + R.Q + o * 3]; }
  /** Whether record r's quotes may count: its book's pair on the two-way moneyline is consistent
   *  (consistentMoneyline: the rule /odds and the shards' analytics apply); any other market's always. */
  consistent(r: number): boolean {
    const m = this.market(r);
    return (m !== H2H && m !== OUTRIGHT) || consistentMoneyline(this.price(r, 0), this.price(r, 1));
  }
  changedAt(r: number, o: number): number { return this.rec[r * R.STRIDE + R.Q + o * 3 + 1]; }
  verifiedAt(r: number, o: number): number { return this.rec[r * R.STRIDE + R.Q + o * 3 + 2]; }

  /** the record of (event, market, player, book), or -1 */
  find(event: number, market: number, player: number, book: number): number {
    return this.index.get(event, recKey(market, player, book));
  }

  /** The raw price of a quote now, 0 when there is none (a book holds one point per event, market and player). */
  quotePrice(event: number, market: number, point: number, player: number, outcome: number, book: number): number {
    const r = this.find(event, market, player, book);
    if (r < 0) return 0;
    const rp = this.point(r);
    return rp === point || (rp !== rp && point !== point) ? this.price(r, outcome) : 0;
  }

  /** Loads what apply() will read for records start..end: their index buckets, then their quotes' fields, each level
   *  in a loop of loads alone, so that the cache misses of a group of records overlap where each record waited for
   *  its own in turn (with a hash or a probe between two loads the processor keeps few in flight; as the store's
   *  warm(); bench/ingest.ts). Reads only. */
  private warm(records: Float64Array, start: number, end: number): void {
    const at = this.warmAt;
    const index = this.index;
    let sink = 0;
    for (let i = start, off = start * CHG.STRIDE; i < end; i++, off += CHG.STRIDE) {
      at[i - start] = index.startOf(records[off + CHG.EVENT] | 0, recKey(records[off + CHG.MARKET] | 0, records[off + CHG.PLAYER] | 0, records[off + CHG.BOOK] | 0));
    }
    sink += index.touchAll(at, end - start);
    for (let i = start, off = start * CHG.STRIDE; i < end; i++, off += CHG.STRIDE) {
      const r = index.get(records[off + CHG.EVENT] | 0, recKey(records[off + CHG.MARKET] | 0, records[off + CHG.PLAYER] | 0, records[off + CHG.BOOK] | 0));
      at[i - start] = r < 0 ? -1 : r * R.STRIDE + R.Q + (records[off + CHG.OUTCOME] | 0) * 3;
    }
    const d = this.rec;
    for (let i = 0; i < end - start; i++) if (at[i] >= 0) sink += d[at[i]];
    this.sink = sink;
  }

  /** Applies change records laid out as CHG; returns the sports touched. */
  apply(records: Float64Array, count: number): Set<string> {
    const touched = this.touched;
    touched.clear();
    let last: EventView | undefined;
    for (let i = 0, off = 0; i < count; i++, off += CHG.STRIDE) {
      if (i % WARM === 0) this.warm(records, i, Math.min(count, i + WARM));
      // `| 0`: integer keys and indexes, not heap numbers
      const idx = records[off + CHG.EVENT] | 0;
      const ev = last !== undefined && last.idx === idx ? last : this.byIdx[idx];
      if (ev === undefined) continue;
      last = ev;
      const market = records[off + CHG.MARKET] | 0;
      const player = records[off + CHG.PLAYER] | 0;
      const book = records[off + CHG.BOOK] | 0;
      const o = records[off + CHG.OUTCOME] | 0;
      const key = recKey(market, player, book);
      let r = this.index.get(idx, key);
      const d = this.rec;
      if ((records[off + CHG.KIND] | 0) === CHANGE.REMOVED) {
        if (r < 0) continue;
        const q = r * R.STRIDE + R.Q + o * 3;
        if (d[q] === 0) continue;
        d[q] = 0;
        ev.quotes--;
        if (PROP[market] === 0 || market === OUTRIGHT) ev.gameVersion++;
        touched.add(ev.sport);
        continue;
      }
      if (r < 0) r = this.alloc(ev, key, market, player, book);
      const base = r * R.STRIDE;
      const q = base + R.Q + o * 3;
      if (this.rec[q] === 0) ev.quotes++;
      const dd = this.rec;
      const point = records[off + CHG.POINT];
      if (PROP[market] === 1 && dd[base + R.POINT] !== point && !(point !== point && dd[base + R.POINT] !== dd[base + R.POINT])) ev.propVersion++;
      dd[base + R.POINT] = point;
      dd[q] = records[off + CHG.PRICE];
      dd[q + 1] = records[off + CHG.LINE_CHANGED_AT];
      const verified = records[off + CHG.VERIFIED_AT];
      dd[q + 2] = verified;
      if (verified > this.newestWrite) this.newestWrite = verified;
      if (!(this.newestByBook[book] >= verified)) this.newestByBook[book] = verified;
      if (PROP[market] === 0 || market === OUTRIGHT) ev.gameVersion++;
      touched.add(ev.sport);
    }
    for (const sport of touched) this.bump(sport);
    return touched;
  }

  private alloc(ev: EventView, key: number, market: number, player: number, book: number): number {
    let r = this.free.pop();
    if (r === undefined) {
      r = this.next++;
      if ((r + 1) * R.STRIDE > this.rec.length) {
        const grown = new Float64Array(Math.ceil(this.rec.length * 1.5) + R.STRIDE * 16);
        grown.set(this.rec);
        this.rec = grown;
      }
    }
    const d = this.rec;
    const base = r * R.STRIDE;
    d[base + R.EVENT] = ev.idx;
    d[base + R.KEY] = key;
    d[base + R.POINT] = Number.NaN;
    d[base + R.POS] = ev.records.length;
    d[base + R.BOOK] = book;
    d[base + R.MARKET] = market;
    d[base + R.PLAYER] = player;
    for (let o = 0; o < 3; o++) d[base + R.Q + o * 3] = 0;
    ev.records.push(r);
    if (PROP[market] === 1) ev.propVersion++;
    this.index.set(ev.idx, key, r);
    return r;
  }

  /** The heads and live quotes of `events` (ReadModelSnapshot), players renumbered from 0 in order of appearance. */
  snapshot(events: Iterable<EventView>, players: PlayerLookup): ReadModelSnapshot {
    const buf = new RecordBuffer(CHG.STRIDE, 1024);
    const local = new Map<number, number>();
    const playerKeys: string[] = [];
    const playerNames: string[] = [];
    const heads: ReadModelSnapshot['events'] = [];
    for (const ev of events) {
      heads.push({ idx: ev.idx, id: ev.id, sport: ev.sport, commence: ev.commence, home: ev.home, away: ev.away, status: ev.status, kind: ev.kind });
      for (const r of ev.records) {
        const pid = this.player(r);
        let player = -1;
        if (pid >= 0) {
          const known = local.get(pid);
          if (known !== undefined) player = known;
          else {
            player = playerKeys.length;
            local.set(pid, player);
            playerKeys.push(players.key(pid));
            playerNames.push(players.name(pid));
          }
        }
        for (let o = 0; o < 3; o++) {
          const price = this.price(r, o);
          if (price === 0) continue;
          const off = buf.push();
          buf.data[off + CHG.KIND] = CHANGE.PRICE;
          this.writeQuote(buf.data, off + CHG.EVENT - RESTORE.EVENT, ev.idx, r, o, player);
        }
      }
    }
    const count = buf.length;
    return { events: heads, records: buf.take(), count, playerKeys, playerNames };
  }

  /** A read model of a snapshot's events and quotes alone, and its players (ids as the snapshot numbers them). */
  static fromSnapshot(snap: ReadModelSnapshot): { rm: ReadModel; players: PlayerLookup } {
    const rm = new ReadModel();
    for (const e of snap.events) rm.upsertEvent(e.idx, e.id, e.sport, e.commence, e.home, e.away, e.status, 0).kind = e.kind;
    rm.apply(snap.records, snap.count);
    const players: PlayerLookup = { key: (id) => snap.playerKeys[id], name: (id) => snap.playerNames[id] };
    return { rm, players };
  }

  /** Every live quote of the events of one shard, laid out as RESTORE, to rebuild a restarted shard. */
  restoreRecords(shard: number): { records: Float64Array; count: number } {
    const buf = new RecordBuffer(RESTORE.STRIDE, 1024);
    for (const ev of this.events()) {
      if (ev.shard !== shard) continue;
      for (const r of ev.records) {
        for (let o = 0; o < 3; o++) {
          const price = this.price(r, o);
          if (price === 0) continue;
          const off = buf.push(); // first: it may replace buf.data
          this.writeQuote(buf.data, off, ev.idx, r, o, this.player(r));
        }
      }
    }
    const count = buf.length;
    return { records: buf.take(), count };
  }

  /** Writes outcome o of record r as the fields of a RESTORE record at `at`: CHG holds the same fields in the same
   *  order after its KIND, so a CHG record's are written at its offset + 1. */
  private writeQuote(d: Float64Array, at: number, event: number, r: number, o: number, player: number): void {
    d[at + RESTORE.EVENT] = event;
    d[at + RESTORE.MARKET] = this.market(r);
    d[at + RESTORE.POINT] = this.point(r);
    d[at + RESTORE.PLAYER] = player;
    d[at + RESTORE.OUTCOME] = o;
    d[at + RESTORE.BOOK] = this.book(r);
    d[at + RESTORE.PRICE] = this.price(r, o);
    d[at + RESTORE.LINE_CHANGED_AT] = this.changedAt(r, o);
    d[at + RESTORE.VERIFIED_AT] = this.verifiedAt(r, o);
  }
}
