// Webhook subscriptions, the delivery outbox, attempts, notifications and idempotency records (issue 6): every
// SQL statement touching them lives here. Times are passed in from the caller's clock (the app's `now`), so
// due times follow the same clock as the rest of the service. Batches travel as one JSON parameter (as
// saveBalances does): the statement text stays fixed whatever the batch size.

import type postgres from 'postgres';
import type { CheckState } from '../engine/webhook-events.js';
import type { Database } from './connection.js';

export interface WebhookRow {
  pk: number;
  publicId: string | null;
  ownerId: number;
  billingKeyId: number;
  variant: 'A' | 'B';
  url: string;
  events: string[];
  sportKeys: string[] | null;
  minEdgePct: number | null;
  format: 'json' | 'slack' | 'discord';
  secret: string;
  isActive: boolean;
  consecutiveFailures: number;
  disabledAt: Date | null;
  createdAt: Date;
}

interface WebhookRecord {
  id: string;
  public_id: string | null;
  owner_id: string;
  billing_key_id: string;
  variant: 'A' | 'B';
  url: string;
  events: string[];
  sport_keys: string[] | null;
  min_edge_pct: number | null;
  format: 'json' | 'slack' | 'discord';
  secret: string;
  is_active: boolean;
  consecutive_failures: number;
  disabled_at: Date | null;
  created_at: Date;
}

function toRow(r: WebhookRecord): WebhookRow {
  return {
    pk: Number(r.id), publicId: r.public_id, ownerId: Number(r.owner_id), billingKeyId: Number(r.billing_key_id),
    variant: r.variant, url: r.url, events: r.events, sportKeys: r.sport_keys, minEdgePct: r.min_edge_pct, format: r.format,
    secret: r.secret, isActive: r.is_active, consecutiveFailures: r.consecutive_failures, disabledAt: r.disabled_at,
    createdAt: r.created_at,
  };
}

export type NewWebhook = Omit<WebhookRow, 'pk' | 'isActive' | 'consecutiveFailures' | 'disabledAt' | 'createdAt'>;

export interface IdempotentAnswer {
  requestHash: string;
  status: number;
  response: string;
}

/**
 * Inserts a subscription unless the owner already holds `maxHooks` (null: limit reached). With an idempotency
 * record, the answer built by `answer` is stored in the same transaction, so a retried request after a crash
 * either sees the subscription and its answer or neither.
 */
export async function insertWebhook(db: Database, w: NewWebhook, now: Date, maxHooks: number,
  idem: { key: string; requestHash: string; answer: (row: WebhookRow) => { status: number; body: string } } | null,
): Promise<{ row: WebhookRow; body: string | null } | null> {
  return db.sql.begin(async (tx) => {
    // serialise creations per owner so two concurrent requests cannot both pass the limit
    await tx`select pg_advisory_xact_lock(hashtext('linewire:webhooks:' || ${w.ownerId}::text))`;
    const [{ n }] = await tx<{ n: string }[]>`select count(*) as n from webhooks where owner_id = ${w.ownerId}`;
    if (Number(n) >= maxHooks) return null;
    const [rec] = await tx<WebhookRecord[]>`
      insert into webhooks (public_id, owner_id, billing_key_id, variant, url, events, sport_keys, min_edge_pct, format, secret,
                            created_at, updated_at)
      values (${w.publicId}, ${w.ownerId}, ${w.billingKeyId}, ${w.variant}, ${w.url}, ${tx.array(w.events)},
              ${w.sportKeys === null ? null : tx.array(w.sportKeys)}, ${w.minEdgePct}, ${w.format}, ${w.secret}, ${now}, ${now})
      returning *`;
    const row = toRow(rec!);
    if (idem === null) return { row, body: null };
    const a = idem.answer(row);
    await tx`
      insert into idempotency_keys (owner_id, key, request_hash, status, response, created_at)
      values (${w.ownerId}, ${idem.key}, ${idem.requestHash}, ${a.status}, ${a.body}, ${now})`;
    return { row, body: a.body };
  });
}

/** The stored answer of an Idempotency-Key younger than `since`, if any. */
export async function findIdempotent(db: Database, ownerId: number, key: string, since: Date): Promise<IdempotentAnswer | null> {
  const [r] = await db.sql<{ request_hash: string; status: number; response: string }[]>`
    select request_hash, status, response from idempotency_keys
    where owner_id = ${ownerId} and key = ${key} and created_at > ${since}`;
  return r === undefined ? null : { requestHash: r.request_hash, status: r.status, response: r.response };
}

export async function expireIdempotency(db: Database, before: Date): Promise<void> {
  await db.sql`delete from idempotency_keys where created_at <= ${before}`;
}

/** Deletes up to `limit` deliveries (their attempts with them) that are final (delivered, failed, rate limited, out of
 *  credits) and were created before `before`: the outbox keeps a retention window, not every event ever sent. A
 *  delivery still on its schedule is kept whatever its age. Returns how many went. */
export async function pruneDeliveries(db: Database, before: Date, limit: number): Promise<number> {
  const rows = await db.sql`
    delete from webhook_deliveries where id in (
      select id from webhook_deliveries
      where status in ('delivered', 'failed', 'rate_limited', 'out_of_credits') and created_at < ${before}
      order by id limit ${limit})
    returning id`;
  return rows.length;
}

/** The ids of the events tracked (migration 010), for new_event across restarts. */
export async function loadTrackedEvents(db: Database): Promise<string[]> {
  const rows = await db.sql<{ event_id: string }[]>`select event_id from webhook_tracked_events`;
  return rows.map((r) => r.event_id);
}

/** Records events first seen at `now` (a second node recording one again changes nothing). */
export async function insertTrackedEvents(db: Database, ids: readonly string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  // one array parameter, so that the statement's text is the same whatever the number of events (sql/history.ts)
  await db.sql`insert into webhook_tracked_events (event_id, first_seen_at)
    select unnest(${db.sql.array([...ids])}::text[]), ${new Date(now)}
    on conflict (event_id) do nothing`;
}

/** Forgets events first seen before `before` (the outbox's retention). */
export async function pruneTrackedEvents(db: Database, before: Date): Promise<number> {
  const rows = await db.sql`delete from webhook_tracked_events where first_seen_at < ${before} returning event_id`;
  return rows.length;
}

export async function loadWebhooks(db: Database): Promise<WebhookRow[]> {
  return (await db.sql<WebhookRecord[]>`select * from webhooks order by id`).map(toRow);
}

export async function updateWebhook(db: Database, pk: number, w: Partial<Pick<WebhookRow, 'url' | 'events' | 'sportKeys' | 'minEdgePct' | 'format' | 'isActive' | 'secret'>>,
  now: Date): Promise<WebhookRow | null> {
  const set: Record<string, unknown> = { updated_at: now };
  if (w.url !== undefined) set.url = w.url;
  if (w.events !== undefined) set.events = db.sql.array(w.events);
  if (w.sportKeys !== undefined) set.sport_keys = w.sportKeys === null ? null : db.sql.array(w.sportKeys);
  if (w.minEdgePct !== undefined) set.min_edge_pct = w.minEdgePct;
  if (w.format !== undefined) set.format = w.format;
  if (w.secret !== undefined) set.secret = w.secret;
  if (w.isActive !== undefined) {
    set.is_active = w.isActive;
    // re-enabling starts the failure count afresh; disabling by hand records when
    set.consecutive_failures = 0;
    set.disabled_at = w.isActive ? null : now;
  }
  const [rec] = await db.sql<WebhookRecord[]>`update webhooks set ${db.sql(set)} where id = ${pk} returning *`;
  return rec === undefined ? null : toRow(rec);
}

export async function deleteWebhook(db: Database, pk: number): Promise<boolean> {
  const rows = await db.sql`delete from webhooks where id = ${pk} returning id`;
  return rows.length === 1;
}

export interface NewDelivery {
  deliveryId: string;
  webhookPk: number;
  eventId: string;
  eventType: string;
  body: string;
  status: 'pending' | 'rate_limited';
  /** null for a delivery recorded as final at once (rate_limited) */
  nextAttemptAt: number | null;
  /** the event's key, unique per subscription: a repeated key is skipped (two nodes that found the same event, or
   *  one node that found it again after a restart, write one row) */
  dedupe: string | null;
  /** the delivery (its delivery id) this one waits for: it is attempted only once that one is final (an
   *  arbitrage's close after the opening sent to the same subscription); null or absent for none */
  after?: string | null;
}

/** A node's claim on the rows it writes already due: it attempts them at once, no other node takes them. */
export interface Claim {
  node: string;
  /** the lease's end (ms) */
  until: number;
}

/** A check's move from one state to another (engine/webhook-events.ts CheckState), with the outbox rows of the
 *  events it produced: committed only by the node that moves the stored state from `from`, the rows with it. */
export interface Transition {
  from: string;
  state: CheckState;
  rows: NewDelivery[];
}

export interface OutboxWrite {
  /** primary keys of `rows`, in input order, -1 for rows skipped (repeated key) */
  pks: number[];
  /** primary keys (of `rows` and of the transitions' rows) claimed by the write: the writer attempts them at once */
  claimed: Set<number>;
  /** primary keys of each transition's rows; empty when another node made the transition first */
  transitions: number[][];
  /** the stored state of each check whose transition or heartbeat found another state than the node's: the node
   *  takes it over (another node moved it first) */
  adopt: CheckState[];
}

/**
 * Writes deliveries before any attempt; returns the primary keys of those inserted (a repeated dedupe key of
 * the same subscription is skipped), in input order with -1 for skipped ones. With check states (one per kind
 * and key), those are written in the same transaction: the events a check produced and the state it moved to
 * are committed together or not at all.
 */
export async function insertDeliveries(db: Database, rows: readonly NewDelivery[], now: number, states: readonly CheckState[] = []): Promise<number[]> {
  return (await writeOutbox(db, rows, now, { states })).pks;
}

/**
 * The outbox write of one flush, in one transaction when it holds check states or transitions:
 * - `rows`: inserted unless their subscription already holds their dedupe key; those already due and pending are
 *   claimed by `claim` (the writer attempts them at once);
 * - `states`: stored as given (the newest write seen never goes back);
 * - `heartbeats`: a check's state unchanged, its newest write moved on: only newest_at is written; a stored state
 *   other than the node's is returned in `adopt`;
 * - `transitions`, in order: each moves the stored state only from its `from` (compare-and-set; a missing row
 *   counts as `from` = unknown or ok); its rows are inserted only when it did. Two nodes that find the same
 *   transition therefore commit it, and announce it, once.
 */
export async function writeOutbox(db: Database, rows: readonly NewDelivery[], now: number, opts: {
  states?: readonly CheckState[]; heartbeats?: readonly CheckState[]; transitions?: readonly Transition[]; claim?: Claim | null;
}): Promise<OutboxWrite> {
  const states = opts.states ?? [];
  const heartbeats = opts.heartbeats ?? [];
  const transitions = opts.transitions ?? [];
  const claim = opts.claim ?? null;
  const claimed = new Set<number>();
  if (states.length === 0 && heartbeats.length === 0 && transitions.length === 0) {
    return { pks: await insertRows(db.sql, rows, now, claim, claimed), claimed, transitions: [], adopt: [] };
  }
  return db.sql.begin(async (tx) => {
    const adopt: CheckState[] = [];
    const done: number[][] = [];
    for (const tr of transitions) {
      const cur = await moveCheckState(tx, tr, now);
      if (cur === null) done.push(await insertRows(tx, tr.rows, now, claim, claimed));
      else {
        done.push([]);
        adopt.push(cur);
      }
    }
    const pks = await insertRows(tx, rows, now, claim, claimed);
    if (states.length > 0) await saveCheckStates(tx, states, now);
    if (heartbeats.length > 0) adopt.push(...await beatCheckStates(tx, heartbeats, now));
    return { pks, claimed, transitions: done, adopt };
  });
}

async function insertRows(sql: postgres.Sql | postgres.TransactionSql, rows: readonly NewDelivery[], now: number, claim: Claim | null,
  claimed: Set<number>): Promise<number[]> {
  if (rows.length === 0) return [];
  const batch = JSON.stringify(rows.map((r) => ({
    d: r.deliveryId, w: r.webhookPk, e: r.eventId, t: r.eventType, b: r.body, s: r.status,
    n: r.nextAttemptAt === null ? null : new Date(r.nextAttemptAt).toISOString(), k: r.dedupe, a: r.after ?? null,
    // due at once: the writer attempts it now, under its claim
    c: claim !== null && r.status === 'pending' && r.nextAttemptAt !== null && r.nextAttemptAt <= now,
  })));
  // a row waiting for another is claimed only when that one is final already; one written by this same statement is
  // not seen by it, and a poll (claimDue) takes the row once it is
  const ins = await sql<{ id: string; delivery_id: string; claimed: boolean }[]>`
    insert into webhook_deliveries (delivery_id, webhook_id, event_id, event_type, body, status, next_attempt_at, dedupe_key, created_at,
                                    claimed_by, lease_until, after_delivery)
    select v.d, v.w, v.e, v.t, v.b, v.s, v.n, v.k, ${new Date(now)},
           case when v.ok then ${claim?.node ?? null}::text end, case when v.ok then ${claim === null ? null : new Date(claim.until)}::timestamptz end, v.a
    from (
      select v.*, v.c and (v.a is null or exists (
        select 1 from webhook_deliveries p where p.delivery_id = v.a and p.status not in ('pending', 'retrying'))) as ok
      from json_to_recordset(${batch}::text::json) as v(d text, w bigint, e text, t text, b text, s text, n timestamptz, k text, c boolean, a text)
    ) v
    -- a subscription deleted since its events were queued gets none: its rows broke the foreign key, the batch was
    -- put back and tried again every 500 ms for good, and every ingest waiting on the outbox answered 503
    where exists (select 1 from webhooks w where w.id = v.w)
    on conflict (webhook_id, dedupe_key) do nothing
    returning id, delivery_id, claimed_by is not null as claimed`;
  const byId = new Map(ins.map((r) => [r.delivery_id, Number(r.id)]));
  for (const r of ins) if (r.claimed) claimed.add(Number(r.id));
  return rows.map((r) => byId.get(r.deliveryId) ?? -1);
}

async function saveCheckStates(sql: postgres.TransactionSql, states: readonly CheckState[], now: number): Promise<void> {
  const iso = (t: number | null) => (t === null || !(t > 0) ? null : new Date(t).toISOString());
  const batch = JSON.stringify(states.map((x) => ({ k: x.kind, y: x.key, s: x.state, c: iso(x.since), d: x.detail, n: iso(x.newestAt) })));
  await sql`
    insert into webhook_check_state (kind, key, state, since, detail, newest_at, updated_at)
    select v.k, v.y, v.s, v.c, v.d, v.n, ${new Date(now)}
    from json_to_recordset(${batch}::text::json) as v(k text, y text, s text, c timestamptz, d text, n timestamptz)
    on conflict (kind, key) do update
      set state = excluded.state, since = excluded.since, detail = excluded.detail, updated_at = excluded.updated_at,
          newest_at = greatest(webhook_check_state.newest_at, excluded.newest_at)`;
}

interface CheckRecord { kind: 'book' | 'parser'; key: string; state: string; since: Date | null; detail: string | null; newest_at: Date | null }

function toCheckState(r: CheckRecord): CheckState {
  return {
    kind: r.kind, key: r.key, state: r.state, since: r.since === null ? null : r.since.getTime(), detail: r.detail,
    newestAt: r.newest_at === null ? null : r.newest_at.getTime(),
  };
}

/** States a check starts from: a check with no stored row is in one of them. */
const INITIAL = new Set(['unknown', 'ok']);

/** Compare-and-set of one check: null when this call moved it (or wrote its first row), else the stored state. */
async function moveCheckState(sql: postgres.TransactionSql, tr: Transition, now: number): Promise<CheckState | null> {
  const s = tr.state;
  const iso = (t: number | null) => (t === null || !(t > 0) ? null : new Date(t));
  // the row lock taken by the update (or the unique index for the insert) makes a concurrent mover wait for this
  // transaction and then see the state it left: only one of them moves it
  const moved = await sql`
    update webhook_check_state
    set state = ${s.state}, since = ${iso(s.since)}, detail = ${s.detail}, updated_at = ${new Date(now)},
        newest_at = greatest(newest_at, ${iso(s.newestAt)})
    where kind = ${s.kind} and key = ${s.key} and state = ${tr.from}
    returning 1`;
  if (moved.length === 1) return null;
  if (INITIAL.has(tr.from)) {
    const ins = await sql`
      insert into webhook_check_state (kind, key, state, since, detail, newest_at, updated_at)
      values (${s.kind}, ${s.key}, ${s.state}, ${iso(s.since)}, ${s.detail}, ${iso(s.newestAt)}, ${new Date(now)})
      on conflict (kind, key) do nothing
      returning 1`;
    if (ins.length === 1) return null;
  }
  const [cur] = await sql<CheckRecord[]>`
    select kind, key, state, since, detail, newest_at from webhook_check_state where kind = ${s.kind} and key = ${s.key}`;
  return toCheckState(cur!);
}

/** Heartbeats: newest_at moves on (never back), the state stays; returns stored states other than the node's. */
async function beatCheckStates(sql: postgres.TransactionSql, states: readonly CheckState[], now: number): Promise<CheckState[]> {
  const iso = (t: number | null) => (t === null || !(t > 0) ? null : new Date(t).toISOString());
  const batch = JSON.stringify(states.map((x) => ({ k: x.kind, y: x.key, s: x.state, c: iso(x.since), d: x.detail, n: iso(x.newestAt) })));
  const rows = await sql<(CheckRecord & { mine: string })[]>`
    insert into webhook_check_state as c (kind, key, state, since, detail, newest_at, updated_at)
    select v.k, v.y, v.s, v.c, v.d, v.n, ${new Date(now)}
    from json_to_recordset(${batch}::text::json) as v(k text, y text, s text, c timestamptz, d text, n timestamptz)
    on conflict (kind, key) do update
      set newest_at = greatest(c.newest_at, excluded.newest_at), updated_at = excluded.updated_at
    returning c.kind, c.key, c.state, c.since, c.detail, c.newest_at`;
  const mine = new Map(states.map((x) => [`${x.kind}:${x.key}`, x.state]));
  return rows.filter((r) => mine.get(`${r.kind}:${r.key}`) !== r.state).map(toCheckState);
}

/** The checks' state as last committed (restored into the evaluator at start). */
export async function loadCheckStates(db: Database): Promise<CheckState[]> {
  const rows = await db.sql<CheckRecord[]>`select kind, key, state, since, detail, newest_at from webhook_check_state order by kind, key`;
  return rows.map(toCheckState);
}

/** Deliveries still on their schedule (pending or retrying), for the outbox backlog gauge. */
export async function outboxBacklog(db: Database): Promise<number> {
  const [{ n }] = await db.sql<{ n: string }[]>`
    select count(*) as n from webhook_deliveries where next_attempt_at is not null and status in ('pending', 'retrying')`;
  return Number(n);
}

export interface DueDelivery {
  pk: number;
  deliveryId: string;
  webhookPk: number;
  eventType: string;
  body: string;
  status: string;
  attempts: number;
}

/**
 * Claims pending and retrying deliveries of active subscriptions due at `now`, oldest first, without `exclude`:
 * those no node holds (or whose lease ran out, or that `claim.node` itself holds: its own claims from before a
 * restart) get `claim` in the statement that picks them. SKIP LOCKED: two nodes polling at once take disjoint
 * rows, neither waits for the other.
 */
/** `skipWebhooks`: subscriptions whose rows are not claimed now (at their share of the attempts in flight). */
export async function claimDue(db: Database, now: number, limit: number, exclude: readonly number[], claim: Claim,
  skipWebhooks: readonly number[] = []): Promise<DueDelivery[]> {
  const at = new Date(now);
  const rows = await db.sql<{ id: string; delivery_id: string; webhook_id: string; event_type: string; body: string; status: string; attempts: number; next_attempt_at: Date }[]>`
    update webhook_deliveries d
    set claimed_by = ${claim.node}, lease_until = ${new Date(claim.until)}
    from (
      select d.id
      from webhook_deliveries d join webhooks w on w.id = d.webhook_id
      where d.next_attempt_at is not null and d.next_attempt_at <= ${at} and w.is_active
        and d.status in ('pending', 'retrying')
        and (d.claimed_by is null or d.lease_until <= ${at} or d.claimed_by = ${claim.node})
        and not (d.id = any(${exclude.map(String)}::bigint[]))
        and not (d.webhook_id = any(${skipWebhooks.map(String)}::bigint[]))
        -- after the delivery it waits for is final (one never written, e.g. skipped as a repeat, holds nothing)
        and (d.after_delivery is null or not exists (
          select 1 from webhook_deliveries p where p.delivery_id = d.after_delivery and p.status in ('pending', 'retrying')))
      order by d.next_attempt_at, d.id
      limit ${limit}
      for update of d skip locked
    ) due
    where d.id = due.id
    returning d.id, d.delivery_id, d.webhook_id, d.event_type, d.body, d.status, d.attempts, d.next_attempt_at`;
  rows.sort((x, y) => x.next_attempt_at.getTime() - y.next_attempt_at.getTime() || Number(x.id) - Number(y.id));
  return rows.map((r) => ({
    pk: Number(r.id), deliveryId: r.delivery_id, webhookPk: Number(r.webhook_id), eventType: r.event_type, body: r.body,
    status: r.status, attempts: r.attempts,
  }));
}

/** Extends the node's leases on `pks` to `until`; returns those it still holds (a lease that ran out may have been
 *  taken by another node). */
export async function renewClaims(db: Database, pks: readonly number[], claim: Claim): Promise<Set<number>> {
  if (pks.length === 0) return new Set();
  const rows = await db.sql<{ id: string }[]>`
    update webhook_deliveries set lease_until = ${new Date(claim.until)}
    where claimed_by = ${claim.node} and id = any(${pks.map(String)}::bigint[])
    returning id`;
  return new Set(rows.map((r) => Number(r.id)));
}

/** Gives up the node's claims on `pks` (a clean shutdown: another node takes them at once). */
export async function releaseClaims(db: Database, pks: readonly number[], node: string): Promise<void> {
  if (pks.length === 0) return;
  await db.sql`
    update webhook_deliveries set claimed_by = null, lease_until = null
    where claimed_by = ${node} and id = any(${pks.map(String)}::bigint[])`;
}

/** First attempts scheduled after `from` (ms), in order, per subscription: the rate limiter's starts after a restart. */
export async function scheduledStarts(db: Database, from: number): Promise<{ webhookPk: number; at: number }[]> {
  const rows = await db.sql<{ webhook_id: string; at: Date }[]>`
    select webhook_id, next_attempt_at as at
    from webhook_deliveries
    where next_attempt_at > ${new Date(from)} and attempts = 0
    order by next_attempt_at, id`;
  return rows.map((r) => ({ webhookPk: Number(r.webhook_id), at: r.at.getTime() }));
}

export interface AttemptResult {
  deliveryPk: number;
  webhookPk: number;
  number: number;
  attemptedAt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** the delivery's new status; null keeps it (a failed replay) */
  status: 'delivered' | 'retrying' | 'failed' | 'out_of_credits' | null;
  nextAttemptAt: number | null;
  /** the schedule's attempt count after this one; null keeps it (a replay, recorded as one) */
  attempts: number | null;
  /** effect on the subscription's consecutive total failures */
  failures: 'reset' | 'inc' | 'none';
  /** false for an out_of_credits record: no request was made, no attempt row */
  attempted: boolean;
}

export interface RecordOutcome {
  disabled: DisabledHook[];
  /** consecutive total failures of every subscription whose count this batch changed */
  failures: { webhookPk: number; count: number }[];
}

export interface DisabledHook {
  webhookPk: number;
  ownerId: number;
  url: string;
  email: string | null;
}

/**
 * Records a batch of attempt outcomes in one transaction: the attempts, the deliveries' new states, the
 * subscriptions' consecutive-failure counts, and the subscriptions that reach `disableAfter` deactivated with a
 * notification row each (returned, for the cache and the mailer). The claims `node` held on the deliveries end.
 */
export async function recordResults(db: Database, results: readonly AttemptResult[], disableAfter: number, now: number, node = ''): Promise<RecordOutcome> {
  if (results.length === 0) return { disabled: [], failures: [] };
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  const attempts = JSON.stringify(results.filter((r) => r.attempted).map((r) => ({
    p: r.deliveryPk, n: r.number, a: iso(r.attemptedAt), c: r.statusCode, m: r.durationMs, e: r.error, r: r.attempts === null,
  })));
  const deliveries = JSON.stringify(results.map((r) => ({
    p: r.deliveryPk, s: r.status, n: iso(r.nextAttemptAt), k: r.attempts, d: r.status === 'delivered' ? iso(r.attemptedAt) : null,
  })));
  // per subscription, in batch order: whether a success reset the count, and the failures after the last reset
  const hooks = new Map<number, { reset: boolean; inc: number }>();
  for (const r of results) {
    if (r.failures === 'none') continue;
    let h = hooks.get(r.webhookPk);
    if (h === undefined) hooks.set(r.webhookPk, (h = { reset: false, inc: 0 }));
    if (r.failures === 'reset') {
      h.reset = true;
      h.inc = 0;
    } else h.inc++;
  }
  const counts = JSON.stringify([...hooks].map(([w, h]) => ({ w, r: h.reset, i: h.inc })));
  return db.sql.begin(async (tx) => {
    await tx`
      insert into webhook_attempts (delivery_pk, number, attempted_at, status_code, duration_ms, error, replay)
      -- numbered after every record so far: a scheduled attempt after a replay (its place in the schedule is below
      -- the replay's number) overwrote the replay's record
      select v.p, greatest(v.n, coalesce((select max(x.number) from webhook_attempts x where x.delivery_pk = v.p), 0) + 1), v.a, v.c, v.m, v.e, v.r
      from json_to_recordset(${attempts}::text::json) as v(p bigint, n int, a timestamptz, c int, m double precision, e text, r boolean)
      -- a subscription deleted while its attempt was in flight took its deliveries with it
      where exists (select 1 from webhook_deliveries d where d.id = v.p)
      on conflict (delivery_pk, number) do update
        set attempted_at = excluded.attempted_at, status_code = excluded.status_code, duration_ms = excluded.duration_ms, error = excluded.error`;
    // a delivered delivery stays delivered (a late failed replay or a duplicate result cannot undo it)
    await tx`
      update webhook_deliveries d
      set status = case when d.status = 'delivered' or v.s is null then d.status else v.s end,
          next_attempt_at = case when d.status = 'delivered' or v.s is null then d.next_attempt_at else v.n end,
          attempts = coalesce(v.k, d.attempts),
          delivered_at = coalesce(d.delivered_at, v.d),
          -- the outcome ends the node's claim (not another node's, taken after this one's lease ran out)
          claimed_by = case when d.claimed_by = ${node} then null else d.claimed_by end,
          lease_until = case when d.claimed_by = ${node} then null else d.lease_until end
      from json_to_recordset(${deliveries}::text::json) as v(p bigint, s text, n timestamptz, k int, d timestamptz)
      where d.id = v.p`;
    if (hooks.size === 0) return { disabled: [], failures: [] };
    const failures = await tx<{ id: string; consecutive_failures: number }[]>`
      update webhooks w
      set consecutive_failures = case when v.r then v.i else w.consecutive_failures + v.i end
      from json_to_recordset(${counts}::text::json) as v(w bigint, r boolean, i int)
      where w.id = v.w
      returning w.id, w.consecutive_failures`;
    const disabled = await tx<{ id: string; owner_id: string; url: string; email: string | null }[]>`
      update webhooks w
      set is_active = false, disabled_at = ${new Date(now)}, updated_at = ${new Date(now)}
      from api_keys k join accounts a on a.id = k.account_id
      where w.id = any(${[...hooks.keys()].map(String)}::bigint[]) and w.is_active and w.consecutive_failures >= ${disableAfter}
        and k.id = w.billing_key_id
      returning w.id, w.owner_id, w.url, a.email`;
    const out: DisabledHook[] = disabled.map((d) => ({ webhookPk: Number(d.id), ownerId: Number(d.owner_id), url: d.url, email: d.email }));
    for (const d of out) {
      await tx`
        insert into notifications (owner_id, channel, recipient, subject, body, created_at)
        values (${d.ownerId}, 'email', ${d.email}, ${'Webhook ' + d.webhookPk + ' disabled after repeated delivery failures'},
                ${notificationBody(d, disableAfter)}, ${new Date(now)})`;
    }
    return { disabled: out, failures: failures.map((f) => ({ webhookPk: Number(f.id), count: f.consecutive_failures })) };
  });
}

function notificationBody(d: DisabledHook, n: number): string {
  return `Your webhook ${d.webhookPk} (${d.url}) failed ${n} deliveries in a row, each after every retry, and has been ` +
    `deactivated: no further deliveries are made. Fix the receiving end, then re-enable it with ` +
    `PATCH /v1/webhooks/${d.webhookPk} {"is_active": true}. Its recent deliveries are listed at ` +
    `GET /v1/webhooks/${d.webhookPk}/deliveries.`;
}

export interface NotificationRow {
  id: number;
  ownerId: number;
  recipient: string | null;
  subject: string;
  body: string;
  sentAt: Date | null;
  error: string | null;
}

export async function unsentNotifications(db: Database): Promise<NotificationRow[]> {
  const rows = await db.sql<{ id: string; owner_id: string; recipient: string | null; subject: string; body: string; sent_at: Date | null; error: string | null }[]>`
    select * from notifications where sent_at is null and recipient is not null and error is null order by id limit 100`;
  return rows.map((r) => ({ id: Number(r.id), ownerId: Number(r.owner_id), recipient: r.recipient, subject: r.subject, body: r.body, sentAt: r.sent_at, error: r.error }));
}

export async function markNotification(db: Database, id: number, sentAt: number | null, error: string | null): Promise<void> {
  await db.sql`update notifications set sent_at = ${sentAt === null ? null : new Date(sentAt)}, error = ${error} where id = ${id}`;
}

export interface DeliveryRow {
  pk: number;
  deliveryId: string;
  eventId: string;
  eventType: string;
  body: string;
  status: string;
  attempts: number;
  createdAt: Date;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  /** every attempt, numbered in the order made; `replay`: made by POST .../replay */
  tries: { number: number; attempted_at: string; status_code: number | null; duration_ms: number; error: string | null; replay: boolean }[];
}

type DeliveryRecord = {
  id: string; delivery_id: string; event_id: string; event_type: string; body: string; status: string; attempts: number;
  created_at: Date; next_attempt_at: Date | null; delivered_at: Date | null; tries: DeliveryRow['tries'] | string | null;
};

function toDelivery(r: DeliveryRecord): DeliveryRow {
  const tries = typeof r.tries === 'string' ? JSON.parse(r.tries) as DeliveryRow['tries'] : r.tries ?? [];
  return {
    pk: Number(r.id), deliveryId: r.delivery_id, eventId: r.event_id, eventType: r.event_type, body: r.body, status: r.status,
    attempts: r.attempts, createdAt: r.created_at, nextAttemptAt: r.next_attempt_at, deliveredAt: r.delivered_at, tries,
  };
}

/** A page of a subscription's deliveries, newest first, each with its attempts; one extra row tells `more`. */
export async function listDeliveries(db: Database, webhookPk: number, limit: number, offset: number, status: string | null): Promise<DeliveryRow[]> {
  const rows = await db.sql<DeliveryRecord[]>`
    select d.*, (
      select coalesce(json_agg(json_build_object('number', a.number, 'attempted_at', a.attempted_at, 'status_code', a.status_code,
                                                 'duration_ms', a.duration_ms, 'error', a.error, 'replay', a.replay)
                                       order by a.number), '[]'::json)::text
      from webhook_attempts a where a.delivery_pk = d.id) as tries
    from webhook_deliveries d
    where d.webhook_id = ${webhookPk} and (${status}::text is null or d.status = ${status}::text)
    order by d.id desc
    limit ${limit} offset ${offset}`;
  return rows.map(toDelivery);
}

export async function getDelivery(db: Database, webhookPk: number, deliveryId: string): Promise<DeliveryRow | null> {
  const [r] = await db.sql<DeliveryRecord[]>`
    select d.*, (
      select coalesce(json_agg(json_build_object('number', a.number, 'attempted_at', a.attempted_at, 'status_code', a.status_code,
                                                 'duration_ms', a.duration_ms, 'error', a.error, 'replay', a.replay)
                                       order by a.number), '[]'::json)::text
      from webhook_attempts a where a.delivery_pk = d.id) as tries
    from webhook_deliveries d where d.webhook_id = ${webhookPk} and d.delivery_id = ${deliveryId}`;
  return r === undefined ? null : toDelivery(r);
}
