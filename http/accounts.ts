// Accounts, their keys and credits on the hot path. Keys are resolved from memory; credits are reserved in
// memory (per account: every key of an account draws on one balance) before a handler runs and refunded if it
// fails; a balance is renewed to its tier's allowance when its billing period ends (checked on use, against the
// injected clock). Balances, periods, per-endpoint usage and keys' last request times are written to PostgreSQL in
// one transaction every second and at shutdown: a crash loses at most the last second of charges (README
// "Accounts and metering").

import { timingSafeEqual } from 'node:crypto';
import { addMonths, periodAt, tierDef, TIER_CREDITS, type Tier } from '../engine/tiers.js';
import { loadAccounts, loadCurrentUsage, saveMeter, setPaymentIds, markClaimed, type AccountRow, type AccountUpdate, type KeyTouch, type UsageRow } from '../sql/accounts.js';
import type { Database } from '../sql/connection.js';
import { createKey, findKeyByHash, hashKey, loadKeys, revokeKey, type KeyRow } from '../sql/keys.js';

/** Calls and credits of one endpoint template in the account's current period. */
export class UsageCell {
  calls = 0;
  credits = 0;
  dirty = false;
}

export class AccountState {
  dirty = false;
  lastRequestAt = 0;
  /** per-second cap window: the second counted and requests in it */
  windowSecond = 0;
  windowCount = 0;
  readonly usage = new Map<string, UsageCell>();
  readonly keys: KeyState[] = [];
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

  constructor(private readonly db: Database, private readonly now: () => number = Date.now) {}

  async load(): Promise<void> {
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
    for (const [endpoint, c] of a.usage) {
      if (c.dirty) this.pendingUsage.push({ accountId: a.id, periodStart: new Date(a.periodStart), endpoint, calls: c.calls, credits: c.credits });
    }
    a.usage.clear();
    a.periodStart = start;
    a.periodEnd = end;
    a.remaining = TIER_CREDITS[a.tier];
    a.used = 0;
    a.dirty = true;
  }

  /** Takes `cost` credits if the balance covers them. Never lets a balance go below zero. */
  reserve(k: KeyState, cost: number, now: number): boolean {
    const a = k.account;
    this.renew(a, now);
    if (cost > a.remaining) return false;
    a.remaining -= cost;
    a.used += cost;
    a.lastRequestAt = now;
    a.dirty = true;
    k.lastRequestAt = now;
    k.dirty = true;
    return true;
  }

  refund(k: KeyState, cost: number): void {
    const a = k.account;
    a.remaining += cost;
    a.used -= cost;
    a.dirty = true;
  }

  /** Counts a delivered call (or webhook event) and its credits under its endpoint template, for /v1/usage. */
  recordUsage(k: KeyState, endpoint: string, credits: number): void {
    const c = this.cell(k.account, endpoint);
    c.calls++;
    c.credits += credits;
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
    const second = Math.floor(now / 1000);
    if (second !== a.windowSecond) {
      a.windowSecond = second;
      a.windowCount = 0;
    }
    if (a.windowCount >= cap) return 1;
    a.windowCount++;
    return 0;
  }

  /** Opens an account with one key (its first period starts now), or adds a key to `accountId`. */
  async create(opts: { tier: Tier; credits?: number; email?: string | null; key?: string; accountId?: number; intendedUse?: string | null; agentId?: string | null }): Promise<{ key: string; state: KeyState }> {
    const { key, row } = await createKey(this.db, { ...opts, now: this.now() });
    const state = this.addKey(row);
    this.onKeyChange?.({ op: 'created', hash: row.keyHash });
    return { key, state };
  }

  /** Loads a key another node made, by its hash (CLUSTER=1); null when it is unknown or revoked. */
  async adopt(hash: string): Promise<KeyState | null> {
    const row = await findKeyByHash(this.db, hash);
    if (row === null || row.revoked) return null;
    return this.addKey(row);
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

  /** Writes every changed balance, usage counter and key's last request time in one transaction. */
  flush(): Promise<void> {
    if (this.flushing !== null) return this.flushing.then(() => this.flush());
    const accounts: AccountState[] = [];
    const cells: UsageCell[] = [];
    const keys: KeyState[] = [];
    const usage = this.pendingUsage;
    this.pendingUsage = [];
    for (const a of this.accounts.values()) {
      if (a.dirty) accounts.push(a);
      for (const [endpoint, c] of a.usage) {
        if (!c.dirty) continue;
        cells.push(c);
        usage.push({ accountId: a.id, periodStart: new Date(a.periodStart), endpoint, calls: c.calls, credits: c.credits });
      }
      for (const k of a.keys) if (k.dirty) keys.push(k);
    }
    if (accounts.length === 0 && usage.length === 0 && keys.length === 0) return Promise.resolve();
    const rows: AccountUpdate[] = accounts.map((a) => {
      a.dirty = false;
      return {
        id: a.id, tier: a.tier, creditsRemaining: a.remaining, creditsUsed: a.used, periodStart: new Date(a.periodStart),
        periodEnd: new Date(a.periodEnd), lastRequestAt: a.lastRequestAt ? new Date(a.lastRequestAt) : null,
      };
    });
    for (const c of cells) c.dirty = false;
    const touches: KeyTouch[] = keys.map((k) => {
      k.dirty = false;
      return { id: k.id, lastRequestAt: new Date(k.lastRequestAt) };
    });
    this.flushing = saveMeter(this.db, rows, usage, touches)
      .catch((e: unknown) => {
        for (const a of accounts) a.dirty = true;
        for (const c of cells) c.dirty = true;
        for (const k of keys) k.dirty = true;
        // rows of ended periods are not held by any cell any more: keep them for the next write
        this.pendingUsage.push(...usage.filter((u) => isEnded(u, this.accounts)));
        throw e;
      })
      .finally(() => { this.flushing = null; });
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.flush();
  }
}

function isEnded(u: UsageRow, accounts: Map<number, AccountState>): boolean {
  const a = accounts.get(u.accountId);
  return a === undefined || a.periodStart !== u.periodStart.getTime();
}

export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}
