// Source freshness and status (issue 7): follows the hub's change batches for each source's newest write per
// table (odds: game markets; props: player props and outrights), holds the feeds' pollers (engine/poller.ts) and
// the simulator's stalled books, samples every source's class into PostgreSQL every `sampleMs`, and caches the
// /v1/status body: fresh for `cacheMs`, then served stale while one refresh runs; a cold cache is computed
// inline and gives up after `computeTimeoutMs` (the route answers 503 with Retry-After).

import { BOOKMAKERS, MARKETS } from '../engine/catalogue.js';
import { OUTRIGHT_MARKET } from '../engine/ingest.js';
import { MoveLog } from '../engine/movers.js';
import { Poller, DEFAULT_POLLER, type PollerOptions } from '../engine/poller.js';
import { CHANGE, CHG } from '../engine/records.js';
import { slaClassOf } from '../engine/sla.js';
import { classify, RequestRate, sourceQuality, statusPayload, STATUS_WINDOW_S, type Quality, type SourceFacts } from '../engine/status.js';
import { ping, type Database } from '../sql/connection.js';
import { insertSamples, timeline, type Segment } from '../sql/status.js';
import type { ChangeBatch, Hub } from './hub.js';

export interface StatusConfig {
  /** status history sampling interval (SPEC: 30 s) */
  sampleMs: number;
  /** /v1/status freshness (SPEC: 90 s) */
  cacheMs: number;
  /** cold-cache computation bound */
  computeTimeoutMs: number;
  /** the status history's read bound: a database that stops answering gets a 503, not a request held open */
  historyTimeoutMs: number;
  poller: PollerOptions;
}

/** how early a sample may run and still be stamped with the boundary it was set for */
const SLOT_EARLY_MS = 50;

export const DEFAULT_STATUS_CONFIG: StatusConfig = { sampleMs: 30_000, cacheMs: 90_000, computeTimeoutMs: 2_000, historyTimeoutMs: 10_000, poller: DEFAULT_POLLER };

export interface StatusDeps {
  hub: Hub;
  db: Database;
  now(): number;
  log?(msg: string): void;
  /** false while a cluster node is cut off from the stream: its books' ages are its own stale view, not the books'
   *  (the cluster audit: its samples, first written in their slots, put false breaches in the shared history) */
  following?(): boolean;
}

/** the database ping of a status computation may take this long before the database is reported down */
const PING_TIMEOUT_MS = 5_000;

const IS_PROP = MARKETS.map((m, i) => m.kind === 'prop' || i === OUTRIGHT_MARKET);

export interface CachedStatus {
  body: string;
  at: number;
}

export class StatusService {
  readonly oddsWrite = new Float64Array(BOOKMAKERS.length);
  readonly propsWrite = new Float64Array(BOOKMAKERS.length);
  readonly pollers = new Map<string, Poller>();
  readonly rate: RequestRate;
  /** price moves of the recent past, for /v1/meta/movers */
  readonly moves = new MoveLog();
  /** book keys the simulator does not quote (SIM_STALL, POST /v1/admin/sim/stall) */
  readonly stalled = new Set<string>();
  /** sources a feed is expected to quote; null when no feed declares them */
  expected: string[] | null = null;
  /** whether the node serves the simulator's prices (the /v1/status body says so) */
  simulated: () => boolean = () => false;
  private cache: CachedStatus | null = null;
  private refreshing: Promise<CachedStatus> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** NATS ingest and cluster counters for the status body (set by startApp with NATS_URL) */
  nats: (() => object) | null = null;
  private sampling: Promise<void> = Promise.resolve();

  constructor(private readonly deps: StatusDeps, readonly cfg: StatusConfig = DEFAULT_STATUS_CONFIG) {
    this.rate = new RequestRate(deps.now());
  }

  start(): void {
    this.deps.hub.onBatch((b) => this.onBatch(b));
    this.arm();
  }

  /** Samples at the next boundary of the interval's grid, where the sample is stamped: a sample taken 28 s into its
   *  slot and stamped at the slot's start showed a breach before the stall that caused it (the status audit). */
  private arm(): void {
    const ms = this.cfg.sampleMs;
    // the boundary after the one this moment belongs to: a timer fires up to a millisecond before the Date.now() it
    // was set for, and armed from there for that same boundary it sampled the slot twice
    const now = this.deps.now();
    const next = Math.floor((now + SLOT_EARLY_MS) / ms) * ms + ms;
    this.timer = setTimeout(() => {
      this.arm();
      void this.sample();
    }, next - now);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    await this.sampling;
    await this.refreshing?.catch(() => undefined);
  }

  poller(name: string): Poller {
    let p = this.pollers.get(name);
    if (p === undefined) this.pollers.set(name, (p = new Poller(name, this.cfg.poller)));
    return p;
  }

  private onBatch(batch: ChangeBatch): void {
    const d = batch.records;
    for (let i = 0, off = 0; i < batch.count; i++, off += CHG.STRIDE) {
      const kind = d[off + CHG.KIND] | 0;
      if (kind === CHANGE.REMOVED) continue;
      const book = d[off + CHG.BOOK] | 0;
      const c = d[off + CHG.LINE_CHANGED_AT];
      const v = d[off + CHG.VERIFIED_AT];
      if (kind !== CHANGE.VERIFIED) {
        this.moves.price(c, d[off + CHG.EVENT] | 0, d[off + CHG.MARKET] | 0, d[off + CHG.PLAYER] | 0, book, d[off + CHG.OUTCOME] | 0, d[off + CHG.POINT], d[off + CHG.PRICE]);
      }
      const ts = v > c ? v : c;
      const arr = IS_PROP[d[off + CHG.MARKET] | 0] ? this.propsWrite : this.oddsWrite;
      if (ts > arr[book]) arr[book] = ts;
    }
  }

  private pulseOf(key: string): number {
    let at = 0;
    for (const p of this.pollers.values()) at = Math.max(at, p.sourcePulses.get(key) ?? 0);
    return at;
  }

  private facts(b: number): SourceFacts {
    const def = BOOKMAKERS[b];
    return { key: def.key, kind: def.kind, sla: slaClassOf(def), oddsWrite: this.oddsWrite[b], propsWrite: this.propsWrite[b], pulse: this.pulseOf(def.key) };
  }

  /** the sources /v1/status reports: active books that wrote, were pulsed, or a feed expects */
  presentSources(): SourceFacts[] {
    const expected = new Set(this.expected ?? []);
    const out: SourceFacts[] = [];
    for (let b = 0; b < BOOKMAKERS.length; b++) {
      const def = BOOKMAKERS[b];
      if (def.status !== 'active') continue;
      const f = this.facts(b);
      if (f.oddsWrite > 0 || f.propsWrite > 0 || f.pulse > 0 || expected.has(def.key)) out.push(f);
    }
    return out;
  }

  /** /v1/meta/source-quality for every active book */
  quality(now: number): Quality[] {
    const out: Quality[] = [];
    for (let b = 0; b < BOOKMAKERS.length; b++) if (BOOKMAKERS[b].status === 'active') out.push(sourceQuality(this.facts(b), now));
    return out;
  }

  private async compute(): Promise<CachedStatus> {
    const now = this.deps.now();
    let database: { ok: boolean; latency_ms: number | null };
    let timer: NodeJS.Timeout | undefined;
    try {
      // a database that does not answer is reported down, and never holds the refresh (and so the cache) forever
      const ms = await Promise.race([ping(this.deps.db), new Promise<number>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), PING_TIMEOUT_MS);
      })]);
      database = { ok: true, latency_ms: Math.round(ms * 1000) / 1000 };
    } catch {
      database = { ok: false, latency_ms: null };
    } finally {
      clearTimeout(timer);
    }
    const body = JSON.stringify(statusPayload({
      now,
      sources: this.presentSources(),
      expected: this.expected,
      retired: BOOKMAKERS.filter((b) => b.status === 'merged' || b.status === 'decommissioned').map((b) => b.key),
      pollers: [...this.pollers.values()].map((p) => p.snapshot(now)),
      requests: this.rate.summary(now),
      database,
      nats: this.nats?.() ?? null,
      analytics: this.analyticsCounts(),
      simulated: this.simulated(),
    }));
    return { body, at: now };
  }

  private refresh(): Promise<CachedStatus> {
    return (this.refreshing ??= this.compute().then((c) => {
      this.cache = c;
      return c;
    }).finally(() => { this.refreshing = null; }));
  }

  /** The cached status: `fresh` within cacheMs, `stale` (a refresh started) up to twice that (max-age plus
   *  stale-while-revalidate, as the Cache-Control header promises), `cold` computed inline when there is none or it
   *  is older still; null when a cold computation without any body to fall back on ran over its bound (it goes on
   *  and fills the cache). An older body is served, as `stale`, only when its recomputation runs over the bound. */
  async status(): Promise<{ cached: CachedStatus; state: 'fresh' | 'stale' | 'cold' } | null> {
    const now = this.deps.now();
    const old = this.cache;
    if (old !== null) {
      if (now - old.at < this.cfg.cacheMs) return { cached: old, state: 'fresh' };
      if (now - old.at < 2 * this.cfg.cacheMs) {
        void this.refresh().catch((e: unknown) => this.deps.log?.(`status refresh failed: ${String(e)}`));
        return { cached: old, state: 'stale' };
      }
    }
    // none, or past the stale-while-revalidate window: the first reader after a quiet spell got a body of any age
    const c = await this.inline();
    if (c !== null) return { cached: c, state: 'cold' };
    return old === null ? null : { cached: old, state: 'stale' };
  }

  /** A refresh awaited up to computeTimeoutMs; null past it (it goes on and fills the cache). */
  private async inline(): Promise<CachedStatus | null> {
    const run = this.refresh();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), this.cfg.computeTimeoutMs); });
    try {
      return await Promise.race([run, late]);
    } finally {
      clearTimeout(timer);
      run.catch(() => undefined);
    }
  }

  private analyticsCounts(): { arbitrage: number; ev: number } {
    const { readModel, analytics } = this.deps.hub;
    let arbitrage = 0;
    let ev = 0;
    for (const e of readModel.events()) {
      const a = analytics.event(e.idx);
      if (a === undefined) continue;
      arbitrage += a.arbs.size;
      ev += a.ev.size;
    }
    return { arbitrage, ev };
  }

  /** Writes one sample per present source (the status history). */
  sample(): Promise<void> {
    if (this.deps.following?.() === false) return this.sampling;
    const now = this.deps.now();
    const rows = this.presentSources().map((f) => {
      const newest = Math.max(f.oddsWrite, f.propsWrite);
      const exact = newest > 0 && (now - newest) / 1000 <= STATUS_WINDOW_S ? Math.max(0, now - newest) / 1000 : null;
      // judged on the exact age, stored to a tenth of a second (engine/status.ts)
      return { source: f.key, state: classify(exact, f.sla), age: exact === null ? null : Math.round(exact * 10) / 10 };
    });
    // on the interval's grid: each node of a cluster samples at its own phase, and one row per source and slot is
    // kept (the first written), so the shared history holds one sample every interval, not one per node
    // taken at a boundary (arm()): a timer a few milliseconds early still belongs to the slot it was set for
    const slot = Math.floor((now + SLOT_EARLY_MS) / this.cfg.sampleMs) * this.cfg.sampleMs;
    const simulated = this.simulated();
    this.sampling = this.sampling.then(() => insertSamples(this.deps.db, slot, rows, simulated))
      .catch((e: unknown) => this.deps.log?.(`status sample failed: ${String(e)}`));
    return this.sampling;
  }

  /** The timeline of the last windowS seconds; null when the database did not answer within historyTimeoutMs (the
   *  read goes on and is dropped). */
  async boundedHistory(windowS: number): Promise<Map<string, Segment[]> | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), this.cfg.historyTimeoutMs); });
    const read = this.history(windowS);
    read.catch(() => undefined);
    try {
      return await Promise.race([read, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  history(windowS: number): Promise<Map<string, Segment[]>> {
    // a run ends where more than two intervals and a half passed without a sample (a slot missed by timer drift
    // leaves one interval out; the service down, many)
    return timeline(this.deps.db, this.deps.now() - windowS * 1000, 2.5 * this.cfg.sampleMs);
  }
}
