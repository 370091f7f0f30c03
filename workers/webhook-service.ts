// Outbound webhooks on the main thread: the evaluator fed by the hub, the subscription cache, the per-minute
// rate limits, the durable outbox and the dispatcher that hands due attempts to the delivery worker.
//
// Why the outbox lives on the main thread: the embedded PGlite is one PostgreSQL session served over one
// socket connection (sql/connection.ts), so a worker thread cannot open a connection of its own. Every write
// therefore goes through the main thread's handle, in this order:
//   1. an event becomes one webhook_deliveries row per subscription (status pending, next_attempt_at) in one
//      INSERT, committed before any attempt is asked for;
//   2. only then is the attempt posted to the delivery worker (workers/webhook-sender.ts), which signs, resolves,
//      checks the address, sends and times out, and answers with the outcome;
//   3. outcomes are recorded in batches (attempt rows, the delivery's next state, failure counts, auto-disable)
//      in one transaction each.
// A process killed at any point loses nothing: a row written in 1 is pending until 3 commits, so after a restart
// the poll finds it due and makes the attempt again with the same delivery id and body (at-least-once; an
// attempt that was in flight is repeated under the same number). The checks' state (engine/webhook-events.ts
// CheckState) rides with the INSERT of step 1, in one transaction with the rows of its events: a transition is
// committed with its events or not at all, and detected again after a restart when it was not. The worker keeps
// the HTTP work, with its sockets, TLS and timeouts, off the thread that serves requests and applies price batches.
//
// Several nodes on one database (issue 9; README "Cluster: what is claimed how"): every node evaluates the same
// data, so every event carries a key built from that data and a subscription's outbox holds a key once (the
// second node's row is skipped); a check's transition is a compare-and-set of its stored state, and only the node
// that makes it writes the rows of its events. Every attempt is made under a claim: a row written already due is
// claimed by its writer in the INSERT, a row found by the poll is claimed in the UPDATE ... FOR UPDATE SKIP LOCKED
// that picks it, and the claim (claimed_by = NODE_ID, lease_until) is renewed while the attempt is in flight and
// ends when its outcome is recorded. A node killed mid-attempt leaves its claims to run out (WEBHOOK_LEASE_MS);
// then another node takes them: at-least-once across a kill, once otherwise.

import {
  CREDITS_PER_DELIVERY, DEFAULT_RETRY_DELAYS_MS, DEFER_MINUTES, DISABLE_AFTER, ATTEMPT_TIMEOUT_MS, SYNC_LIMITS, WEBHOOK_TIERS, arbReaches, matches,
  WEBHOOK_DELIVERY_LABEL, type Format, type SubscriptionFilter,
} from '../engine/webhook-catalogue.js';
import { WebhookEvaluator, type CheckState, type WebhookEvent } from '../engine/webhook-events.js';
import { renderBody } from '../engine/webhook-format.js';
import { newDeliveryId, newEventId } from '../engine/webhook-sign.js';
import type { Registry } from 'prom-client';
import type { Accounts } from '../http/accounts.js';
import { sqlStateClass, type Database } from '../sql/connection.js';
import {
  claimDue, getDelivery, insertDeliveries, loadCheckStates, loadWebhooks, insertTrackedEvents, loadTrackedEvents, markNotification, outboxBacklog, pruneDeliveries, pruneTrackedEvents, recordResults,
  releaseClaims, renewClaims, scheduledStarts, unsentNotifications, writeOutbox, type AttemptResult, type Claim, type DueDelivery,
  type DeliveryRow, type NewDelivery, type WebhookRow,
} from '../sql/webhooks.js';
import type { Hub } from './hub.js';
import { DeliveryWorker } from './webhook-delivery.js';
import { sendMail } from './webhook-mail.js';
import { WebhookMetrics } from './webhook-metrics.js';
import type { SendResult } from './webhook-protocol.js';

const READY_MAX = 100_000;
/** due attempts held per subscription while it is at its share of the slots (beyond, their claims run out) */
const WAITING_MAX = 10_000;
/** how long a stopping node waits for the receivers of the arbitrage closes it sends (close(): lastPass) */
const LAST_PASS_MS = 3000;
const ANALYTICS_TYPES = ['arb_flagged', 'live_arb', 'ev_alert', 'arbitrage.opened', 'arbitrage.closed', 'ev.flagged'];
/** events past a subscription's rate that are recorded (rate_limited, for replay) beyond the per-window cap on such
 *  rows: the arbitrage and +EV events a bot acts on, few beside a flood of line moves, which used to leave them
 *  neither sent nor recorded (the webhook audit) */
const ALWAYS_RECORDED = new Set(ANALYTICS_TYPES);

export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE=1: private and loopback destinations (and http) allowed, for local testing */
  allowPrivate: boolean;
  /** delays before attempts 2, 3, ... (WEBHOOK_RETRY_DELAYS_MS, default 30 s, 5 min) */
  retryDelaysMs: number[];
  timeoutMs: number;
  /** the rate limits' window (one minute; tests shorten it) */
  rateWindowMs: number;
  /** events past the rate wait at most this many windows */
  deferWindows: number;
  /** how often due attempts (retries, deferred events, leftovers of a restart) are looked for */
  pollMs: number;
  /** attempts in flight at once */
  maxInFlight: number;
  /** attempts in flight at once for one subscription: a receiver that answers slowly (or never, for the 10 s
   *  timeout) holds at most this many of the maxInFlight slots, and the other subscriptions keep the rest */
  maxInFlightPerSub: number;
  /** attempts in flight at once for all the subscriptions of one account (128, a quarter of the default maxInFlight):
   *  an account's many slow receivers hold at most this many slots, and the other accounts keep the rest */
  maxInFlightPerAccount: number;
  smtpUrl: string | null;
  mailFrom: string;
  /** this node's name in claims (NODE_ID): unique per node of a cluster, the same across a node's restarts */
  nodeId: string;
  /** how long a claim on an attempt holds without renewal (WEBHOOK_LEASE_MS): a killed node's attempts are taken
   *  by another node this long after its last renewal; renewed every third of it while in flight */
  leaseMs: number;
  /** how often the subscription cache is read again from a shared database (other nodes' API changes) */
  subsRefreshMs: number;
  /** final deliveries (and their attempts) older than this are deleted (WEBHOOK_RETENTION_DAYS, default 30) */
  retentionMs: number;
  /** a node alone (not CLUSTER=1): at shutdown its announced arbitrages are closed (the prices they stand on are
   *  in memory and gone after a restart); in a cluster the other nodes keep following them */
  closeArbsAtShutdown: boolean;
}

export const DEFAULT_WEBHOOK_CONFIG: WebhookConfig = {
  allowPrivate: false,
  retryDelaysMs: [...DEFAULT_RETRY_DELAYS_MS],
  timeoutMs: ATTEMPT_TIMEOUT_MS,
  rateWindowMs: 60_000,
  deferWindows: DEFER_MINUTES,
  pollMs: 250,
  maxInFlight: 512,
  maxInFlightPerSub: 32,
  maxInFlightPerAccount: 128,
  smtpUrl: null,
  mailFrom: 'linewire@localhost',
  nodeId: 'linewire',
  leaseMs: 30_000,
  closeArbsAtShutdown: true,
  subsRefreshMs: 2000,
  retentionMs: 30 * 86_400_000,
};

/** how often the outbox is pruned, and at most how many deliveries a pass deletes (short transactions) */
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 10_000;

export interface WebhookDeps {
  hub: Hub;
  accounts: Accounts;
  db: Database;
  now(): number;
  feed: string;
  log?(msg: string): void;
  /** the registry GET /metrics serves; the webhook counters are registered in it */
  registry?: Registry;
  /** whether the node serves the simulator's prices (X-Data-Source: simulated): events made meanwhile say so */
  simulated?(): boolean;
  /** false while a cluster node is cut off from the stream: its books' freshness is its own stale view, so it judges
   *  none (the cluster audit: such a node sent a source_quality.breach of every book, the others the recoveries) */
  following?(): boolean;
}

/** An account as the dispatcher holds it: its subscriptions' attempts in flight together (maxInFlightPerAccount).
 *  Sixteen hanging subscriptions of one account, within a business tier's 25, held all 512 slots, and every other
 *  account's deliveries waited for their 10 s timeouts round after round (the webhook audit). */
export class Owner {
  inflight = 0;
  /** its subscriptions in the cache, whose waiting attempts take a slot the account frees */
  readonly subs: Sub[] = [];
}

/** A subscription as the dispatcher holds it. */
export class Sub {
  filter: SubscriptionFilter;
  /** first attempts scheduled, in order (ms; a sliding window's worth and the deferred ones after it) */
  starts: number[] = [];
  /** the rate window (its start, ms) whose rate-limited events are being recorded, and how many were */
  limitedWindow = 0;
  limitedRecorded = 0;
  /** total failures queued and not yet written: a success must then reset the count even if the cache says 0 */
  incPending = 0;
  /** its attempts in flight, and the due ones waiting for one of its maxInFlightPerSub slots (claimed, renewed) */
  inflight = 0;
  waiting: DueDelivery[] = [];
  /** when its recent test and replay sends were made (ms, oldest first; SYNC_LIMITS) */
  readonly syncSends = { test: [] as number[], replay: [] as number[] };
  /** arb_ids whose opening reached this subscription's filters while it took arbitrage.closed: its closes go to
   *  exactly these, whatever its filters say by then, and to no other (a subscription made after an opening got
   *  the close of an arbitrage it never heard of; one that raised min_edge_pct after an opening never got its close:
   *  the webhook audit); each with the delivery id of the opening sent to it (null: it does not take openings),
   *  which its close waits for (NewDelivery.after) */
  readonly toldArbs = new Map<string, string | null>();
  constructor(public row: WebhookRow, readonly owner: Owner) {
    this.filter = Sub.compile(row);
  }

  /** Takes a changed row: its filter compiled again, and the arbitrages it was told of forgotten once it no longer
   *  takes their closes. */
  update(row: WebhookRow): void {
    this.row = row;
    this.filter = Sub.compile(row);
    if (!this.filter.events.has('arbitrage.closed')) this.toldArbs.clear();
  }

  static compile(row: WebhookRow): SubscriptionFilter {
    return {
      variant: row.variant,
      events: new Set(row.events),
      sports: row.sportKeys === null ? null : new Set(row.sportKeys),
      minEdge: row.minEdgePct,
    };
  }

  /** The id receivers see: Variant A's integer, Variant B's opaque id. */
  get publicId(): string {
    return this.row.publicId ?? String(this.row.pk);
  }
}

interface QueuedInsert {
  row: NewDelivery;
  sub: Sub;
}

/** a check's transition waiting for the next outbox write, with the rows of its events */
interface QueuedTransition {
  from: string;
  state: CheckState;
  items: QueuedInsert[];
}

interface QueuedResult {
  result: AttemptResult;
  done: () => void;
}

export interface SyncOutcome {
  deliveryId: string;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  /** the attempt's number in the delivery's record (GET .../deliveries) */
  attempt: number;
  /** a replay's ordinal among the delivery's replays; 0 for the test send */
  replay: number;
}

/** A test or replay not sent: past the subscription's SYNC_LIMITS ('rate'), or no slot free ('slots': its own, its
 *  account's or the total, as for scheduled attempts); retry after this many seconds. */
export interface SyncRefused {
  refused: 'rate' | 'slots';
  retryAfterS: number;
}

export class WebhookService {
  readonly subs = new Map<number, Sub>();
  /** the accounts of the subscriptions in the cache, and of attempts still in flight for ones since removed */
  private readonly owners = new Map<number, Owner>();
  private byType = new Map<string, Sub[]>();
  readonly evaluator: WebhookEvaluator;
  private readonly sender = new DeliveryWorker();
  private chain: Promise<unknown> = Promise.resolve();
  private inserts: QueuedInsert[] = [];
  /** check heartbeats to commit with the next outbox insert, the newest per kind and key */
  private states = new Map<string, CheckState>();
  /** check transitions to commit with the next outbox insert, in order */
  private transitions: QueuedTransition[] = [];
  /** rows of check events emitted and not yet joined to their transition (persist follows the emit at once) */
  private checkRows = new Map<string, QueuedInsert[]>();
  private results: QueuedResult[] = [];
  private insertScheduled = false;
  private insertsWriting = 0;
  private resultScheduled = false;
  private readonly inflight = new Set<number>();
  /** due attempts waiting for a slot of their subscription (Sub.waiting), by delivery pk */
  private readonly waitingPks = new Set<number>();
  /** Inserted rows due now that wait for a free slot, oldest first. While any wait here the poll is skipped: a
   *  row is then claimed by exactly one of this queue and the in-flight set, and the poll never sees a row twice.
   *  Bounded; rows past the bound are left to the poll (they are in the outbox either way). */
  private ready: DueDelivery[] = [];
  private readyHead = 0;
  private readonly sending = new Set<Promise<unknown>>();
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  /** set first at close(): nothing more is evaluated, while the last deliveries may still go out (closed) */
  private stopping = false;
  private analyticsOn = false;
  private activeSubs = 0;
  private mailing: Promise<void> | null = null;
  /** event ids ever tracked (webhook_tracked_events, loaded at start), and those not yet written */
  private readonly tracked = new Set<string>();
  private newTracked: string[] = [];
  /** counters for the benchmark */
  readonly stats = { events: 0, enqueued: 0, delivered: 0, failedAttempts: 0, rateLimited: 0, rateLimitedUnrecorded: 0, outOfCredits: 0 };
  /** counters for GET /metrics */
  readonly metrics: WebhookMetrics;

  constructor(private readonly d: WebhookDeps, readonly cfg: WebhookConfig = DEFAULT_WEBHOOK_CONFIG) {
    const rm = d.hub.readModel;
    this.evaluator = new WebhookEvaluator({
      event: (idx) => rm.event(idx),
      player: (id) => (id < 0 ? null : d.hub.players.name(id)),
      emit: (ev) => this.onEvent(ev),
      firstSeen: (id) => {
        if (this.tracked.has(id)) return false;
        this.tracked.add(id);
        this.newTracked.push(id);
        this.scheduleInsert();
        return true;
      },
      persist: (st, from) => this.onState(st, from),
      quoteTime: (idx, market, player, book, o) => {
        const r = rm.find(idx, market, player, book);
        if (r < 0) return 0;
        const c = rm.changedAt(r, o);
        const v = rm.verifiedAt(r, o);
        return c > v ? c : v;
      },
      feed: d.feed,
    });
    this.metrics = new WebhookMetrics(d.registry ?? null, () => this.op(() => outboxBacklog(this.d.db)));
  }

  async start(): Promise<void> {
    const now = this.d.now();
    for (const row of await loadWebhooks(this.d.db)) this.adopt(row);
    // what the checks saw before a restart: a transition detected and not committed is detected again
    this.evaluator.restore(await loadCheckStates(this.d.db));
    const W = this.cfg.rateWindowMs;
    for (const c of await scheduledStarts(this.d.db, now - W)) this.subs.get(c.webhookPk)?.starts.push(c.at);
    for (const id of await loadTrackedEvents(this.d.db)) this.tracked.add(id);
    this.reindex();
    await this.sender.start();
    this.d.hub.onBatch((b) => {
      if (!this.stopping) this.guard(() => this.evaluator.changes(b.records, b.count, this.d.now()));
    });
    const tick = setInterval(() => {
      if (this.d.following?.() === false) return;
      this.guard(() => this.evaluator.tick(this.d.now(), this.d.hub.readModel.newestByBook, this.d.hub.counters));
    }, 1000);
    // the baseline of the rejection rate; books are judged from the first tick on, once the feed had a second
    // to write (a book it has not written since a restart is judged on its newest write persisted before)
    this.evaluator.parser(this.d.now(), this.d.hub.counters);
    const poll = setInterval(() => this.poll(), this.cfg.pollMs);
    const renew = setInterval(() => this.renew(), Math.max(50, Math.floor(this.cfg.leaseMs / 3)));
    // the outbox's retention: every hour, and once a minute after the start
    const prune = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    const firstPrune = setTimeout(() => void this.prune(), 60_000);
    tick.unref();
    poll.unref();
    renew.unref();
    prune.unref();
    firstPrune.unref();
    this.timers.push(tick, poll, renew, prune, firstPrune);
    // an embedded database is this process's alone; a shared one may see subscriptions made through other nodes
    if (this.d.db.kind !== 'embedded') {
      const subs = setInterval(() => void this.refreshSubs(), this.cfg.subsRefreshMs);
      subs.unref();
      this.timers.push(subs);
    }
    this.poll();
    this.mail();
  }

  /** Deletes the final deliveries older than the retention, a batch at a time; returns how many went. Every node of a
   *  cluster may run it: the deletes are idempotent. */
  async prune(): Promise<number> {
    const before = new Date(this.d.now() - this.cfg.retentionMs);
    let total = 0;
    try {
      for (;;) {
        if (this.closed) break;
        const n = await pruneDeliveries(this.d.db, before, PRUNE_BATCH);
        total += n;
        if (n < PRUNE_BATCH) break;
      }
      if (!this.closed) await pruneTrackedEvents(this.d.db, before);
    } catch (e) {
      this.d.log?.(`webhook outbox prune failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    return total;
  }

  /** The subscription cache follows every change made through the API. */
  put(row: WebhookRow): void {
    this.localChanges++;
    const old = this.subs.get(row.pk);
    if (old !== undefined) {
      old.update(row);
    } else this.adopt(row);
    this.reindex();
    if (row.isActive) this.poll();
  }

  remove(pk: number): void {
    this.localChanges++;
    this.forget(pk);
    this.reindex();
  }

  /** A subscription enters the cache, under its account. */
  private adopt(row: WebhookRow): void {
    let owner = this.owners.get(row.ownerId);
    if (owner === undefined) this.owners.set(row.ownerId, (owner = new Owner()));
    const sub = new Sub(row, owner);
    owner.subs.push(sub);
    this.subs.set(row.pk, sub);
  }

  /** A subscription leaves the cache, with the attempts it had waiting (its deliveries go with it). */
  private forget(pk: number): void {
    const sub = this.subs.get(pk);
    if (sub === undefined) return;
    for (const d of sub.waiting) this.waitingPks.delete(d.pk);
    sub.waiting = [];
    this.subs.delete(pk);
    const owner = sub.owner;
    const i = owner.subs.indexOf(sub);
    if (i >= 0) owner.subs.splice(i, 1);
    this.dropOwner(sub);
  }

  /** An account with no subscription in the cache and nothing in flight is forgotten. */
  private dropOwner(sub: Sub): void {
    const owner = sub.owner;
    if (owner.subs.length === 0 && owner.inflight === 0 && this.owners.get(sub.row.ownerId) === owner) this.owners.delete(sub.row.ownerId);
  }

  /** Whether the subscription may start one more attempt now: below its own share, its account's and the total. */
  private hasSlot(sub: Sub): boolean {
    return sub.inflight < this.cfg.maxInFlightPerSub && sub.owner.inflight < this.cfg.maxInFlightPerAccount && this.inflight.size < this.cfg.maxInFlight;
  }

  /** An attempt of the subscription ends: its slot goes to its next waiting attempt, or else to another
   *  subscription of its account that waits for one. */
  private release(sub: Sub): void {
    sub.inflight--;
    sub.owner.inflight--;
    this.nextOf(sub);
    const owner = sub.owner;
    for (let i = 0; i < owner.subs.length && owner.inflight < this.cfg.maxInFlightPerAccount; i++) {
      const o = owner.subs[i];
      if (o !== sub && o.waiting.length > 0) this.nextOf(o);
    }
    this.dropOwner(sub);
  }

  /** Follows the subscriptions as stored: created, changed, disabled or deleted through another node. */
  private refreshing = false;
  /** changes this node made to the cache (API calls, failure counts, disables): a refresh whose read began before one
   *  of them is dropped, or it would put back the row as it was (a PATCH {"is_active": true} undone for up to the
   *  refresh period, its deliveries held back) */
  private localChanges = 0;
  /** the stored subscriptions, as a refresh reads them (a field, so a test can hold a read back) */
  private loadSubs = (): Promise<WebhookRow[]> => loadWebhooks(this.d.db);
  private async refreshSubs(): Promise<void> {
    if (this.closed || this.refreshing) return;
    this.refreshing = true;
    try {
      const before = this.localChanges;
      const rows = await this.loadSubs();
      if (this.localChanges !== before) return;
      let changed = false;
      const seen = new Set<number>();
      for (const row of rows) {
        seen.add(row.pk);
        const old = this.subs.get(row.pk);
        if (old !== undefined && sameRow(old.row, row)) continue;
        changed = true;
        if (old === undefined) this.adopt(row);
        else {
          old.update(row);
        }
      }
      for (const pk of this.subs.keys()) {
        if (!seen.has(pk)) {
          this.forget(pk);
          changed = true;
        }
      }
      if (changed) this.reindex();
    } catch (e) {
      this.d.log?.(`webhook subscription refresh failed: ${String(e)}`);
    } finally {
      this.refreshing = false;
    }
  }

  private reindex(): void {
    const byType = new Map<string, Sub[]>();
    for (const s of this.subs.values()) {
      if (!s.row.isActive) continue;
      for (const t of s.row.events) {
        let list = byType.get(t);
        if (list === undefined) byType.set(t, (list = []));
        list.push(s);
      }
    }
    this.byType = byType;
    this.activeSubs = 0;
    for (const x of this.subs.values()) if (x.row.isActive) this.activeSubs++;
    this.evaluator.setWanted(byType.keys());
    // +EV rows' growth past a threshold is followed only while someone is told of +EV rows
    this.d.hub.analytics.evGrowth = byType.has('ev_alert') || byType.has('ev.flagged');
    // the hub copies opened and closed analytics rows only once someone listens: listen from the first
    // subscription that needs them (and for good: the arbitrages announced must be followed to their close)
    if (!this.analyticsOn && ANALYTICS_TYPES.some((x) => byType.has(x))) {
      this.analyticsOn = true;
      this.d.hub.onAnalytics((ch) => {
        if (!this.stopping) this.guard(() => this.evaluator.analytics(ch, this.d.now()));
      });
    }
  }

  /** The evaluator runs inside the hub's callbacks: a fault of ours must not break the engine's batch handling. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.d.log?.(`webhook evaluation failed: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }

  /** Serialises outbox statements on the one handle, so a poll never races the insert of a row it would pick. */
  private op<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** A claim made now: this node, until a lease from now. */
  private claim(): Claim {
    return { node: this.cfg.nodeId, until: this.d.now() + this.cfg.leaseMs };
  }

  private onState(st: CheckState, from: string): void {
    const key = `${st.kind}:${st.key}`;
    if (from === st.state) this.states.set(key, st);
    else {
      // a transition supersedes a heartbeat of the check queued before it
      this.states.delete(key);
      this.transitions.push({ from, state: st, items: this.checkRows.get(key) ?? [] });
      this.checkRows.delete(key);
    }
    this.scheduleInsert();
  }

  private onEvent(ev: WebhookEvent): void {
    const arbId = ev.type === 'arbitrage.opened' || ev.type === 'arbitrage.closed' ? String(ev.data.arb_id) : '';
    if (ev.type === 'arbitrage.opened') {
      for (const sub of this.byType.get('arbitrage.closed') ?? []) if (arbReaches(sub.filter, ev)) sub.toldArbs.set(arbId, null);
    }
    const subs = this.byType.get(ev.type);
    if (subs === undefined) return;
    let queue = this.inserts;
    if (ev.check !== null) {
      // written with the check's transition, which the evaluator persists right after this event
      let rows = this.checkRows.get(ev.check);
      if (rows === undefined) this.checkRows.set(ev.check, (rows = []));
      queue = rows;
    }
    this.stats.events++;
    const now = this.d.now();
    const id = newEventId();
    const bodies = new Map<string, string>();
    for (const sub of subs) {
      let after: string | null = null;
      if (ev.type === 'arbitrage.closed') {
        const told = sub.toldArbs.get(arbId);
        if (told === undefined) continue;
        sub.toldArbs.delete(arbId);
        // never delivered before its opening: it waits while the opening is on its retry schedule
        after = told;
      } else if (!matches(sub.filter, ev)) continue;
      const fmt: Format = sub.row.variant === 'A' ? 'json' : sub.row.format;
      const bk = sub.row.variant + fmt;
      let body = bodies.get(bk);
      if (body === undefined) bodies.set(bk, (body = renderBody(sub.row.variant, fmt, { id, type: ev.type, at: ev.at, data: ev.data, simulated: this.d.simulated?.() === true })));
      const next = this.rate(sub, now);
      if (next === null) {
        this.stats.rateLimited++;
        // recorded for replay up to the tier's rate per window, beyond that counted only: a busy feed past a
        // subscription's rate wrote a full outbox row per event, hundreds a second kept 30 days (a disk filled)
        if (!this.recordLimited(sub, now) && !ALWAYS_RECORDED.has(ev.type)) {
          this.stats.rateLimitedUnrecorded++;
          this.metrics.skippedUnrecorded();
          continue;
        }
      }
      const deliveryId = newDeliveryId();
      if (ev.type === 'arbitrage.opened' && sub.toldArbs.has(arbId)) sub.toldArbs.set(arbId, deliveryId);
      queue.push({
        sub,
        row: {
          deliveryId, webhookPk: sub.row.pk, eventId: id, eventType: ev.type, body,
          status: next === null ? 'rate_limited' : 'pending', nextAttemptAt: next, dedupe: ev.dedupe, after,
        },
      });
    }
    this.scheduleInsert();
  }

  private scheduleInsert(): void {
    if (this.insertScheduled || (this.inserts.length === 0 && this.states.size === 0 && this.transitions.length === 0 && this.newTracked.length === 0)) return;
    this.insertScheduled = true;
    setImmediate(() => {
      this.insertScheduled = false;
      void this.op(() => this.flushInserts());
    });
  }

  /** Whether one more rate-limited event of the subscription is recorded in this rate window: as many as the tier's
   *  rate (so the rows kept grow with what the tier delivers, not with the feed). */
  private recordLimited(sub: Sub, now: number): boolean {
    const key = this.d.accounts.keyById(sub.row.billingKeyId);
    const limit = key === undefined ? 0 : WEBHOOK_TIERS[key.tier]?.perMinute ?? 0;
    const W = this.cfg.rateWindowMs;
    const window = Math.floor(now / W) * W;
    if (sub.limitedWindow !== window) {
      sub.limitedWindow = window;
      sub.limitedRecorded = 0;
    }
    if (sub.limitedRecorded >= Math.max(limit, 1)) return false;
    sub.limitedRecorded++;
    return true;
  }

  /** When the event's first attempt may be made under the subscription's rate, or null (rate_limited).
   *  The rate holds over any window of rateWindowMs, not per clock minute: with first attempts in order and each
   *  at least a window after the one `limit` places before it, no window holds more than `limit` (60 at :59 and
   *  60 more at :00 went out within a second when the minutes were counted apart). */
  private rate(sub: Sub, now: number): number | null {
    const key = this.d.accounts.keyById(sub.row.billingKeyId);
    const limit = key === undefined ? 0 : WEBHOOK_TIERS[key.tier]?.perMinute ?? 0;
    if (limit === 0) return null;
    const W = this.cfg.rateWindowMs;
    const s = sub.starts;
    // starts a window or more in the past bound nothing any more
    let drop = 0;
    while (drop < s.length && s[drop] <= now - W) drop++;
    if (drop > 0) s.splice(0, drop);
    let at = now;
    if (s.length > 0) at = Math.max(at, s[s.length - 1]);
    if (s.length >= limit) at = Math.max(at, s[s.length - limit] + W);
    if (at - now > this.cfg.deferWindows * W) return null;
    s.push(at);
    return at;
  }

  private async flushInserts(): Promise<void> {
    // check rows whose transition never came (none expected): written as plain rows rather than held forever
    for (const rows of this.checkRows.values()) this.inserts.push(...rows);
    this.checkRows.clear();
    const batch = this.inserts;
    const states = this.states;
    const transitions = this.transitions;
    this.inserts = [];
    this.states = new Map();
    this.transitions = [];
    const tracked = this.newTracked;
    this.newTracked = [];
    if (batch.length === 0 && states.size === 0 && transitions.length === 0 && tracked.length === 0) return;
    const now = this.d.now();
    let out;
    this.insertsWriting++;
    try {
      out = await writeOutbox(this.d.db, batch.map((b) => b.row), now, {
        heartbeats: [...states.values()],
        transitions: transitions.map((x) => ({ from: x.from, state: x.state, rows: x.items.map((b) => b.row) })),
        claim: this.claim(),
      });
    } catch (e) {
      if (refusedData(e)) {
        // the database refuses something in the batch (a constraint, a value): the same batch would be refused for
        // good, every later event held behind it and every ingest waiting on the outbox answered 503; written one by
        // one instead, what it refuses dropped and logged
        this.d.log?.(`webhook outbox insert refused, writing its items one by one: ${String(e)}`);
        await this.writeApart(batch, [...states.values()], transitions, now);
        await insertTrackedEvents(this.d.db, tracked, now).catch(() => { this.newTracked = tracked.concat(this.newTracked); });
        return;
      }
      // nothing was written: keep the events and the states and try again (no attempt was made for them)
      this.d.log?.(`webhook outbox insert failed, retrying: ${String(e)}`);
      this.inserts = batch.concat(this.inserts);
      for (const [k, st] of states) if (!this.states.has(k)) this.states.set(k, st);
      this.transitions = transitions.concat(this.transitions);
      this.newTracked = tracked.concat(this.newTracked);
      setTimeout(() => void this.op(() => this.flushInserts()), 500).unref();
      return;
    } finally {
      this.insertsWriting--;
    }
    // the events first seen, after their new_event rows: a kill between the two announces one again after the
    // restart, to subscriptions that do not hold it yet (the dedupe key keeps it from the others), rather than never
    try {
      await insertTrackedEvents(this.d.db, tracked, now);
    } catch (e) {
      this.d.log?.(`webhook tracked events insert failed, retrying with the next write: ${String(e)}`);
      this.newTracked = tracked.concat(this.newTracked);
    }
    // another node moved these checks first: follow the stored state (its events are that node's to announce)
    if (out.adopt.length > 0) this.evaluator.restore(out.adopt);
    this.written(batch, out.pks, out.claimed);
    for (let i = 0; i < transitions.length; i++) this.written(transitions[i].items, out.transitions[i], out.claimed);
  }

  /** A batch the database refused, item by item: a transition with its rows, each row, the heartbeats. An item refused
   *  again is dropped (logged); one that fails otherwise (the connection) goes back for the next write. */
  private async writeApart(batch: QueuedInsert[], heartbeats: CheckState[], transitions: QueuedTransition[], now: number): Promise<void> {
    const attempt = async (what: string, write: () => Promise<void>, requeue: () => void) => {
      try {
        await write();
      } catch (e) {
        if (refusedData(e)) this.d.log?.(`webhook outbox: ${what} refused by the database, dropped: ${String(e)}`);
        else requeue();
      }
    };
    for (const tr of transitions) {
      await attempt(`the ${tr.state.kind} ${tr.state.key} transition`, async () => {
        const out = await writeOutbox(this.d.db, [], now, { transitions: [{ from: tr.from, state: tr.state, rows: tr.items.map((b) => b.row) }], claim: this.claim() });
        if (out.adopt.length > 0) this.evaluator.restore(out.adopt);
        this.written(tr.items, out.transitions[0], out.claimed);
      }, () => this.transitions.push(tr));
    }
    for (const b of batch) {
      await attempt(`delivery ${b.row.deliveryId} (${b.row.eventType})`, async () => {
        const out = await writeOutbox(this.d.db, [b.row], now, { claim: this.claim() });
        this.written([b], out.pks, out.claimed);
      }, () => this.inserts.push(b));
    }
    if (heartbeats.length > 0) {
      await attempt('the check heartbeats', async () => {
        const out = await writeOutbox(this.d.db, [], now, { heartbeats, claim: this.claim() });
        if (out.adopt.length > 0) this.evaluator.restore(out.adopt);
      }, () => { for (const st of heartbeats) if (!this.states.has(`${st.kind}:${st.key}`)) this.states.set(`${st.kind}:${st.key}`, st); });
    }
    if (this.inserts.length > 0 || this.transitions.length > 0) setTimeout(() => void this.op(() => this.flushInserts()), 500).unref();
  }

  /** Rows just written: counted, and those due now (claimed by this node in the insert) attempted. */
  private written(items: readonly QueuedInsert[], pks: readonly number[], claimed: ReadonlySet<number>): void {
    this.stats.enqueued += items.length;
    for (let i = 0; i < items.length; i++) {
      const r = items[i].row;
      const pk = pks[i] ?? -1;
      if (pk >= 0) this.metrics.written(r.eventType, r.status);
      if (pk < 0 || !claimed.has(pk)) continue;
      const d: DueDelivery = { pk, deliveryId: r.deliveryId, webhookPk: r.webhookPk, eventType: r.eventType, body: r.body, status: 'pending', attempts: 0 };
      if (this.inflight.size < this.cfg.maxInFlight && this.readyHead === this.ready.length) this.dispatch(d);
      else if (this.ready.length - this.readyHead < READY_MAX) this.ready.push(d);
    }
  }

  /** Renews this node's claims on the attempts it holds (in flight or waiting for a slot); a waiting row whose
   *  claim was lost (the lease ran out, e.g. the process stalled) is left to the node that took it. */
  private renewing = false;
  private renew(): void {
    if (this.closed || this.renewing) return;
    const held = [...this.inflight, ...this.waitingPks];
    for (let i = this.readyHead; i < this.ready.length; i++) held.push(this.ready[i].pk);
    if (held.length === 0) return;
    this.renewing = true;
    renewClaims(this.d.db, held, this.claim()).then((kept) => {
      if (kept.size === held.length) return;
      const lost = new Set(held.filter((pk) => !kept.has(pk)));
      this.ready = this.ready.slice(this.readyHead).filter((d) => !lost.has(d.pk));
      this.readyHead = 0;
      for (const sub of this.subs.values()) {
        if (sub.waiting.some((d) => lost.has(d.pk))) sub.waiting = sub.waiting.filter((d) => !lost.has(d.pk));
      }
      for (const pk of lost) this.waitingPks.delete(pk);
    }).catch((e: unknown) => this.d.log?.(`webhook lease renewal failed: ${String(e)}`)).finally(() => { this.renewing = false; });
  }

  private drainReady(): void {
    while (this.readyHead < this.ready.length && this.inflight.size < this.cfg.maxInFlight && !this.closed) {
      this.dispatch(this.ready[this.readyHead++]);
    }
    if (this.readyHead === this.ready.length) {
      this.ready = [];
      this.readyHead = 0;
    }
  }

  private polling = false;
  private poll(): void {
    this.drainReady();
    if (this.waitingPks.size > 0) for (const sub of this.subs.values()) if (sub.waiting.length > 0) this.nextOf(sub);
    // without an active subscription nothing can be due (the query joins active ones): no query at all
    if (this.activeSubs === 0 || this.closed || this.polling || this.inflight.size >= this.cfg.maxInFlight || this.readyHead < this.ready.length) return;
    this.polling = true;
    void this.op(async () => {
      if (this.readyHead < this.ready.length) return;
      // a subscription at its share of the slots, or its account at its share, gets no more rows claimed until one
      // of their attempts ends
      const full: number[] = [];
      for (const [pk, sub] of this.subs) {
        if (sub.inflight >= this.cfg.maxInFlightPerSub || sub.owner.inflight >= this.cfg.maxInFlightPerAccount) full.push(pk);
      }
      const due = await claimDue(this.d.db, this.d.now(), this.cfg.maxInFlight - this.inflight.size, [...this.inflight, ...this.waitingPks], this.claim(), full);
      for (const d of due) if (!this.inflight.has(d.pk) && !this.waitingPks.has(d.pk)) this.dispatch(d);
    }).catch((e: unknown) => this.d.log?.(`webhook poll failed: ${String(e)}`)).finally(() => { this.polling = false; });
  }

  private dispatch(d: DueDelivery): void {
    const sub = this.subs.get(d.webhookPk);
    if (sub === undefined || !sub.row.isActive || this.closed) return;
    if (sub.inflight >= this.cfg.maxInFlightPerSub || sub.owner.inflight >= this.cfg.maxInFlightPerAccount) {
      // past its share or its account's: it waits for one of their attempts to end; beyond WAITING_MAX its claim
      // simply runs out and a later poll takes the row again
      if (sub.waiting.length < WAITING_MAX) {
        sub.waiting.push(d);
        this.waitingPks.add(d.pk);
      }
      return;
    }
    this.inflight.add(d.pk);
    const number = d.attempts + 1;
    const key = this.d.accounts.keyById(sub.row.billingKeyId);
    const base = { deliveryPk: d.pk, webhookPk: d.webhookPk, number };
    // held, not charged, while in flight: a process killed mid-attempt has charged nothing for it (Accounts.hold)
    if (key === undefined || !this.d.accounts.hold(key, CREDITS_PER_DELIVERY, this.d.now())) {
      this.stats.outOfCredits++;
      this.metrics.skipped('out_of_credits');
      void this.record({
        ...base, attemptedAt: this.d.now(), statusCode: null, durationMs: 0, error: 'out of credits', status: 'out_of_credits',
        nextAttemptAt: null, attempts: d.attempts, failures: 'none', attempted: false,
      });
      return;
    }
    sub.inflight++;
    sub.owner.inflight++;
    const p = this.send(sub, d.deliveryId, d.eventType, d.body, number).finally(() => this.release(sub)).then((res) => {
      const ok = isOk(res);
      this.d.accounts.settleHold(key, CREDITS_PER_DELIVERY, ok, this.d.now());
      if (ok) this.d.accounts.recordUsage(key, WEBHOOK_DELIVERY_LABEL, CREDITS_PER_DELIVERY);
      const delays = this.cfg.retryDelaysMs;
      let status: AttemptResult['status'];
      let next: number | null = null;
      let failures: AttemptResult['failures'] = 'none';
      if (ok) {
        status = 'delivered';
        // most successes follow successes: writing a zero over a zero would touch the subscription row every time
        failures = sub.row.consecutiveFailures > 0 || sub.incPending > 0 ? 'reset' : 'none';
        this.stats.delivered++;
      } else {
        this.stats.failedAttempts++;
        if (number <= delays.length) {
          status = 'retrying';
          next = this.d.now() + delays[number - 1];
        } else {
          status = 'failed';
          this.metrics.failed();
          failures = 'inc';
          sub.incPending++;
        }
      }
      return this.record({
        ...base, attemptedAt: res.attemptedAt, statusCode: res.statusCode, durationMs: res.durationMs, error: res.error, status,
        nextAttemptAt: next, attempts: number, failures, attempted: true,
      });
    });
    this.sending.add(p);
    void p.finally(() => this.sending.delete(p));
  }

  /** A subscription's attempt ended: its next waiting one, if it is still active, takes the slot. */
  private nextOf(sub: Sub): void {
    while (sub.waiting.length > 0 && this.hasSlot(sub) && !this.closed) {
      const d = sub.waiting.shift()!;
      this.waitingPks.delete(d.pk);
      if (!sub.row.isActive || this.subs.get(d.webhookPk) !== sub) continue;
      this.dispatch(d);
    }
    if (!sub.row.isActive) {
      for (const d of sub.waiting) this.waitingPks.delete(d.pk);
      sub.waiting = [];
    }
  }

  /** One HTTP attempt: `attempt` is its place in its schedule (1 to 3 by default), `replay` the ordinal of a
   *  replay (0 for scheduled attempts and tests). */
  private send(sub: Sub, deliveryId: string, eventType: string, body: string, attempt: number, replay = 0): Promise<SendResult> {
    return this.sender.send({
      url: sub.row.url, body, secret: sub.row.secret, variant: sub.row.variant, eventType, webhookId: sub.publicId,
      deliveryId, attempt, replay, timeoutMs: this.cfg.timeoutMs, allowPrivate: this.cfg.allowPrivate,
    }).then((res) => {
      this.metrics.attempt(res.statusCode);
      return res;
    });
  }

  /** Queues an outcome; resolves once it is committed (the delivery then leaves the in-flight set). */
  private record(result: AttemptResult): Promise<void> {
    return new Promise((done) => {
      this.results.push({ result, done });
      if (this.resultScheduled) return;
      this.resultScheduled = true;
      setImmediate(() => {
        this.resultScheduled = false;
        void this.op(() => this.flushResults());
      });
    });
  }

  private async flushResults(): Promise<void> {
    const batch = this.results;
    this.results = [];
    if (batch.length === 0) return;
    let outcome;
    try {
      outcome = await recordResults(this.d.db, batch.map((b) => b.result), DISABLE_AFTER, this.d.now(), this.cfg.nodeId);
    } catch (e) {
      this.d.log?.(`webhook result write failed, retrying: ${String(e)}`);
      this.results = batch.concat(this.results);
      setTimeout(() => void this.op(() => this.flushResults()), 500).unref();
      return;
    }
    for (const b of batch) {
      this.inflight.delete(b.result.deliveryPk);
      if (b.result.failures === 'inc') {
        const s = this.subs.get(b.result.webhookPk);
        if (s !== undefined) s.incPending--;
      }
      b.done();
    }
    if (outcome.failures.length > 0 || outcome.disabled.length > 0) this.localChanges++;
    for (const f of outcome.failures) {
      const s = this.subs.get(f.webhookPk);
      if (s !== undefined) s.row = { ...s.row, consecutiveFailures: f.count };
    }
    const disabled = outcome.disabled;
    for (const h of disabled) {
      const s = this.subs.get(h.webhookPk);
      if (s !== undefined) s.row = { ...s.row, isActive: false, disabledAt: new Date(this.d.now()) };
    }
    if (disabled.length > 0) {
      this.metrics.disabled(disabled.length);
      this.reindex();
      this.mail();
    }
    if (!this.closed) this.poll();
  }

  /** Resolves once every event evaluated so far is committed to the outbox. A caller that must not answer before
   *  its events are durable (e.g. an ingest that acknowledges a batch) can await it. */
  settled(): Promise<void> {
    // the rejection rate is judged on the batch just applied, so its parser.degraded is committed before the ack
    if (!this.stopping) this.guard(() => this.evaluator.parser(this.d.now(), this.d.hub.counters));
    if (this.inserts.length === 0 && this.states.size === 0 && this.transitions.length === 0 && this.insertsWriting === 0) return Promise.resolve();
    return this.op(() => this.flushInserts());
  }

  /** A test or replay send may start now: within the subscription's SYNC_LIMITS and a free slot, which it then
   *  takes (release it with release()). Synchronous, so concurrent requests cannot pass the check together. */
  private syncSlot(sub: Sub, kind: keyof typeof SYNC_LIMITS): SyncRefused | null {
    const now = this.d.now();
    const W = this.cfg.rateWindowMs;
    const times = sub.syncSends[kind];
    let drop = 0;
    while (drop < times.length && times[drop] <= now - W) drop++;
    if (drop > 0) times.splice(0, drop);
    if (times.length >= SYNC_LIMITS[kind]) return { refused: 'rate', retryAfterS: Math.max(1, Math.ceil((times[0] + W - now) / 1000)) };
    if (!this.hasSlot(sub)) return { refused: 'slots', retryAfterS: 1 };
    times.push(now);
    sub.inflight++;
    sub.owner.inflight++;
    return null;
  }

  /** POST /v1/webhooks/{id}/test: one synchronous attempt of a `test` event, recorded, not retried, not charged. It
   *  takes one of the subscription's slots, as a scheduled attempt does (SyncRefused when none is free or past
   *  SYNC_LIMITS.test). */
  async test(sub: Sub): Promise<SyncOutcome | SyncRefused> {
    const refused = this.syncSlot(sub, 'test');
    if (refused !== null) return refused;
    try {
      return await this.testSend(sub);
    } finally {
      this.release(sub);
    }
  }

  private async testSend(sub: Sub): Promise<SyncOutcome> {
    const now = this.d.now();
    const env = {
      id: newEventId(), type: 'test', at: now,
      data: { message: 'Test delivery from linewire', webhook_id: sub.row.variant === 'A' ? sub.row.pk : sub.publicId },
      simulated: this.d.simulated?.() === true,
    };
    const fmt: Format = sub.row.variant === 'A' ? 'json' : sub.row.format;
    const body = renderBody(sub.row.variant, fmt, env);
    const deliveryId = newDeliveryId();
    const [pk] = await this.op(() => insertDeliveries(this.d.db, [{
      deliveryId, webhookPk: sub.row.pk, eventId: env.id, eventType: 'test', body, status: 'pending', nextAttemptAt: null, dedupe: null,
    }], now));
    this.inflight.add(pk);
    const res = await this.send(sub, deliveryId, 'test', body, 1);
    const ok = isOk(res);
    await this.record({
      deliveryPk: pk, webhookPk: sub.row.pk, number: 1, attemptedAt: res.attemptedAt, statusCode: res.statusCode, durationMs: res.durationMs,
      error: res.error, status: ok ? 'delivered' : 'failed', nextAttemptAt: null, attempts: 1, failures: 'none', attempted: true,
    });
    return { deliveryId, delivered: ok, statusCode: res.statusCode, error: res.error, attempt: 1, replay: 0 };
  }

  /**
   * POST /v1/webhooks/{id}/replay: one synchronous attempt of a recorded delivery with its delivery id and body.
   * A replay is a schedule of its own of one attempt: on the wire it is attempt 1 (X-Service-Delivery-Attempt keeps
   * its meaning, the place in a schedule, 1 to 3) marked X-Service-Replay with its ordinal among the delivery's
   * replays; its record is numbered after every attempt so far. Charged when it delivers an event not delivered
   * before. 'busy' when the delivery is still on its schedule; 'credits' when the owner cannot pay; null when there
   * is no such delivery; SyncRefused past SYNC_LIMITS.replay or with no slot free (it takes one, as test does).
   */
  async replay(sub: Sub, deliveryId: string): Promise<SyncOutcome | SyncRefused | 'busy' | 'credits' | null> {
    const d = await getDelivery(this.d.db, sub.row.pk, deliveryId);
    if (d === null) return null;
    // a delivery still on its schedule is busy while the subscription is active; once it is disabled no node attempts
    // it (the poll takes active subscriptions only), so its owner may replay it rather than wait for a re-enable
    if (((d.status === 'pending' || d.status === 'retrying') && sub.row.isActive) || this.inflight.has(d.pk)) return 'busy';
    const refused = this.syncSlot(sub, 'replay');
    if (refused !== null) return refused;
    try {
      return await this.replaySend(sub, d);
    } finally {
      this.release(sub);
    }
  }

  private async replaySend(sub: Sub, d: DeliveryRow): Promise<SyncOutcome | 'credits'> {
    const number = Math.max(d.attempts, ...d.tries.map((t) => t.number), 0) + 1;
    const replay = d.tries.filter((t) => t.replay).length + 1;
    const charge = d.status !== 'delivered';
    const key = this.d.accounts.keyById(sub.row.billingKeyId);
    if (charge && (key === undefined || !this.d.accounts.hold(key, CREDITS_PER_DELIVERY, this.d.now()))) return 'credits';
    this.inflight.add(d.pk);
    const res = await this.send(sub, d.deliveryId, d.eventType, d.body, 1, replay);
    const ok = isOk(res);
    if (charge) this.d.accounts.settleHold(key!, CREDITS_PER_DELIVERY, ok, this.d.now());
    if (charge && ok) this.d.accounts.recordUsage(key!, WEBHOOK_DELIVERY_LABEL, CREDITS_PER_DELIVERY);
    await this.record({
      deliveryPk: d.pk, webhookPk: sub.row.pk, number, attemptedAt: res.attemptedAt, statusCode: res.statusCode, durationMs: res.durationMs,
      error: res.error, status: ok ? 'delivered' : null, nextAttemptAt: null, attempts: null,
      failures: ok && d.eventType !== 'test' ? 'reset' : 'none', attempted: true,
    });
    return { deliveryId: d.deliveryId, delivered: ok, statusCode: res.statusCode, error: res.error, attempt: number, replay };
  }

  /** Sends unsent notifications through SMTP_URL, one at a time; without it the rows are the record. */
  private mail(): void {
    const url = this.cfg.smtpUrl;
    if (url === null || this.mailing !== null || this.closed) return;
    this.mailing = (async () => {
      for (const n of await this.op(() => unsentNotifications(this.d.db))) {
        let error: string | null = null;
        try {
          await sendMail(url, { from: this.cfg.mailFrom, to: n.recipient!, subject: n.subject, body: n.body });
        } catch (e) {
          error = (e as Error).message;
        }
        await this.op(() => markNotification(this.d.db, n.id, error === null ? this.d.now() : null, error));
      }
    })().catch((e: unknown) => this.d.log?.(`webhook notification mail failed: ${String(e)}`)).finally(() => { this.mailing = null; });
  }

  private async lastPass(): Promise<void> {
    const until = Date.now() + LAST_PASS_MS;
    const settled = () => Promise.race([Promise.allSettled([...this.sending]), new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())).unref())]);
    try {
      await this.op(() => this.flushInserts());
      // the attempts in flight end first: a close waits for its opening to be final (claimDue), and an opening the
      // receiver has just answered is final only once its outcome is written
      await settled();
      await this.op(async () => {
        const due = await claimDue(this.d.db, this.d.now(), this.cfg.maxInFlight - this.inflight.size, [...this.inflight, ...this.waitingPks], this.claim(), []);
        for (const d of due) if (!this.inflight.has(d.pk) && !this.waitingPks.has(d.pk)) this.dispatch(d);
      });
    } catch (e) {
      this.d.log?.(`webhook last pass at shutdown failed: ${String(e)}`);
      return;
    }
    await settled();
  }

  /** Stops the evaluator and the poll, waits briefly for attempts in flight and records their outcomes. Attempts
   *  still unanswered stay pending in the outbox and are made again at the next start. */
  async close(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    // the arbitrages announced are closed with the node: after a restart the store is empty and nothing would close
    // them (a bot kept them open for good). They are written, then sent in one last pass bounded by
    // LAST_PASS_MS: a receiver learns of them as the node stops, not when (or if) it comes back; what is not
    // answered by then stays pending and is sent after the restart
    let closing = 0;
    if (this.cfg.closeArbsAtShutdown) this.guard(() => { closing = this.evaluator.closeAll(this.d.now()); });
    if (closing > 0) await this.lastPass();
    this.closed = true;
    await Promise.race([Promise.allSettled([...this.sending]), new Promise((r) => setTimeout(r, 2000).unref())]);
    await this.op(() => this.flushInserts()).catch(() => undefined);
    await this.op(() => this.flushResults()).catch(() => undefined);
    // rows claimed and never attempted: another node may take them at once (attempts still unanswered keep their
    // claims until the lease runs out, as after a kill)
    const waiting = this.ready.slice(this.readyHead).map((d) => d.pk);
    this.ready = [];
    this.readyHead = 0;
    await this.op(() => releaseClaims(this.d.db, waiting, this.cfg.nodeId)).catch(() => undefined);
    await this.mailing;
    await this.sender.close();
  }
}

function sameRow(a: WebhookRow, b: WebhookRow): boolean {
  return a.url === b.url && a.isActive === b.isActive && a.consecutiveFailures === b.consecutiveFailures && a.secret === b.secret &&
    a.format === b.format && a.minEdgePct === b.minEdgePct && a.events.join() === b.events.join() &&
    (a.sportKeys ?? []).join() === (b.sportKeys ?? []).join() && (a.sportKeys === null) === (b.sportKeys === null);
}

/** A statement the database refused for its data (SQLSTATE class 22, data exception, or 23, integrity constraint):
 *  the same statement fails again however often it is retried. */
function refusedData(e: unknown): boolean {
  const c = sqlStateClass(e);
  return c === '22' || c === '23';
}

function isOk(r: SendResult): boolean {
  return r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;
}
