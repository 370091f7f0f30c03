// Accounts, their keys and credits on the hot path. Keys are resolved from memory; credits are reserved in
// memory (per account: every key of an account draws on one balance) before a handler runs and refunded if it
// fails; a balance is renewed to its tier's allowance when its billing period ends (checked on use, against the
// injected clock). The changes to balances, periods, per-endpoint usage and keys' last request times are added to
// PostgreSQL in one transaction every second and at shutdown: a crash loses at most the last second of charges
// (README "Accounts and metering"). Charges travel as deltas, so nodes of a cluster sharing the database charge one
// balance; at each write a node reads back the balances any node changed since its last read, so it sees the
// others' spend within a second (README "Cluster: what is claimed how").

import { timingSafeEqual } from 'node:crypto';
import { addMonths, periodAt, tierDef, TIER_CREDITS, type Tier } from '../engine/tiers.js';
import {
  databaseNow, loadAccounts, loadCurrentUsage, meteredSince, saveMeter, setPaymentIds, markClaimed, type AccountRow, type AccountUpdate,
  type Balance, type KeyTouch, type UsageRow,
} from '../sql/accounts.js';
import type { Database } from '../sql/connection.js';
import { createKey, createKeyWithin, findKeyByHash, hashKey, loadKeys, revokeKey, type KeyRow } from '../sql/keys.js';

/** Calls and credits of one endpoint template in the account's current period. */
export class UsageCell {
  calls = 0;
  credits = 0;
  /** counted since the last write (the write adds them) */
  newCalls = 0;
  newCredits = 0;
  dirty = false;
}

export class AccountState {
  dirty = false;
  lastRequestAt = 0;
  /** the per-second cap's last `cap` request times, a ring from recentHead (free tier only; empty otherwise) */
  recent: number[] = [];
  recentHead = 0;
  readonly usage = new Map<string, UsageCell>();
  readonly keys: KeyState[] = [];
  /** credits charged (net of refunds) and granted since the last write: what the next write adds */
  newUsed = 0;
  newGranted = 0;
  /** the balance this node started the current period with (renewal, tier change) until written; -1: none */
  startedWith = -1;
  /** credits held for calls and webhook attempts in flight (reserve, hold): taken from `remaining` so the balance is
   *  never overdrawn, but neither `used` nor written until the answer or attempt is delivered, so a process that dies
   *  mid-call has charged nothing for it (a webhook delivery is attempted again after the restart and charged then) */
  held = 0;
  constructor(
    readonly id: number,
    public email: string | null,
    public tier: Tier,
    public remaining: number,
    public used: number,
    public periodStart: number,
    public periodEnd: number,
    public paymentCustomerId: string | null,
    public paymentSubscriptionId: string | null,
    public claimedAt: number,
    readonly createdAt: number,
  ) {}
}

export class KeyState {
  dirty = false;
  lastRequestAt = 0;
  revoked = false;
  /** made by a holder of the account's e-mail, the operator or a verified key (sql/keys.ts KeyRow.verified) */
  verified = true;
  constructor(
    readonly id: number,
    readonly hash: string,
    readonly prefix: string,
    readonly account: AccountState,
    readonly createdAt: number,
  ) {}

  get tier(): Tier {
    return this.account.tier;
  }

  get remaining(): number {
    return this.account.remaining;
  }

  /** credits charged in the period (not those held for calls and webhook attempts in flight, though `remaining`
   *  is without them already) */
  get used(): number {
    return this.account.used;
  }
}

export class Accounts {
  private readonly byHash = new Map<string, KeyState>();
  /** plaintext key to state, so a hot key is not hashed on every request; bounded */
  private readonly byKey = new Map<string, KeyState>();
  private readonly byId = new Map<number, KeyState>();
  private readonly accounts = new Map<number, AccountState>();
  private readonly byEmail = new Map<string, AccountState>();
  /** usage of periods that ended before it was written */
  private pendingUsage: UsageRow[] = [];
  private adminHash: Buffer | null = null;
  /** told of every key made or revoked here (CLUSTER=1: the other nodes adopt or drop it, http/key-sync.ts) */
  onKeyChange: ((change: { op: 'created'; hash: string } | { op: 'revoked'; id: number }) => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** the database's clock at the last read of other nodes' changes (null: embedded, no other node) */
  private readSince: Date | null = null;

  constructor(private readonly db: Database, private readonly now: () => number = Date.now) {}

  async load(): Promise<void> {
    // an embedded database is one process's: there is no other node to read back from
    if (this.db.kind !== 'embedded') this.readSince = await databaseNow(this.db);
    for (const row of await loadAccounts(this.db)) this.addAccount(row);
    for (const row of await loadKeys(this.db)) this.addKey(row);
    for (const u of await loadCurrentUsage(this.db)) {
      const a = this.accounts.get(u.accountId);
      if (a === undefined) continue;
      const cell = this.cell(a, u.endpoint);
      cell.calls = u.calls;
      cell.credits = u.credits;
    }
  }

  private addAccount(row: AccountRow): AccountState {
    const a = new AccountState(row.id, row.email, row.tier, row.creditsRemaining, row.creditsUsed, row.periodStart.getTime(),
      row.periodEnd.getTime(), row.paymentCustomerId, row.paymentSubscriptionId, row.claimedAt?.getTime() ?? 0, row.createdAt.getTime());
    a.lastRequestAt = row.lastRequestAt?.getTime() ?? 0;
    this.accounts.set(a.id, a);
    if (a.email !== null) this.byEmail.set(normalEmail(a.email), a);
    return a;
  }

  private addKey(row: KeyRow): KeyState {
    let a = this.accounts.get(row.accountId);
    if (a === undefined) {
      a = this.addAccount({
        id: row.accountId, email: row.email, tier: row.tier, creditsRemaining: row.creditsRemaining, creditsUsed: row.creditsUsed,
        periodStart: row.periodStart, periodEnd: row.periodEnd, paymentCustomerId: null, paymentSubscriptionId: null, claimedAt: null,
        createdAt: row.createdAt, lastRequestAt: null,
      });
    }
    const existing = this.byId.get(row.id);
    if (existing !== undefined) return existing;
    const k = new KeyState(row.id, row.keyHash, row.prefix, a, row.createdAt.getTime());
    k.verified = row.verified;
    k.lastRequestAt = row.lastRequestAt?.getTime() ?? 0;
    k.revoked = row.revoked;
    a.keys.push(k);
    this.byId.set(k.id, k);
    if (!k.revoked) this.byHash.set(k.hash, k);
    return k;
  }

  setAdminKey(key: string): void {
    this.adminHash = Buffer.from(hashKey(key), 'hex');
  }

  setAdminHash(hash: string): void {
    this.adminHash = Buffer.from(hash, 'hex');
  }

  isAdmin(key: string): boolean {
    if (this.adminHash === null) return false;
    return timingSafeEqual(Buffer.from(hashKey(key), 'hex'), this.adminHash);
  }

  /** The key's state, or null when it is unknown or revoked. */
  resolve(key: string): KeyState | null {
    const hit = this.byKey.get(key);
    if (hit !== undefined) return hit.revoked ? null : hit;
    const st = this.byHash.get(hashKey(key));
    if (st === undefined) return null;
    if (this.byKey.size >= 10_000) this.byKey.clear();
    this.byKey.set(key, st);
    return st;
  }

  /** A key by its id, revoked or not (webhook deliveries bill the account of the key that created them). */
  keyById(id: number): KeyState | undefined {
    return this.byId.get(id);
  }

  account(id: number): AccountState | undefined {
    return this.accounts.get(id);
  }

  accountByEmail(email: string): AccountState | undefined {
    return this.byEmail.get(normalEmail(email));
  }

  /** Accounts in id order (optionally those whose e-mail contains `email`), a page of them and the total. */
  list(limit: number, offset: number, email: string | null): { total: number; items: AccountState[] } {
    let all = [...this.accounts.values()];
    if (email !== null) {
      const e = normalEmail(email);
      all = all.filter((a) => a.email !== null && normalEmail(a.email).includes(e));
    }
    all.sort((x, y) => x.id - y.id);
    return { total: all.length, items: all.slice(offset, offset + limit) };
  }

  /**
   * Starts the next billing period when the current one is over at `now`: the balance becomes the tier's
   * allowance and the usage counters start again (the ended period's are kept for the next write).
   */
  renew(a: AccountState, now: number): boolean {
    if (now < a.periodEnd) return false;
    const next = periodAt(a.periodEnd, now)!;
    this.startPeriod(a, next.start, next.end);
    return true;
  }

  private startPeriod(a: AccountState, start: number, end: number): void {
    this.endUsage(a);
    a.periodStart = start;
    a.periodEnd = end;
    a.remaining = Math.max(0, TIER_CREDITS[a.tier] - a.held);
    a.used = 0;
    a.newUsed = 0;
    a.newGranted = 0;
    a.startedWith = TIER_CREDITS[a.tier];
    a.dirty = true;
  }

  /** The usage counted in the period ending is kept for the next write; the cells start again. */
  private endUsage(a: AccountState): void {
    for (const [endpoint, c] of a.usage) {
      if (c.dirty) this.pendingUsage.push({ accountId: a.id, periodStart: new Date(a.periodStart), endpoint, calls: c.newCalls, credits: c.newCredits });
    }
    a.usage.clear();
  }

  /**
   * Holds a call's credits (never below zero): taken from the balance, not yet charged, as a webhook attempt's are
   * (hold). settle() charges them once the answer is delivered, refund() gives them back. Charged at once, they
   * reached the database with the next second's write while the call ran, and a process killed before the refund
   * of a failed or abandoned call was written kept them charged. A call costing more than is left, with some left,
   * is served for what is left, so the balance (X-RateLimit-Remaining) reaches 0 before any call is refused (SPEC:
   * it "reaches 0 just before OUT_OF_USAGE_CREDITS"; a 10-credit call was refused with 5 shown left). Returns the
   * credits held, or -1 when the call is refused (nothing left and the call has a price).
   */
  reserveUpTo(k: KeyState, cost: number, now: number): number {
    const a = k.account;
    this.renew(a, now);
    const take = Math.min(cost, a.remaining);
    if (cost > 0 && take === 0) return -1;
    a.remaining -= take;
    a.held += take;
    k.lastRequestAt = now;
    k.dirty = true;
    return take;
  }

  /** A call's reserved `cost` is delivered: counted as used and written with the next meter write (a call of 0
   *  credits moves the account's last request time). */
  settle(k: KeyState, cost: number, now: number): void {
    k.account.held -= cost;
    this.charge(k.account, cost, now);
  }

  /** A call that costs nothing was answered: the key's and the account's last request time move. */
  touch(k: KeyState, now: number): void {
    k.lastRequestAt = now;
    k.dirty = true;
    k.account.lastRequestAt = now;
    k.account.dirty = true;
  }

  /** Whether the call would be served (reserveUpTo), taking nothing (a HEAD answers with the status its GET would have). */
  affords(k: KeyState, cost: number, now: number): boolean {
    this.renew(k.account, now);
    return cost === 0 || k.account.remaining > 0;
  }

  /** Holds `cost` credits for a webhook attempt if the balance covers them: taken from the balance, not yet charged
   *  (AccountState.held). settleHold() charges or releases them. */
  hold(k: KeyState, cost: number, now: number): boolean {
    if (!this.take(k.account, cost, now)) return false;
    k.account.held += cost;
    return true;
  }

  /** Ends a hold: `charged` (the attempt delivered) counts the credits as used and writes them, else they return. */
  settleHold(k: KeyState, cost: number, charged: boolean, now: number): void {
    const a = k.account;
    a.held -= cost;
    if (charged) this.charge(a, cost, now);
    else a.remaining += cost;
  }

  /** `cost` off the balance of the current period if it covers them */
  private take(a: AccountState, cost: number, now: number): boolean {
    this.renew(a, now);
    if (cost > a.remaining) return false;
    a.remaining -= cost;
    return true;
  }

  /** `cost`, already off the balance, counted as used and written with the next meter write */
  private charge(a: AccountState, cost: number, now: number): void {
    a.used += cost;
    a.newUsed += cost;
    a.lastRequestAt = now;
    a.dirty = true;
  }

  /** A call's reserved `cost` is not delivered (it failed, or its client left): back to the balance. Held credits
   *  outlive a period's end (the new period's balance was started without them), so they return to whichever
   *  period is current: nothing over the allowance, no negative use. */
  refund(k: KeyState, cost: number): void {
    if (cost === 0) return;
    k.account.held -= cost;
    k.account.remaining += cost;
  }

  /** Counts a delivered call (or webhook event) and its credits under its endpoint template, for /v1/usage. */
  recordUsage(k: KeyState, endpoint: string, credits: number): void {
    const c = this.cell(k.account, endpoint);
    c.calls++;
    c.credits += credits;
    c.newCalls++;
    c.newCredits += credits;
    c.dirty = true;
  }

  private cell(a: AccountState, endpoint: string): UsageCell {
    let c = a.usage.get(endpoint);
    if (c === undefined) a.usage.set(endpoint, (c = new UsageCell()));
    return c;
  }

  /**
   * 0 when the request may proceed, else the seconds to wait (tiers with a per-second cap: free). Also renews an
   * ended period, so every keyed answer shows the current period's balance.
   */
  rateLimit(k: KeyState, now: number): number {
    const a = k.account;
    this.renew(a, now);
    const cap = tierDef(a.tier).requestsPerSecond;
    if (cap === 0) return 0;
    // any second, not per clock second: 60 at x.95 and 60 more at (x+1).02 passed when seconds were counted apart
    const r = a.recent;
    if (r.length > cap) {
      a.recent = [];
      a.recentHead = 0;
      return this.rateLimit(k, now);
    }
    if (r.length < cap) {
      r.push(now);
      return 0;
    }
    const oldest = r[a.recentHead];
    if (now - oldest < 1000) return Math.max(1, Math.ceil((oldest + 1000 - now) / 1000));
    r[a.recentHead] = now;
    a.recentHead = (a.recentHead + 1) % cap;
    return 0;
  }

  /** Opens an account with one key (its first period starts now), or adds a key to `accountId`. */
  async create(opts: { tier: Tier; credits?: number; email?: string | null; key?: string; accountId?: number; intendedUse?: string | null; agentId?: string | null;
    verified?: boolean; }): Promise<{ key: string; state: KeyState }> {
    const { key, row } = await createKey(this.db, { ...opts, now: this.now() });
    const state = this.addKey(row);
    this.onKeyChange?.({ op: 'created', hash: row.keyHash });
    return { key, state };
  }

  /** Whether `k` may make and revoke the account's keys: a key of a self-serve sign-up (anyone can sign up with any
   *  address) may until the account holds a verified key (the address's holder logged in by its mailed link); from
   *  then on only verified keys may, so a stranger who signed up with someone's address cannot revoke theirs. */
  managesKeys(k: KeyState): boolean {
    return k.verified || !k.account.keys.some((o) => o.verified && !o.revoked);
  }

  /** Adds a key to an account unless it holds `maxActive` active keys (null then), checked in the database so that
   *  concurrent requests cannot pass the count together. */
  async createWithin(accountId: number, maxActive: number, verified = true): Promise<{ key: string; state: KeyState } | null> {
    const made = await createKeyWithin(this.db, accountId, maxActive, this.now(), verified);
    if (made === null) return null;
    const state = this.addKey(made.row);
    this.onKeyChange?.({ op: 'created', hash: made.row.keyHash });
    return { key: made.key, state };
  }

  /** Loads a key another node made, by its hash (CLUSTER=1); null when it is unknown or revoked. */
  async adopt(hash: string): Promise<KeyState | null> {
    const row = await findKeyByHash(this.db, hash);
    if (row === null || row.revoked) return null;
    return this.addKey(row);
  }

  /** Reads every key again (CLUSTER=1, after a NATS outage: the announcements sent meanwhile were missed): adds the
   *  keys made since, drops those revoked since. The cluster audit found a node back from an outage still serving a
   *  key revoked during it, 9 minutes on, and refusing one made during it. */
  async resync(): Promise<void> {
    for (const row of await loadKeys(this.db)) {
      const k = this.byId.get(row.id);
      if (k === undefined) {
        if (!row.revoked) this.addKey(row);
      } else if (row.revoked && !k.revoked) this.dropKey(k);
    }
  }

  /** Drops a key another node revoked (CLUSTER=1). */
  forget(keyId: number): void {
    const k = this.byId.get(keyId);
    if (k !== undefined) this.dropKey(k);
  }

  private dropKey(k: KeyState): void {
    k.revoked = true;
    this.byHash.delete(k.hash);
    for (const [plain, st] of this.byKey) if (st === k) this.byKey.delete(plain);
  }

  /** Loads a key that another process created (e.g. admin tooling), if it exists and is not revoked. */
  async refresh(key: string): Promise<KeyState | null> {
    const row = await findKeyByHash(this.db, hashKey(key));
    if (row === null || row.revoked) return null;
    return this.addKey(row);
  }

  /** Revokes a key at once (of `accountId` only, when given); false when there is no such key. */
  async revoke(keyId: number, accountId: number | null): Promise<KeyState | null> {
    const k = this.byId.get(keyId);
    if (k === undefined || (accountId !== null && k.account.id !== accountId)) return null;
    const at = await revokeKey(this.db, keyId, accountId, this.now());
    if (at === null) return null;
    this.dropKey(k);
    this.onKeyChange?.({ op: 'revoked', id: keyId });
    return k;
  }

  /** Moves an account to another tier: a new period starts now with the new tier's full allowance. */
  async setTier(a: AccountState, tier: Tier): Promise<void> {
    const now = this.now();
    a.tier = tier;
    this.startPeriod(a, now, addMonths(now, 1));
    await this.flush();
  }

  /** Adds credits to the current period's balance. */
  async grant(a: AccountState, credits: number): Promise<void> {
    a.remaining += credits;
    a.newGranted += credits;
    a.dirty = true;
    await this.flush();
  }

  async setPayment(a: AccountState, customer: string | null | undefined, subscription: string | null | undefined): Promise<void> {
    await setPaymentIds(this.db, a.id, customer, subscription);
    if (customer !== undefined) a.paymentCustomerId = customer;
    if (subscription !== undefined) a.paymentSubscriptionId = subscription;
  }

  async claim(a: AccountState): Promise<void> {
    const now = this.now();
    await markClaimed(this.db, a.id, now);
    if (a.claimedAt === 0) a.claimedAt = now;
  }

  startFlushing(intervalMs = 1000): void {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  /** Adds every changed balance, usage counter and key's last request time in one transaction, then takes in the
   *  balances other nodes changed since the last read (not with an embedded database: it has no other node). */
  flush(): Promise<void> {
    if (this.flushing !== null) return this.flushing.then(() => this.flush());
    const accounts: AccountState[] = [];
    const keys: KeyState[] = [];
    const ended = this.pendingUsage;
    this.pendingUsage = [];
    const cellUsage: UsageRow[] = [];
    for (const a of this.accounts.values()) {
      if (a.dirty) accounts.push(a);
      for (const [endpoint, c] of a.usage) {
        if (!c.dirty) continue;
        cellUsage.push({ accountId: a.id, periodStart: new Date(a.periodStart), endpoint, calls: c.newCalls, credits: c.newCredits });
        c.dirty = false;
        c.newCalls = 0;
        c.newCredits = 0;
      }
      for (const k of a.keys) if (k.dirty) keys.push(k);
    }
    if (accounts.length === 0 && ended.length === 0 && cellUsage.length === 0 && keys.length === 0 && this.readSince === null) {
      return Promise.resolve();
    }
    // the deltas leave the states as they are taken: what is counted during the write goes to the next one
    const rows: AccountUpdate[] = accounts.map((a) => {
      const row: AccountUpdate = {
        id: a.id, tier: a.tier, used: a.newUsed, granted: a.newGranted, periodStart: new Date(a.periodStart),
        periodEnd: new Date(a.periodEnd), allowance: a.startedWith >= 0 ? a.startedWith : null,
        lastRequestAt: a.lastRequestAt ? new Date(a.lastRequestAt) : null,
      };
      a.dirty = false;
      a.newUsed = 0;
      a.newGranted = 0;
      a.startedWith = -1;
      return row;
    });
    const touches: KeyTouch[] = keys.map((k) => {
      k.dirty = false;
      return { id: k.id, lastRequestAt: new Date(k.lastRequestAt) };
    });
    this.flushing = (async () => {
      let written;
      try {
        written = await saveMeter(this.db, rows, ended.concat(cellUsage), touches);
      } catch (e) {
        this.restore(accounts, rows, cellUsage, ended, keys);
        throw e;
      }
      this.takeIn(written.balances, written.usage);
      if (this.readSince !== null) {
        // a margin for writes committed after our last read began: a balance read twice is taken in twice, harmlessly
        const read = await meteredSince(this.db, new Date(this.readSince.getTime() - READ_MARGIN_MS));
        this.readSince = read.at;
        this.takeIn(read.balances, read.usage);
      }
    })().finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** A failed write added nothing: its deltas go back for the next one (those of a period that ended meanwhile go
   *  to the ended periods' rows; balance deltas of an ended period are dropped, as the database would drop them). */
  private restore(accounts: AccountState[], rows: AccountUpdate[], cellUsage: UsageRow[], ended: UsageRow[], keys: KeyState[]): void {
    rows.forEach((r, i) => {
      const a = accounts[i];
      a.dirty = true;
      if (a.periodStart !== r.periodStart.getTime()) return;
      a.newUsed += r.used;
      a.newGranted += r.granted;
      if (r.allowance !== null && a.startedWith < 0) a.startedWith = r.allowance;
    });
    for (const u of cellUsage) {
      const a = this.accounts.get(u.accountId);
      if (a === undefined || a.periodStart !== u.periodStart.getTime()) {
        this.pendingUsage.push(u);
        continue;
      }
      const c = this.cell(a, u.endpoint);
      c.newCalls += u.calls;
      c.newCredits += u.credits;
      c.dirty = true;
    }
    this.pendingUsage.push(...ended);
    for (const k of keys) k.dirty = true;
  }

  /**
   * Balances and usage as stored: the node's own changes not yet written are kept on top. A newer stored period
   * (another node renewed it, an admin changed the tier elsewhere) replaces the node's; the node's changes of the
   * ended period are dropped, as the database drops them.
   */
  private takeIn(balances: readonly Balance[], usage: readonly UsageRow[]): void {
    for (const b of balances) {
      const a = this.accounts.get(b.id);
      if (a === undefined) continue;
      const start = b.periodStart.getTime();
      // this node started a newer period, not written yet
      if (start < a.periodStart || a.startedWith >= 0) continue;
      if (start > a.periodStart) {
        this.endUsage(a);
        a.tier = b.tier;
        a.periodStart = start;
        a.periodEnd = b.periodEnd.getTime();
        a.newUsed = 0;
        a.newGranted = 0;
      }
      a.remaining = Math.max(0, b.creditsRemaining - a.newUsed + a.newGranted - a.held);
      a.used = b.creditsUsed + a.newUsed;
    }
    for (const u of usage) {
      const a = this.accounts.get(u.accountId);
      if (a === undefined || a.periodStart !== u.periodStart.getTime()) continue;
      const c = this.cell(a, u.endpoint);
      c.calls = u.calls + c.newCalls;
      c.credits = u.credits + c.newCredits;
    }
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.flush();
  }
}

/** how far back each read of other nodes' balances reaches before the last one (writes commit after they stamp) */
const READ_MARGIN_MS = 5000;

export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}
