// API keys, credit balances and settings: every SQL statement touching api_keys or settings lives here.
// Only sha256(key) is stored; the plaintext key exists once, in createKey's return value.

import { createHash, randomBytes } from 'node:crypto';
import type { Database } from './connection.js';

export type Tier = 'free' | 'starter' | 'pro' | 'business' | 'enterprise' | 'scale';

/** Monthly credit allowance per tier (DESIGN.md section 3). */
export const TIER_CREDITS: Record<Tier, number> = {
  free: 1_000,
  starter: 20_000,
  pro: 100_000,
  business: 1_000_000,
  enterprise: 5_000_000,
  scale: 50_000_000,
};

export function isTier(s: string): s is Tier {
  return Object.prototype.hasOwnProperty.call(TIER_CREDITS, s);
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** `lw_` followed by 32 lowercase hex characters (128 random bits). */
export function generateKey(): string {
  return 'lw_' + randomBytes(16).toString('hex');
}

export interface KeyRow {
  id: number;
  keyHash: string;
  prefix: string;
  tier: Tier;
  email: string | null;
  creditsRemaining: number;
  creditsUsed: number;
  periodStart: Date;
  periodEnd: Date;
  lastRequestAt: Date | null;
  revoked: boolean;
}

export interface BalanceUpdate {
  id: number;
  creditsRemaining: number;
  creditsUsed: number;
  lastRequestAt: Date | null;
}

/** api_keys as postgres.js returns it: bigint columns arrive as strings. */
interface KeyRecord {
  id: string;
  key_hash: string;
  prefix: string;
  tier: string;
  email: string | null;
  credits_remaining: string;
  credits_used: string;
  period_start: Date;
  period_end: Date;
  last_request_at: Date | null;
  revoked_at: Date | null;
}

const PREFIX_LENGTH = 8;

/**
 * Inserts a key with `credits` (default: the tier's monthly allowance) for a period of one month from now.
 * `key` inserts a chosen key (e.g. from an environment variable); inserting a key that already exists fails
 * with the driver's unique-violation error (code 23505), so look it up with findKeyByHash first.
 */
export async function createKey(
  db: Database,
  opts: { tier: Tier; credits?: number; email?: string | null; key?: string },
): Promise<{ key: string; row: KeyRow }> {
  if (!isTier(opts.tier)) throw new Error(`unknown tier ${JSON.stringify(opts.tier)}`);
  const credits = opts.credits ?? TIER_CREDITS[opts.tier];
  if (!Number.isSafeInteger(credits) || credits < 0) throw new Error(`credits must be a non-negative integer, got ${credits}`);
  const key = opts.key ?? generateKey();
  if (key.length === 0) throw new Error('key must not be empty');
  const [rec] = await db.sql<KeyRecord[]>`
    insert into api_keys (key_hash, prefix, tier, email, credits_remaining, period_end)
    values (${hashKey(key)}, ${key.slice(0, PREFIX_LENGTH)}, ${opts.tier}, ${opts.email ?? null}, ${credits},
            now() + interval '1 month')
    returning *`;
  return { key, row: toKeyRow(rec!) };
}

/** Every key not revoked, in creation order. */
export async function loadKeys(db: Database): Promise<KeyRow[]> {
  const recs = await db.sql<KeyRecord[]>`select * from api_keys where revoked_at is null order by id`;
  return recs.map(toKeyRow);
}

/** The key with this hash, revoked or not (see `revoked`). */
export async function findKeyByHash(db: Database, hash: string): Promise<KeyRow | null> {
  const [rec] = await db.sql<KeyRecord[]>`select * from api_keys where key_hash = ${hash}`;
  return rec ? toKeyRow(rec) : null;
}

/**
 * Writes the in-memory balances of many keys in one statement (one entry per id). The batch travels as one
 * JSON parameter: the statement text stays fixed whatever the batch size, so it is prepared once, and no
 * batch can hit the protocol's 65,535-parameter limit as a VALUES list would. last_request_at never moves
 * backwards and a null leaves it as it is. A negative balance violates the check constraint and fails the
 * whole batch.
 */
export async function saveBalances(db: Database, rows: readonly BalanceUpdate[]): Promise<void> {
  if (rows.length === 0) return;
  const batch = JSON.stringify(
    rows.map((r) => ({
      i: r.id,
      r: r.creditsRemaining,
      u: r.creditsUsed,
      t: r.lastRequestAt === null ? null : r.lastRequestAt.toISOString(),
    })),
  );
  // ::text first: given a bare json parameter, postgres.js would JSON-encode the string a second time.
  await db.sql`
    update api_keys as k
    set credits_remaining = v.r,
        credits_used = v.u,
        last_request_at = greatest(k.last_request_at, v.t)
    from json_to_recordset(${batch}::text::json) as v(i bigint, r bigint, u bigint, t timestamptz)
    where k.id = v.i`;
}

export async function getSetting(db: Database, name: string): Promise<string | null> {
  const [row] = await db.sql<{ value: string }[]>`select value from settings where name = ${name}`;
  return row ? row.value : null;
}

export async function setSetting(db: Database, name: string, value: string): Promise<void> {
  await db.sql`
    insert into settings (name, value) values (${name}, ${value})
    on conflict (name) do update set value = excluded.value, updated_at = now()`;
}

/** Inserts the setting unless it exists; true when this call inserted it. */
export async function setSettingIfAbsent(db: Database, name: string, value: string): Promise<boolean> {
  const rows = await db.sql`
    insert into settings (name, value) values (${name}, ${value})
    on conflict (name) do nothing
    returning name`;
  return rows.length === 1;
}

function toKeyRow(r: KeyRecord): KeyRow {
  if (!isTier(r.tier)) throw new Error(`api_keys row ${r.id} has unknown tier ${JSON.stringify(r.tier)}`);
  return {
    id: Number(r.id),
    keyHash: r.key_hash,
    prefix: r.prefix,
    tier: r.tier,
    email: r.email,
    creditsRemaining: Number(r.credits_remaining),
    creditsUsed: Number(r.credits_used),
    periodStart: r.period_start,
    periodEnd: r.period_end,
    lastRequestAt: r.last_request_at,
    revoked: r.revoked_at !== null,
  };
}
