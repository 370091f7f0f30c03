// API keys and credits on the hot path: keys are resolved from memory, credits are reserved in memory before a
// handler runs and refunded if it fails, and balances are written to PostgreSQL in one statement every second
// and at shutdown (a crash loses at most the last second of charges: README "Credits").

import { timingSafeEqual } from 'node:crypto';
import type { Database } from '../sql/connection.js';
import { createKey, hashKey, loadKeys, saveBalances, findKeyByHash, type KeyRow, type Tier } from '../sql/keys.js';

/** Free keys are capped at this many requests per second (SPEC Limits). */
export const FREE_RPS = 60;

export class KeyState {
  dirty = false;
  lastRequestAt = 0;
  /** free-tier rate window: the second counted and requests in it */
  windowSecond = 0;
  windowCount = 0;
  constructor(
    readonly id: number,
    readonly hash: string,
    readonly tier: Tier,
    public remaining: number,
    public used: number,
    readonly periodEnd: number,
  ) {}
}

export class Accounts {
  private readonly byHash = new Map<string, KeyState>();
  /** plaintext key to state, so a hot key is not hashed on every request; bounded */
  private readonly byKey = new Map<string, KeyState>();
  private readonly byId = new Map<number, KeyState>();
  private adminHash: Buffer | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(private readonly db: Database) {}

  async load(): Promise<void> {
    for (const row of await loadKeys(this.db)) this.add(row);
  }

  private add(row: KeyRow): KeyState {
    const st = new KeyState(row.id, row.keyHash, row.tier, row.creditsRemaining, row.creditsUsed, row.periodEnd.getTime());
    st.lastRequestAt = row.lastRequestAt?.getTime() ?? 0;
    this.byHash.set(row.keyHash, st);
    this.byId.set(row.id, st);
    return st;
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

  resolve(key: string): KeyState | null {
    const hit = this.byKey.get(key);
    if (hit !== undefined) return hit;
    const st = this.byHash.get(hashKey(key));
    if (st === undefined) return null;
    if (this.byKey.size >= 10_000) this.byKey.clear();
    this.byKey.set(key, st);
    return st;
  }

  /** A key by its id (webhook deliveries bill the key that owns the subscription). */
  keyById(id: number): KeyState | undefined {
    return this.byId.get(id);
  }

  /** Takes `cost` credits if the balance covers them. Never lets a balance go below zero. */
  reserve(k: KeyState, cost: number, now: number): boolean {
    if (cost > k.remaining) return false;
    k.remaining -= cost;
    k.used += cost;
    k.lastRequestAt = now;
    k.dirty = true;
    return true;
  }

  refund(k: KeyState, cost: number): void {
    k.remaining += cost;
    k.used -= cost;
    k.dirty = true;
  }

  /** 0 when the request may proceed, else the seconds to wait (free tier only). */
  rateLimit(k: KeyState, now: number): number {
    if (k.tier !== 'free') return 0;
    const second = Math.floor(now / 1000);
    if (second !== k.windowSecond) {
      k.windowSecond = second;
      k.windowCount = 0;
    }
    if (k.windowCount >= FREE_RPS) return 1;
    k.windowCount++;
    return 0;
  }

  async create(opts: { tier: Tier; credits?: number; email?: string | null; key?: string }): Promise<{ key: string; state: KeyState }> {
    const { key, row } = await createKey(this.db, opts);
    return { key, state: this.add(row) };
  }

  /** Loads a key that another process created (e.g. admin tooling), if it exists. */
  async refresh(key: string): Promise<KeyState | null> {
    const row = await findKeyByHash(this.db, hashKey(key));
    return row === null ? null : this.add(row);
  }

  startFlushing(intervalMs = 1000): void {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  /** Writes every changed balance in one statement. */
  flush(): Promise<void> {
    if (this.flushing !== null) return this.flushing.then(() => this.flush());
    const states: KeyState[] = [];
    for (const k of this.byHash.values()) if (k.dirty) states.push(k);
    if (states.length === 0) return Promise.resolve();
    const rows = states.map((k) => {
      k.dirty = false;
      return { id: k.id, creditsRemaining: k.remaining, creditsUsed: k.used, lastRequestAt: k.lastRequestAt ? new Date(k.lastRequestAt) : null };
    });
    this.flushing = saveBalances(this.db, rows)
      .catch((e: unknown) => {
        for (const k of states) k.dirty = true;
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
