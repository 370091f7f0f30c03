// Cluster replication through NATS JetStream (CLUSTER=1). The stream is the one order of every accepted batch:
// a node that accepts a batch (HTTP ingest, NATS ingest, a feed) publishes it and does not apply it; every node,
// the publisher included, consumes the stream in order and applies each batch with the clock of its acceptance.
// hub.ingest is deterministic given (state, batch, clock), so nodes that applied the same prefix of the stream
// hold the same events and quotes, and rejections are the same on every node. A node that starts later replays
// the stream from its first retained message, then follows live (README "Running several nodes").
//
// Message: subject `<prefix>.obs.<sport_key of the first event, or "mixed">`, header Nats-Msg-Id
// `<node>.<boot ms>.<n>[.<part>]` (the stream drops a repeated publish of one id within its duplicate window),
// body msgpack {t, node, body: {events, prices}, refresh?, sim?}. A batch larger than the server's max_payload goes as
// several messages: its events first, then its prices, applied one after the other.
//
// Event refresh: a quote means nothing without its event, and an event is sent once (then on a status change), so
// once its upsert left the stream (NATS_STREAM_MAX_AGE_S / NATS_STREAM_MAX_MB) a node started later would not know
// it. Every node therefore resends every event it holds, as they are, about three times per retention period
// (upserting an event as it is changes nothing); a node that applied another node's refresh recently skips its own.

import { pack, unpack } from 'msgpackr';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type ConsumerMessages } from '@nats-io/jetstream';
import type { Registry } from 'prom-client';
import { ApiError } from '../engine/errors.js';
import { batchShape, type Hub, type IngestResult } from './hub.js';
import type { NatsConfig } from './nats.js';
import { scrapedCounter, scrapedGauge } from './scraped-metrics.js';

interface Waiter {
  resolve(r: IngestResult): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

interface Part {
  events: unknown[];
  prices: unknown[];
  eventOffset: number;
  priceOffset: number;
  bytes: Uint8Array;
}

export interface ClusterDeps {
  hub: Hub;
  log?: (msg: string) => void;
  registry?: Registry;
  /** the first batch of a simulator (on any node) was applied: this node's answers are labelled simulated too */
  onSimulated?: () => void;
}

export interface SubmitOptions {
  /** the batch's Nats-Msg-Id (default `<node>.<boot ms>.<n>`) */
  msgId?: string;
  /** an event refresh (see the file header) */
  refresh?: boolean;
  /** a batch of the built-in simulator */
  simulated?: boolean;
  /** the built-in feed that sent it ('sim', 'theoddsapi'): its events' raw_json.feed on every node */
  source?: string;
}

const EMPTY: IngestResult = { events: 0, accepted: 0, ignored: 0, rejected: [], rejected_events: [] };

export class Cluster {
  private readonly js: JetStreamClient;
  private readonly waiters = new Map<string, Waiter>();
  private readonly boot = Date.now();
  private n = 0;
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> = Promise.resolve();
  private caughtUp: { resolve(): void; reject(e: Error): void } | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  /** when this node last applied an event refresh (its own or another node's) */
  private lastRefresh = 0;
  /** this node applied a batch of the simulator (its own or another node's) */
  private simulated = false;
  private target = 0;
  /** the stream's limit on one message (the server's max_payload), less room for the headers */
  private readonly maxBytes: number;
  readonly counters = {
    published: 0, duplicates: 0, applied: 0, appliedSeq: 0, pending: 0,
    /** stream messages that could not be decoded or whose batch was refused as a whole */
    failed: 0,
    /** messages replayed at start before the node served */
    replayed: 0,
  };

  constructor(private readonly nc: NatsConnection, private readonly deps: ClusterDeps, readonly cfg: NatsConfig) {
    this.js = jetstream(nc);
    this.maxBytes = Math.max(4096, (nc.info?.max_payload ?? 1048576) - 4096);
    if (deps.registry !== undefined) {
      const r = deps.registry;
      const gauge = (name: string, help: string, read: () => number) => scrapedGauge(r, name, help, read);
      scrapedCounter(r, 'linewire_cluster_published_total', 'Batches this node published to the cluster stream', () => this.counters.published);
      scrapedCounter(r, 'linewire_cluster_duplicates_total', 'Publishes the stream dropped as repeats of a Nats-Msg-Id', () => this.counters.duplicates);
      scrapedCounter(r, 'linewire_cluster_applied_total', 'Stream messages this node applied', () => this.counters.applied);
      scrapedCounter(r, 'linewire_cluster_failed_total', 'Stream messages this node could not apply (undecodable or refused as a whole)', () => this.counters.failed);
      gauge('linewire_cluster_applied_seq', 'Stream sequence of the last message applied', () => this.counters.appliedSeq);
      gauge('linewire_cluster_pending', 'Stream messages not yet delivered to this node', () => this.counters.pending);
    }
  }

  get subjects(): string {
    return `${this.cfg.prefix}.obs.>`;
  }

  /** Creates or updates the stream, then applies every retained message before resolving (the node is caught
   *  up once it has applied what the stream held when it started), and goes on following live. */
  async start(): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const want = {
      name: this.cfg.stream,
      subjects: [this.subjects],
      max_age: this.cfg.maxAgeS * 1e9,
      max_bytes: this.cfg.maxBytes,
      duplicate_window: this.cfg.duplicateWindowS * 1e9,
    };
    let state: { messages: number; last_seq: number };
    try {
      const info = await jsm.streams.info(this.cfg.stream);
      state = (await jsm.streams.update(this.cfg.stream, { ...info.config, ...want })).state;
    } catch (e) {
      if (!/stream not found/i.test((e as Error).message)) throw new Error(`NATS stream ${this.cfg.stream}: ${(e as Error).message}`, { cause: e });
      state = (await jsm.streams.add(want)).state;
    }
    // an empty stream (new, or every message past its retention) has nothing to replay
    const last = state.messages > 0 ? state.last_seq : 0;
    this.target = last;
    const consumer = await this.js.consumers.get(this.cfg.stream, { deliver_policy: DeliverPolicy.All });
    this.messages = await consumer.consume({ max_messages: 64 });
    const ready = last === 0 ? Promise.resolve() : new Promise<void>((resolve, reject) => { this.caughtUp = { resolve, reject }; });
    this.loop = this.follow(this.messages);
    await ready;
    this.lastRefresh = Date.now();
    // (setTimeout takes at most 2^31 - 1 ms)
    const period = Math.min(this.cfg.maxAgeS * 1000 / 3, 1_500_000_000);
    // jittered, so the nodes do not all refresh at once; the first that does makes the others skip
    const tick = () => {
      this.refreshTimer = setTimeout(() => {
        if (Date.now() - this.lastRefresh >= period * 0.75) void this.refreshEvents().catch((e: unknown) => this.deps.log?.(`cluster: event refresh failed: ${String(e)}`));
        tick();
      }, period * (0.8 + Math.random() * 0.4));
      this.refreshTimer.unref();
    };
    tick();
  }

  /** Resends every event this node holds (see the file header). */
  async refreshEvents(): Promise<void> {
    const events = this.deps.hub.eventInputs();
    for (let i = 0; i < events.length; i += 5000) {
      await this.submit({ events: events.slice(i, i + 5000) }, Date.now(), { refresh: true });
    }
  }

  async close(): Promise<void> {
    if (this.refreshTimer !== null) clearTimeout(this.refreshTimer);
    this.messages?.stop();
    await this.loop;
    for (const [id, w] of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new ApiError('SERVICE_UNAVAILABLE', 'the node is shutting down'));
      this.waiters.delete(id);
    }
  }

  private async follow(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const m of messages) {
        const id = m.headers?.get('Nats-Msg-Id') ?? '';
        let result: IngestResult | Error;
        try {
          const msg = unpack(m.data) as { t: number; body: unknown; refresh?: boolean; sim?: boolean; src?: string };
          if (typeof msg !== 'object' || msg === null || typeof msg.t !== 'number') throw new Error('not a cluster batch {t, node, body}');
          result = await this.deps.hub.ingest(msg.body, msg.t, typeof msg.src === 'string' ? msg.src : undefined);
          if (msg.refresh === true) this.lastRefresh = Date.now();
          if (msg.sim === true && !this.simulated) {
            this.simulated = true;
            this.deps.onSimulated?.();
          }
          this.counters.applied++;
        } catch (e) {
          this.counters.failed++;
          result = e instanceof Error ? e : new Error(String(e));
          this.deps.log?.(`cluster: stream message ${m.seq} (${m.subject}, ${id}) not applied: ${result.message}`);
        }
        this.counters.appliedSeq = m.seq;
        this.counters.pending = m.info.pending;
        if (this.caughtUp !== null) {
          this.counters.replayed++;
          // pending 0: nothing more is retained for this consumer (the target itself may have aged out meanwhile)
          if (m.seq >= this.target || m.info.pending === 0) {
            this.caughtUp.resolve();
            this.caughtUp = null;
          }
        }
        const w = this.waiters.get(id);
        if (w !== undefined) {
          this.waiters.delete(id);
          clearTimeout(w.timer);
          if (result instanceof Error) w.reject(result);
          else w.resolve(result);
        }
      }
    } catch (e) {
      this.deps.log?.(`cluster: the stream consumer stopped: ${(e as Error).message}`);
    } finally {
      // a start waiting for the replay fails rather than serve a state it did not catch up with
      this.caughtUp?.reject(new Error(`the stream consumer of ${this.cfg.stream} stopped before this node caught up`));
      this.caughtUp = null;
    }
  }

  /** Publishes an ingest body and resolves with its result once this node applied it from the stream. A body of
   *  the wrong shape throws ApiError before anything is published. */
  async submit(body: unknown, t: number, opts: SubmitOptions = {}): Promise<IngestResult> {
    const { events, prices } = batchShape(body);
    const b = body as { events?: unknown; prices?: unknown };
    const sport = Array.isArray(b.events) && typeof (b.events[0] as { sport_key?: unknown } | undefined)?.sport_key === 'string'
      ? (b.events[0] as { sport_key: string }).sport_key : '';
    const subject = `${this.cfg.prefix}.obs.${/^[a-z0-9_]{1,64}$/.test(sport) ? sport : 'mixed'}`;
    const id = opts.msgId ?? `${this.cfg.nodeId}.${this.boot}.${++this.n}`;
    const parts: Part[] = [];
    const flags = { ...(opts.refresh === true ? { refresh: true } : {}), ...(opts.simulated === true ? { sim: true } : {}),
      ...(opts.source !== undefined ? { src: opts.source } : {}) };
    this.split(events, prices, 0, 0, t, flags, parts);
    const results = await Promise.all(parts.map((p, i) => this.publish(subject, parts.length === 1 ? id : `${id}.${i}`, p.bytes)));
    if (results.length === 1) return results[0];
    const out: IngestResult = { events: 0, accepted: 0, ignored: 0, rejected: [], rejected_events: [] };
    results.forEach((r, i) => {
      out.events += r.events;
      out.accepted += r.accepted;
      out.ignored += r.ignored;
      for (const x of r.rejected) out.rejected.push({ ...x, index: x.index + parts[i].priceOffset });
      for (const x of r.rejected_events) out.rejected_events.push({ ...x, index: x.index + parts[i].eventOffset });
    });
    return out;
  }

  /** Splits a batch into messages under the server's max_payload: events before prices, halves until it fits. */
  private split(events: unknown[], prices: unknown[], eventOffset: number, priceOffset: number, t: number, flags: object, out: Part[]): void {
    const bytes = pack({ t, node: this.cfg.nodeId, body: { events, prices }, ...flags });
    if (bytes.length <= this.maxBytes) {
      out.push({ events, prices, eventOffset, priceOffset, bytes });
      return;
    }
    if (events.length + prices.length <= 1) throw new ApiError('BODY_TOO_LARGE', 'one item is larger than the cluster stream takes');
    if (events.length > 0 && prices.length > 0) {
      this.split(events, [], eventOffset, priceOffset, t, flags, out);
      this.split([], prices, eventOffset, priceOffset, t, flags, out);
    } else if (events.length > 0) {
      const h = events.length >> 1;
      this.split(events.slice(0, h), [], eventOffset, priceOffset, t, flags, out);
      this.split(events.slice(h), [], eventOffset + h, priceOffset, t, flags, out);
    } else {
      const h = prices.length >> 1;
      this.split([], prices.slice(0, h), eventOffset, priceOffset, t, flags, out);
      this.split([], prices.slice(h), eventOffset, priceOffset + h, t, flags, out);
    }
  }

  private async publish(subject: string, id: string, bytes: Uint8Array): Promise<IngestResult> {
    if (this.waiters.has(id)) throw new ApiError('SERVICE_UNAVAILABLE', `a batch with id ${id} is already in flight`);
    const applied = new Promise<IngestResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new ApiError('SERVICE_UNAVAILABLE', `the cluster stream did not apply the batch within ${this.cfg.applyTimeoutMs / 1000} s`));
      }, this.cfg.applyTimeoutMs);
      this.waiters.set(id, { resolve, reject, timer });
    });
    applied.catch(() => undefined);
    let ack;
    try {
      const h = headers();
      h.set('Nats-Msg-Id', id);
      ack = await this.js.publish(subject, bytes, { headers: h, timeout: 10_000 });
    } catch (e) {
      const w = this.waiters.get(id);
      if (w !== undefined) clearTimeout(w.timer);
      this.waiters.delete(id);
      throw new ApiError('SERVICE_UNAVAILABLE', `the cluster stream did not take the batch: ${(e as Error).message}`, undefined, { cause: e });
    }
    this.counters.published++;
    if (ack.duplicate) {
      // the stream already holds this id (a retried publish): it was or will be applied once, from that message
      this.counters.duplicates++;
      const w = this.waiters.get(id);
      if (w !== undefined) {
        clearTimeout(w.timer);
        this.waiters.delete(id);
        w.resolve(EMPTY);
      }
    }
    return applied;
  }

  /** /v1/status and /metrics */
  snapshot(): object {
    return {
      node_id: this.cfg.nodeId,
      stream: this.cfg.stream,
      subjects: this.subjects,
      published: this.counters.published,
      duplicates: this.counters.duplicates,
      applied: this.counters.applied,
      failed: this.counters.failed,
      applied_seq: this.counters.appliedSeq,
      pending: this.counters.pending,
      replayed_at_start: this.counters.replayed,
    };
  }
}
