// NATS ingest (NATS_URL): msgpack batches of the POST /v1/ingest structure published on
// `<prefix>.ingest.<sport_key>` are applied exactly as HTTP ingest applies them (the same decoder, the same
// shape check, the same per-item validation), one batch after another in arrival order. A batch that cannot be
// decoded, has the wrong shape or names an unknown sport in its subject is counted and dropped (it counts as one
// rejected observation in the rejection rate that feeds parser.degraded, as a rejected item of an HTTP batch
// does); a batch with rejected items is applied and counted. Nothing a publisher sends stops the consumer.
// A request (a message with a reply subject) is answered with the result, as JSON: the ingest answer of
// DESIGN.md section 5, or the error body; the answer waits until the webhook events the batch raised are in the
// outbox (as POST /v1/ingest's 202 does), the next batch does not.
//
// Core NATS is at most once: a batch published while no node subscribes is lost (use POST /v1/ingest, or a
// publisher that retries on a missing reply, where that matters). The batches waiting to be applied are held up to
// `maxBacklogBytes` (64 MiB): past it a batch is dropped at once, counted (`dropped`) and, for a request, answered
// 503 SERVICE_UNAVAILABLE (a burst of 1,000 batches of 846 KB took the node from 755 MB to 1.63 GB: the ingest audit). In a cluster the nodes share the subscription
// as one queue group, so each batch is taken by one node and replicated through the stream to all.

import type { NatsConnection, Msg, Subscription } from '@nats-io/transport-node';
import { Counter, type Registry } from 'prom-client';
import { sportByKey } from '../engine/catalogue.js';
import { ApiError } from '../engine/errors.js';
import { decodeMsgpackBatch } from './batch-codec.js';
import type { Hub, IngestResult } from './hub.js';

export interface NatsIngestDeps {
  hub: Hub;
  /** applies a batch: hub.ingest standalone, the cluster stream with CLUSTER=1 (msgId: the publisher's Nats-Msg-Id) */
  ingest(body: unknown, now: number, opts?: { msgId?: string }): Promise<IngestResult>;
  /** resolves once the webhook events of what was applied are durable (as the HTTP ingest awaits) */
  settled?: () => Promise<void>;
  now(): number;
  log?: (msg: string) => void;
  registry?: Registry;
}

type Outcome = 'ok' | 'rejected_items' | 'undecodable' | 'malformed' | 'failed' | 'dropped';

/** Bytes of batches received and not yet applied, at most (NatsIngest). */
export const MAX_BACKLOG_BYTES = 64 * 1024 * 1024;

export class NatsIngest {
  private sub: Subscription | null = null;
  private loop: Promise<void> = Promise.resolve();
  /** batches received, waiting to be applied in order, and their bytes */
  private readonly backlog: Msg[] = [];
  private backlogBytes = 0;
  private applying = false;
  /** the most bytes the backlog held */
  peakBacklogBytes = 0;
  /** batches applied whose answers wait for their webhook events to be durable */
  private readonly answering = new Set<Promise<void>>();
  private readonly total: Counter<'result'> | null;
  readonly counts: Record<Outcome, number> = { ok: 0, rejected_items: 0, undecodable: 0, malformed: 0, failed: 0, dropped: 0 };
  /** items rejected in applied batches */
  rejectedItems = 0;
  lastBad: { at: string; subject: string; reason: string } | null = null;

  constructor(private readonly nc: NatsConnection, private readonly deps: NatsIngestDeps, readonly subject: string, private readonly queue: string | null,
    private readonly maxBacklogBytes = MAX_BACKLOG_BYTES) {
    this.total = deps.registry === undefined ? null : new Counter({
      name: 'linewire_nats_ingest_batches_total',
      help: 'NATS ingest batches by result: ok, rejected_items (applied, some items rejected), undecodable, malformed, failed, dropped (the backlog was full)',
      labelNames: ['result'],
      registers: [deps.registry],
    });
    for (const r of Object.keys(this.counts)) this.total?.inc({ result: r }, 0);
  }

  start(): void {
    // a callback, not the iterator: the client queues every message it reads for an iterator, without bound
    this.sub = this.nc.subscribe(this.subject, {
      ...(this.queue === null ? {} : { queue: this.queue }),
      callback: (err, m) => {
        if (err !== null) this.deps.log?.(`nats ingest: ${String(err)}`);
        else this.take(m);
      },
    });
  }

  /** Queues a batch to be applied after those before it, or drops it when the backlog is full. */
  private take(m: Msg): void {
    const size = m.data.length;
    if (this.backlog.length > 0 && this.backlogBytes + size > this.maxBacklogBytes) {
      this.refuse(m, new ApiError('SERVICE_UNAVAILABLE', `ingest backlog full (${this.backlogBytes} bytes waiting): batch dropped, publish it again later`), 'dropped');
      return;
    }
    this.backlog.push(m);
    this.backlogBytes += size;
    if (this.backlogBytes > this.peakBacklogBytes) this.peakBacklogBytes = this.backlogBytes;
    if (!this.applying) this.loop = this.applyBacklog();
  }

  private async applyBacklog(): Promise<void> {
    this.applying = true;
    try {
      while (this.backlog.length > 0) {
        const m = this.backlog[0];
        await this.handle(m);
        this.backlog.shift();
        this.backlogBytes -= m.data.length;
      }
    } catch (e) {
      this.deps.log?.(`nats ingest: ${String(e)}`);
    } finally {
      this.applying = false;
    }
  }

  /** Stops taking batches and waits for the one being applied, and for the answers still waiting on the outbox. */
  async close(): Promise<void> {
    if (this.sub !== null && !this.sub.isClosed()) {
      await this.sub.drain().catch(() => undefined);
    }
    await this.loop;
    await Promise.all(this.answering);
  }

  private count(result: Outcome, m: Msg, reason: string | null): void {
    this.counts[result]++;
    this.total?.inc({ result });
    if (reason !== null) this.lastBad = { at: new Date(this.deps.now()).toISOString(), subject: m.subject, reason };
  }

  private async handle(m: Msg): Promise<void> {
    const now = this.deps.now();
    const sport = m.subject.slice(this.subject.length - 1);
    let stage: Outcome = 'malformed';
    let result: IngestResult;
    try {
      if (sportByKey(sport) === undefined) throw new ApiError('UNKNOWN_SPORT', `subject ${m.subject}: unknown sport_key ${JSON.stringify(sport)}`);
      stage = 'undecodable';
      const body = decodeMsgpackBatch(m.data);
      stage = 'malformed';
      const id = m.headers?.get('Nats-Msg-Id');
      result = await this.deps.ingest(body, now, id ? { msgId: `ingest.${id}` } : {});
    } catch (e) {
      this.refuse(m, e, stage);
      return;
    }
    // The next batch is applied at once; this one is counted and answered once the webhook events it raised are in
    // the outbox. Waiting here held every later batch's prices behind the database: one that stopped answering
    // stopped the NATS feed with it, and the client library's buffer then dropped batches as a slow consumer's.
    const answer = this.answer(m, result);
    this.answering.add(answer);
    void answer.finally(() => this.answering.delete(answer));
  }

  private async answer(m: Msg, result: IngestResult): Promise<void> {
    try {
      await this.deps.settled?.();
    } catch (e) {
      this.refuse(m, e, 'failed');
      return;
    }
    const bad = result.rejected.length + result.rejected_events.length;
    this.rejectedItems += bad;
    if (bad === 0) this.count('ok', m, null);
    else {
      const first = result.rejected[0] ?? result.rejected_events[0];
      this.count('rejected_items', m, `${bad} item(s) rejected, first: ${first.error_code} ${first.message}`);
    }
    if (m.reply) m.respond(JSON.stringify(result));
  }

  /** A batch refused as a whole (`stage`: where it failed), or one whose webhook events could not be made durable. */
  private refuse(m: Msg, e: unknown, stage: Outcome): void {
    const err = e instanceof ApiError ? e : new ApiError('INTERNAL_ERROR', 'the batch could not be applied', undefined, { cause: e });
    const kind: Outcome = stage === 'dropped' ? stage : !(e instanceof ApiError) || err.code === 'SERVICE_UNAVAILABLE' ? 'failed' : stage;
    this.count(kind, m, `${err.code}: ${err.message}`);
    // a batch refused as a whole counts as one rejected observation in the rate behind parser.degraded
    if (kind !== 'failed' && kind !== 'dropped') {
      this.deps.hub.counters.observations++;
      this.deps.hub.counters.rejected++;
    } else this.deps.log?.(`nats ingest: batch on ${m.subject} failed: ${e instanceof Error ? e.stack : String(e)}`);
    if (m.reply) m.respond(JSON.stringify({ message: err.message, error_code: err.code }));
  }

  /** /v1/status */
  snapshot(): object {
    return {
      subject: this.subject,
      queue_group: this.queue,
      batches: { ...this.counts },
      bad_batches: this.counts.rejected_items + this.counts.undecodable + this.counts.malformed + this.counts.failed,
      rejected_items: this.rejectedItems,
      last_bad: this.lastBad,
    };
  }
}
