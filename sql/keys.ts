// API keys and settings: every SQL statement touching api_keys or settings lives here. A key belongs to an
// account (sql/accounts.ts owns the balances). Only sha256(key) is stored; the plaintext key exists once, in
// createKey's return value.

import { createHash, randomBytes } from 'node:crypto';
import { TIER_CREDITS, isTier, type Tier } from '../engine/tiers.js';
import type postgres from 'postgres';
import type { Database } from './connection.js';

export { TIER_CREDITS, isTier, type Tier };

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** `lw_` followed by 32 lowercase hex characters (128 random bits). */
export function generateKey(): string {
  return 'lw_' + randomBytes(16).toString('hex');
}

/** A key with the account it belongs to (the account's tier, balance and period). */
export interface KeyRow {
  id: number;
  keyHash: string;
  prefix: string;
  accountId: number;
  tier: Tier;
  email: string | null;
  creditsRemaining: number;
  creditsUsed: number;
  periodStart: Date;
  periodEnd: Date;
  createdAt: Date;
  lastRequestAt: Date | null;
  revoked: boolean;
  /** made by a holder of the account's e-mail (a magic-link login), the operator, or a verified key; not by a sign-up */
  verified: boolean;
}

/** api_keys joined with accounts as postgres.js returns it: bigint columns arrive as strings. */
interface KeyRecord {
  id: string;
  key_hash: string;
  prefix: string;
  account_id: string;
  tier: string;
  email: string | null;
  credits_remaining: string;
  credits_used: string;
  period_start: Date;
  period_end: Date;
  created_at: Date;
  last_request_at: Date | null;
  revoked_at: Date | null;
  verified: boolean;
}

export const PREFIX_LENGTH = 8;

export interface CreateKeyOptions {
  tier: Tier;
  /** opening balance; default the tier's monthly allowance */
  credits?: number;
  email?: string | null;
  /** a chosen key (e.g. from an environment variable); default a generated one */
  key?: string;
  /** add the key to this account instead of opening a new one (tier, credits and email are then ignored) */
  accountId?: number;
  /** start of the first billing period (epoch ms); default the database clock */
  now?: number;
  intendedUse?: string | null;
  agentId?: string | null;
  /** false for a self-serve sign-up's key (api_keys.verified); default true */
  verified?: boolean;
}

/**
 * Opens an account with one key (or, with `accountId`, adds a key to an account). The first period lasts one
 * month from `now`. Inserting a key that already exists, or an account whose e-mail is taken (case-insensitive),
 * fails with the driver's unique-violation error (code 23505).
 */
export async function createKey(db: Database, opts: CreateKeyOptions): Promise<{ key: string; row: KeyRow }> {
  const key = opts.key ?? generateKey();
  if (key.length === 0) throw new Error('key must not be empty');
  const hash = hashKey(key);
  const prefix = key.slice(0, PREFIX_LENGTH);
  const at = opts.now === undefined ? null : new Date(opts.now);
  if (opts.accountId !== undefined) {
    const rec = await insertAccountKey(db.sql, hash, prefix, opts.accountId, at, opts.verified ?? true);
    if (rec === undefined) throw new Error(`no account ${opts.accountId}`);
    return { key, row: toKeyRow(rec) };
  }
  if (!isTier(opts.tier)) throw new Error(`unknown tier ${JSON.stringify(opts.tier)}`);
  const credits = opts.credits ?? TIER_CREDITS[opts.tier];
  if (!Number.isSafeInteger(credits) || credits < 0) throw new Error(`credits must be a non-negative integer, got ${credits}`);
  const [rec] = await db.sql<KeyRecord[]>`
    with a as (
      insert into accounts (email, tier, credits_remaining, period_start, period_end, intended_use, agent_id, created_at)
      values (${opts.email ?? null}, ${opts.tier}, ${credits}, coalesce(${at}::timestamptz, now()),
              coalesce(${at}::timestamptz, now()) + interval '1 month', ${opts.intendedUse ?? null}, ${opts.agentId ?? null},
              coalesce(${at}::timestamptz, now()))
      returning *),
    k as (
      insert into api_keys (key_hash, prefix, account_id, created_at, verified)
      select ${hash}, ${prefix}, a.id, a.created_at, ${opts.verified ?? true} from a
      returning *)
    select k.id, k.key_hash, k.prefix, k.account_id, k.created_at, k.last_request_at, k.revoked_at, k.verified,
           a.tier, a.email, a.credits_remaining, a.credits_used, a.period_start, a.period_end
    from k join a on a.id = k.account_id`;
  return { key, row: toKeyRow(rec!) };
}

/** Adds a key to an account unless it holds `maxActive` active keys already (null then). Creations for one account
 *  are serialised by a transaction lock, so concurrent requests cannot all pass the count (each node of a cluster
 *  too: the lock is the database's). */
export async function createKeyWithin(db: Database, accountId: number, maxActive: number, now?: number, verified = true): Promise<{ key: string; row: KeyRow } | null> {
  const key = generateKey();
  const at = now === undefined ? null : new Date(now);
  return db.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('linewire:keys:' || ${accountId}::text))`;
    const [{ n }] = await tx<{ n: string }[]>`select count(*) as n from api_keys where account_id = ${accountId} and revoked_at is null`;
    if (Number(n) >= maxActive) return null;
    const rec = await insertAccountKey(tx, hashKey(key), key.slice(0, PREFIX_LENGTH), accountId, at, verified);
    if (rec === undefined) throw new Error(`no account ${accountId}`);
    return { key, row: toKeyRow(rec) };
  });
}

async function insertAccountKey(sql: postgres.Sql | postgres.TransactionSql, hash: string, prefix: string, accountId: number, at: Date | null,
  verified: boolean): Promise<KeyRecord | undefined> {
  const [rec] = await sql<KeyRecord[]>`
    with k as (
      insert into api_keys (key_hash, prefix, account_id, created_at, verified)
      values (${hash}, ${prefix}, ${accountId}, coalesce(${at}::timestamptz, now()), ${verified})
      returning *)
    select k.id, k.key_hash, k.prefix, k.account_id, k.created_at, k.last_request_at, k.revoked_at, k.verified,
           a.tier, a.email, a.credits_remaining, a.credits_used, a.period_start, a.period_end
    from k join accounts a on a.id = k.account_id`;
  return rec;
}

const SELECT_KEYS = `
  select k.id, k.key_hash, k.prefix, k.account_id, k.created_at, k.last_request_at, k.revoked_at, k.verified,
         a.tier, a.email, a.credits_remaining, a.credits_used, a.period_start, a.period_end
  from api_keys k join accounts a on a.id = k.account_id`;

/** Every key, revoked ones included (marked `revoked`), in creation order. */
export async function loadKeys(db: Database): Promise<KeyRow[]> {
  const recs = await db.sql.unsafe<KeyRecord[]>(`${SELECT_KEYS} order by k.id`);
  return recs.map(toKeyRow);
}

/** The key with this hash, revoked or not (see `revoked`). */
export async function findKeyByHash(db: Database, hash: string): Promise<KeyRow | null> {
  const [rec] = await db.sql.unsafe<KeyRecord[]>(`${SELECT_KEYS} where k.key_hash = $1`, [hash]);
  return rec ? toKeyRow(rec) : null;
}

/** Marks a key revoked (once); the revocation time, or null when no such key (of that account) exists. */
export async function revokeKey(db: Database, keyId: number, accountId: number | null, now: number): Promise<Date | null> {
  const [row] = await db.sql<{ revoked_at: Date }[]>`
    update api_keys set revoked_at = coalesce(revoked_at, ${new Date(now)})
    where id = ${keyId} and (${accountId}::bigint is null or account_id = ${accountId})
    returning revoked_at`;
  return row === undefined ? null : row.revoked_at;
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
  if (!isTier(r.tier)) throw new Error(`account ${r.account_id} has unknown tier ${JSON.stringify(r.tier)}`);
  return {
    id: Number(r.id),
    keyHash: r.key_hash,
    prefix: r.prefix,
    accountId: Number(r.account_id),
    tier: r.tier,
    email: r.email,
    creditsRemaining: Number(r.credits_remaining),
    creditsUsed: Number(r.credits_used),
    periodStart: r.period_start,
    periodEnd: r.period_end,
    createdAt: r.created_at,
    lastRequestAt: r.last_request_at,
    verified: r.verified,
    revoked: r.revoked_at !== null,
  };
}
