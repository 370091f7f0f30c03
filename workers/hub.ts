// The main thread's side of the engine: validates and interns ingest batches, routes observations to the shard
// that owns each event (hash of the event id), and applies the shards' change records to the read model,
// numbering them per sport for the streams that follow.

import { ApiError } from '../engine/errors.js';
import { isRejection, parseEvent, parsePrice, type EventRecord, type Rejection } from '../engine/ingest.js';
import { Interner } from '../engine/interner.js';
import { EventPlayers, PlayerNames } from '../engine/players.js';
import { AnalyticsView, noChanges, type AnalyticsChanges, type QuotePrice } from '../engine/analytics-view.js';
import { ReadModel, type EventView } from '../engine/read-model.js';
import { OBS, RecordBuffer } from '../engine/records.js';
import type { ChangesMsg } from './protocol.js';
import { ShardPool } from './shard-pool.js';

export const MAX_INGEST_EVENTS = 10_000;
export const MAX_INGEST_PRICES = 200_000;
/** observations per APPLY of a large ingest: each full chunk is sent while the rest is parsed, so the shard's work
 *  overlaps the main thread's parsing instead of following it (bench/analytics.ts 2b, one batch in flight) */
const CHUNK = 512;
/** The longest an analytics read waits for a shard's analytics to catch up with its quotes (Hub.consistent): a
 *  safety bound; a batch's analytics normally follow its quotes within milliseconds. */
const CONSISTENT_WAIT_MS = 1000;

/** A read waiting for the analytics of the shards that were behind when it came. */
interface Waiter {
  run: () => void;
  /** the shards behind at arrival, and each one's count of catch-ups then */
  shards: number[];
  epochs: number[];
}

export interface IngestResult {
  events: number;
  /** price observations applied: a change or a no-change verification of a quote */
  accepted: number;
  /** valid price observations not applied because they are older than the quote they would update */
  ignored: number;
  rejected: ({ index: number } & Rejection)[];
  rejected_events: ({ index: number } & Rejection)[];
}

/** One shard answer as applied to the read model, for streams and webhooks. */
export interface ChangeBatch {
  shard: number;
  /** CHG records; a view of the shard's message buffer, which is reused once the listeners return: read it during
   *  the call, copy what must outlive it */
  records: Float64Array;
  count: number;
  /** per-sport sequence number after this batch, for every sport it touched */
  seqs: Map<string, number>;
}

/** The two arrays of an ingest body; a body of the wrong shape or over the limits throws ApiError (nothing is
 *  applied). Shared by every ingest path (HTTP, NATS, cluster replication) so they refuse the same bodies. */
export function batchShape(body: unknown): { events: unknown[]; prices: unknown[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('MALFORMED_BODY', 'body must be an object {"events": [...], "prices": [...]}');
  }
  const b = body as Record<string, unknown>;
  // a misspelt top level ({"event": [...]}) was a 202 applying nothing, with no word of why
  for (const k in b) {
    if (k !== 'events' && k !== 'prices') throw new ApiError('MALFORMED_BODY', `unknown field ${JSON.stringify(k).slice(0, 80)}: the body holds "events" and "prices"`);
  }
  // absent is an empty list; null, like any other non-array, is a malformed body
  const events = b.events === undefined ? [] : b.events;
  const prices = b.prices === undefined ? [] : b.prices;
  if (!Array.isArray(events) || !Array.isArray(prices)) {
    throw new ApiError('MALFORMED_BODY', '"events" and "prices" must be arrays when present');
  }
  if (events.length > MAX_INGEST_EVENTS || prices.length > MAX_INGEST_PRICES) {
    throw new ApiError('BODY_TOO_LARGE', `at most ${MAX_INGEST_EVENTS} events and ${MAX_INGEST_PRICES} prices per batch`);
  }
  return { events, prices };
}

/** FNV-1a of the event id: stable across restarts, so an event always lands on the same shard. */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

export class Hub {
  readonly readModel = new ReadModel();
  readonly analytics = new AnalyticsView();
  readonly eventIds = new Interner();
  /** players by canonical key (engine/players.ts): one id and one spelling per person across books */
  readonly players = new PlayerNames();
  /** initial spellings settled per event at ingest (engine/players.ts EventPlayers) */
  readonly eventPlayers = new EventPlayers(this.players);
  readonly pool: ShardPool;
  private readonly records = new Map<string, EventRecord>();
  private readonly seqs = new Map<string, number>();
  private readonly listeners: ((batch: ChangeBatch) => void)[] = [];
  private readonly headListeners: ((ev: EventView, oldHome: string, oldAway: string) => void)[] = [];
  /** the read model's raw price of a quote (the analytics view prices +EV rows' growth with it) */
  private readonly priceOf: QuotePrice = (event, market, point, player, outcome, book) =>
    this.readModel.quotePrice(event, market, point, player, outcome, book);
  private readonly analyticsListeners: ((changes: AnalyticsChanges) => void)[] = [];
  private readonly outs: RecordBuffer[] = [];
  /** games not started yet, by event index: their start time. tick() hands the started ones to their shards, which
   *  drop the quotes last observed before the start (a pregame price is not an in-play one) */
  private readonly upcoming = new Map<number, number>();
  /** games whose start was handed to their shard and not yet answered */
  private readonly kicking = new Set<number>();
  readonly counters = { observations: 0, accepted: 0, rejected: 0, stale: 0, changeRecords: 0, shardRestarts: 0 };
  /** per shard: its early batch's quotes are in the read model and their analytics are not yet in the view */
  private readonly behind: boolean[] = [];
  private behindCount = 0;
  /** per shard: how many times its analytics caught up with its quotes */
  private readonly caughtUp: number[] = [];
  private waiters: Waiter[] = [];
  private waitTimer: NodeJS.Timeout | null = null;

  constructor(shards: number, readonly now: () => number = Date.now, opts: { analytics?: boolean } = {}) {
    this.pool = new ShardPool({
      shards,
      now,
      analytics: opts.analytics,
      onChanges: (shard, msg) => this.onChanges(shard, msg),
      restoreFor: (shard) => {
        // the restarted shard republishes every analytics row it still has: what it no longer has must go too
        for (const ev of this.readModel.events()) if (ev.shard === shard) this.analytics.dropEvent(ev.idx);
        return this.readModel.restoreRecords(shard);
      },
      onRestart: () => this.counters.shardRestarts++,
    });
    for (let i = 0; i < shards; i++) {
      this.outs.push(new RecordBuffer(OBS.STRIDE, 1024));
      this.behind.push(false);
      this.caughtUp.push(0);
    }
  }

  /**
   * Runs a read of the analytics view when the view agrees with the read model, now or later. A batch alone in flight
   * is answered quotes first (the read model gets its prices while the shard brings the analytics up to date): in
   * that gap /odds already shows a moved price while an arbitrage still has its old leg, an EV row its sharp's old
   * line. A read that comes then waits for the analytics of the shards behind at its arrival (milliseconds), and
   * runs synchronously as they are applied, so it sees the same state /odds would. Bounded by CONSISTENT_WAIT_MS.
   */
  consistent<T>(read: () => T): T | Promise<T> {
    if (this.behindCount === 0) return read();
    return new Promise<T>((resolve, reject) => {
      const shards: number[] = [];
      const epochs: number[] = [];
      for (let i = 0; i < this.behind.length; i++) {
        if (!this.behind[i]) continue;
        shards.push(i);
        epochs.push(this.caughtUp[i]);
      }
      this.waiters.push({
        run: () => {
          try { resolve(read()); } catch (e) { reject(e); }
        },
        shards, epochs,
      });
      this.waitTimer ??= setTimeout(() => this.release(true), CONSISTENT_WAIT_MS);
    });
  }

  /** Runs the waiting reads whose shards have all caught up since they came (all of them when `all`). */
  private release(all: boolean): void {
    const ready: Waiter[] = [];
    const rest: Waiter[] = [];
    for (const w of this.waiters) {
      const ok = all || this.behindCount === 0 || w.shards.every((s, i) => this.caughtUp[s] !== w.epochs[i]);
      (ok ? ready : rest).push(w);
    }
    this.waiters = rest;
    if (rest.length === 0 && this.waitTimer !== null) {
      clearTimeout(this.waitTimer);
      this.waitTimer = null;
    }
    for (const w of ready) w.run();
  }

  start(): Promise<void> {
    return this.pool.start();
  }

  close(): Promise<void> {
    if (this.waiters.length > 0) this.release(true);
    return this.pool.close();
  }

  onBatch(fn: (batch: ChangeBatch) => void): void {
    this.listeners.push(fn);
  }

  /** Called with the ids of events made final, once they have left the store (their quotes' REMOVED records came
   *  first, in a change batch). */
  onFinal(fn: (ids: readonly string[]) => void): void {
    this.finalListeners.push(fn);
  }
  private readonly finalListeners: ((ids: readonly string[]) => void)[] = [];

  /** Called when a known event's start, teams or title change (no quote changes with it: the streams announce it). */
  onEventHead(fn: (ev: EventView, oldHome: string, oldAway: string) => void): void {
    this.headListeners.push(fn);
  }

  /** Called after each shard answer that opened or closed an arbitrage or a positive-EV row (webhooks). */
  onAnalytics(fn: (changes: AnalyticsChanges) => void): void {
    this.analyticsListeners.push(fn);
    this.analytics.changes ??= noChanges();
  }

  sportSeq(sport: string): number {
    return this.seqs.get(sport) ?? 0;
  }

  event(id: string): EventRecord | undefined {
    return this.records.get(id);
  }

  /** every event held (not final), in the form of an ingest body's events: the cluster's event refresh resends them */
  eventInputs(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const e of this.records.values()) {
      const kind = e.kind ?? 'game';
      out.push({
        id: e.id, sport_key: e.sport.key, commence_time: e.commence, kind, status: e.status,
        ...(kind === 'game' ? { home_team: e.home, away_team: e.away } : { title: e.title }),
        ...(e.pitchers !== null ? { probable_pitchers: e.pitchers } : {}),
      });
    }
    return out;
  }

  /** Applies a parsed ingest body. A body of the wrong shape throws ApiError and applies nothing; bad items are
   *  rejected one by one. Resolves once every accepted observation is in the read model. `source` labels the
   *  events of the batch with the built-in feed that sent them (raw_json.feed); omitted, they keep their label. */
  async ingest(body: unknown, now: number, source?: string): Promise<IngestResult> {
    const { events, prices } = batchShape(body);
    const result: IngestResult = { events: 0, accepted: 0, ignored: 0, rejected: [], rejected_events: [] };
    const finals: EventRecord[] = [];
    for (let i = 0; i < events.length; i++) {
      const raw = events[i] as { id?: unknown } | null;
      const known = typeof raw?.id === 'string' ? this.records.get(raw.id) : undefined;
      const ev = parseEvent(raw, now, known);
      if (isRejection(ev)) {
        result.rejected_events.push({ index: i, ...ev });
        continue;
      }
      // a game finished earlier in this batch leaves the store after the batch: upserted again here it would be
      // removed with the prices sent for it, which the answer would count as applied
      if (ev.status !== 'final' && known?.status === 'final') {
        result.rejected_events.push({ index: i, error_code: 'INVALID_EVENT',
          message: `event ${ev.id} was made final in this batch (or one still being applied): re-create it in a later batch` });
        continue;
      }
      this.upsertEvent(ev, source, now);
      if (ev.status === 'final') finals.push(ev);
      result.events++;
    }
    const lookup = (id: string) => this.records.get(id);
    const touched = new Set<number>();
    const sent: Promise<number>[] = [];
    let late = 0;
    // the last chunk of each shard goes whatever happens in the loop: a shard left with an unfinished batch would
    // hold back its analytics until the next ingest, and the observations parsed so far would go with it
    try {
      for (let i = 0; i < prices.length; i++) {
        const p = parsePrice(prices[i], lookup, now);
        if (isRejection(p)) {
          result.rejected.push({ index: i, ...p });
          continue;
        }
        const id = (prices[i] as { event_id: string }).event_id;
        const idx = this.eventIds.id(id);
        const view = this.readModel.event(idx)!;
        // observed before the game started, sent after: a pregame price, not one the book offers in play (the
        // start dropped the game's pregame quotes: tick())
        if (p.ts < view.commence && view.commence <= now && view.kind === 'game') {
          late++;
          continue;
        }
        const shard = view.shard;
        const player = p.player === null ? -1 : this.eventPlayers.resolve(idx, p.market, p.book, this.players.id(p.player));
        const out = this.outs[shard];
        const off = out.push();
        const d = out.data;
        d[off + OBS.EVENT] = idx;
        d[off + OBS.MARKET] = p.market;
        d[off + OBS.POINT] = p.point;
        d[off + OBS.PLAYER] = player;
        d[off + OBS.OUTCOME] = p.outcome;
        d[off + OBS.BOOK] = p.book;
        d[off + OBS.PRICE] = p.price;
        d[off + OBS.TS] = p.ts;
        touched.add(shard);
        result.accepted++;
        // a full chunk goes now: the shard applies it while this loop parses the next (ApplyMsg.more)
        if (out.length === CHUNK) sent.push(this.pool.apply(shard, out.take(), CHUNK, true, now));
      }
    } finally {
      for (const shard of touched) {
        const n = this.outs[shard].length;
        sent.push(this.pool.apply(shard, this.outs[shard].take(), n, false, now));
      }
    }
    this.counters.observations += prices.length;
    this.counters.rejected += result.rejected.length;
    for (const stale of await Promise.all(sent)) result.ignored += stale;
    result.accepted -= result.ignored;
    result.ignored += late;
    this.counters.accepted += result.accepted;
    if (finals.length > 0) await this.finish(finals);
    return result;
  }

  /** Sends pre-encoded observations straight to a shard (benchmarks, rebuilds). */
  async applyEncoded(shard: number, obs: Float64Array, n: number): Promise<void> {
    await this.pool.apply(shard, obs, n);
  }

  /** `now`: the time of the batch that brings the event (a node replaying the cluster's stream applies batches at
   *  their own time, so a game that started since is still handed its start, as on the node that took it live). */
  upsertEvent(ev: EventRecord, source?: string, now = this.now()): void {
    this.records.set(ev.id, ev);
    const idx = this.eventIds.id(ev.id);
    const was = this.readModel.event(idx);
    const before = was === undefined ? null : { commence: was.commence, home: was.home, away: was.away, title: was.title };
    const view = this.readModel.upsertEvent(idx, ev.id, ev.sport.key, ev.commence, ev.home, ev.away, ev.status,
      shardOf(ev.id, this.pool.size));
    view.pitchers = ev.pitchers;
    view.kind = ev.kind ?? 'game';
    view.title = ev.title ?? null;
    if (before !== null && (before.commence !== view.commence || before.home !== view.home || before.away !== view.away || before.title !== view.title)) {
      for (const fn of this.headListeners) fn(view, before.home, before.away);
    }
    if (source !== undefined) view.source = source;
    // a game moved to a start already past (and known before it) starts at the next tick; one moved to a later start
    // starts again then
    if (view.kind === 'game' && ev.status !== 'final' && (ev.commence > now || this.upcoming.has(idx))) this.upcoming.set(idx, ev.commence);
    else this.upcoming.delete(idx);
  }

  /** Every 250 ms (http/app.ts): the shards drop newly stale quotes from the analytics, and games whose start has
   *  passed lose the quotes last observed before it, in the store and so in every view, stream and webhook. */
  tick(): void {
    this.pool.tick();
    const now = this.now();
    let due: Map<number, { events: number[]; at: number[] }> | null = null;
    for (const [idx, at] of this.upcoming) {
      if (at > now) continue;
      this.upcoming.delete(idx);
      const view = this.readModel.event(idx);
      if (view === undefined) continue;
      due ??= new Map();
      let list = due.get(view.shard);
      if (list === undefined) due.set(view.shard, (list = { events: [], at: [] }));
      list.events.push(idx);
      list.at.push(at);
    }
    if (due === null) return;
    for (const [shard, list] of due) {
      for (const idx of list.events) this.kicking.add(idx);
      void this.pool.kickoff(shard, list.events, list.at).catch(() => undefined)
        .finally(() => { for (const idx of list.events) this.kicking.delete(idx); });
    }
  }

  /** A game is in play in the store: started, and its quotes observed before the start are gone from the read model
   *  (the live stream admits a game then, so it never shows a pregame price as an in-play one). */
  inPlay(ev: EventView, now: number): boolean {
    return ev.commence <= now && !this.upcoming.has(ev.idx) && !this.kicking.has(ev.idx);
  }

  /** Final events leave the store, the read model and the registry. */
  private async finish(finals: EventRecord[]): Promise<void> {
    const byShard = new Map<number, number[]>();
    for (const ev of finals) {
      const idx = this.eventIds.id(ev.id);
      const shard = shardOf(ev.id, this.pool.size);
      let list = byShard.get(shard);
      if (list === undefined) byShard.set(shard, (list = []));
      list.push(idx);
    }
    await Promise.all([...byShard].map(([shard, ids]) => this.pool.removeEvents(shard, ids)));
    for (const ev of finals) {
      const idx = this.eventIds.id(ev.id);
      this.upcoming.delete(idx);
      this.readModel.removeEvent(idx);
      this.analytics.dropEvent(idx);
      this.eventPlayers.drop(idx);
      this.records.delete(ev.id);
    }
    if (finals.length > 0) for (const fn of this.finalListeners) fn(finals.map((ev) => ev.id));
  }

  private onChanges(shard: number, msg: ChangesMsg): void {
    // behind before the quotes' listeners run: a read they make waits too
    if (msg.quotesFirst && !this.behind[shard]) {
      this.behind[shard] = true;
      this.behindCount++;
    }
    this.changes(shard, msg);
    if (!msg.quotesFirst && this.behind[shard]) {
      // the shard's next answer after its quotes first (the batch's analytics, or a restarted shard's restore)
      this.behind[shard] = false;
      this.behindCount--;
      this.caughtUp[shard]++;
      if (this.waiters.length > 0) this.release(false);
    }
  }

  private changes(shard: number, msg: ChangesMsg): void {
    this.counters.stale += msg.stale;
    this.counters.changeRecords += msg.n;
    const a = this.analytics;
    a.apply(msg);
    // the quotes before the analytics' listeners: an event's data time (webhook keys, arb_id) is the newest write of
    // its quotes with this batch's, whether the shard answered the batch in one message or in two (quotes first)
    const touched = msg.n === 0 ? null : this.readModel.apply(msg.rec, msg.n);
    // a batch alone in flight is answered quotes first (seqs empty, no analytics), its analytics in the next message
    a.settleEvGrowth(shard, msg.rec, msg.n, this.priceOf, msg.quotesFirst);
    const ch = a.changes;
    if (ch !== null && ch.arbOpened.length + ch.arbUpdated.length + ch.arbClosed.length + ch.evOpened.length + ch.evClosed.length + ch.evGrew.length > 0) {
      a.changes = noChanges();
      for (const fn of this.analyticsListeners) fn(ch);
    }
    if (touched === null) return;
    const seqs = new Map<string, number>();
    for (const sport of touched) {
      const seq = (this.seqs.get(sport) ?? 0) + 1;
      this.seqs.set(sport, seq);
      seqs.set(sport, seq);
    }
    const batch: ChangeBatch = { shard, records: msg.rec, count: msg.n, seqs };
    for (const fn of this.listeners) fn(batch);
  }
}
