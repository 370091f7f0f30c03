// Accounts, their per-endpoint usage and their one-time login tokens: every SQL statement touching accounts,
// account_usage or login_tokens lives here. Balances are authoritative in memory (http/accounts.ts) and written
// here by saveMeter, at least every second and at shutdown.

import { isTier, type Tier } from '../engine/tiers.js';
import type { Database } from './connection.js';

export interface AccountRow {
  id: number;
  email: string | null;
  tier: Tier;
  creditsRemaining: number;
  creditsUsed: number;
  periodStart: Date;
  periodEnd: Date;
  paymentCustomerId: string | null;
  paymentSubscriptionId: string | null;
  claimedAt: Date | null;
  createdAt: Date;
  lastRequestAt: Date | null;
}

interface AccountRecord {
  id: string;
  email: string | null;
  tier: string;
  credits_remaining: string;
  credits_used: string;
  period_start: Date;
  period_end: Date;
  payment_customer_id: string | null;
  payment_subscription_id: string | null;
  claimed_at: Date | null;
  created_at: Date;
  last_request_at: Date | null;
}

export async function loadAccounts(db: Database): Promise<AccountRow[]> {
  const recs = await db.sql<AccountRecord[]>`select * from accounts order by id`;
  return recs.map(toAccountRow);
}

export async function findAccount(db: Database, id: number): Promise<AccountRow | null> {
  const [rec] = await db.sql<AccountRecord[]>`select * from accounts where id = ${id}`;
  return rec === undefined ? null : toAccountRow(rec);
}

export interface UsageRow {
  accountId: number;
  periodStart: Date;
  endpoint: string;
  calls: number;
  credits: number;
}

/** The usage rows of each account's current period. */
export async function loadCurrentUsage(db: Database): Promise<UsageRow[]> {
  const recs = await db.sql<{ account_id: string; period_start: Date; endpoint: string; calls: string; credits: string }[]>`
    select u.* from account_usage u join accounts a on a.id = u.account_id and a.period_start = u.period_start`;
  return recs.map((r) => ({ accountId: Number(r.account_id), periodStart: r.period_start, endpoint: r.endpoint, calls: Number(r.calls), credits: Number(r.credits) }));
}

export interface AccountUpdate {
  id: number;
  tier: Tier;
  creditsRemaining: number;
  creditsUsed: number;
  periodStart: Date;
  periodEnd: Date;
  lastRequestAt: Date | null;
}

export interface KeyTouch {
  id: number;
  lastRequestAt: Date;
}

/**
 * Writes the meter in one transaction of three statements whatever the batch size: account balances, tiers and
 * periods; per-endpoint usage (absolute values of the period); keys' last request times. Each batch travels as
 * one JSON parameter, so the statement text is fixed (prepared once) and no batch can hit the protocol's
 * 65,535-parameter limit. last_request_at never moves backwards. A negative balance violates the check
 * constraint and fails the whole transaction.
 */
export async function saveMeter(db: Database, accounts: readonly AccountUpdate[], usage: readonly UsageRow[], keys: readonly KeyTouch[]): Promise<void> {
  if (accounts.length === 0 && usage.length === 0 && keys.length === 0) return;
  const a = JSON.stringify(accounts.map((r) => ({
    i: r.id, t: r.tier, r: r.creditsRemaining, u: r.creditsUsed, s: r.periodStart.toISOString(), e: r.periodEnd.toISOString(),
    l: r.lastRequestAt === null ? null : r.lastRequestAt.toISOString(),
  })));
  const u = JSON.stringify(usage.map((r) => ({ i: r.accountId, s: r.periodStart.toISOString(), p: r.endpoint, c: r.calls, k: r.credits })));
  const k = JSON.stringify(keys.map((r) => ({ i: r.id, l: r.lastRequestAt.toISOString() })));
  await db.sql.begin(async (tx) => {
    // ::text first: given a bare json parameter, postgres.js would JSON-encode the string a second time.
    if (accounts.length > 0) {
      await tx`
        update accounts as a
        set tier = v.t, credits_remaining = v.r, credits_used = v.u, period_start = v.s, period_end = v.e,
            last_request_at = greatest(a.last_request_at, v.l)
        from json_to_recordset(${a}::text::json) as v(i bigint, t text, r bigint, u bigint, s timestamptz, e timestamptz, l timestamptz)
        where a.id = v.i`;
    }
    if (usage.length > 0) {
      await tx`
        insert into account_usage (account_id, period_start, endpoint, calls, credits)
        select v.i, v.s, v.p, v.c, v.k from json_to_recordset(${u}::text::json) as v(i bigint, s timestamptz, p text, c bigint, k bigint)
        on conflict (account_id, period_start, endpoint) do update set calls = excluded.calls, credits = excluded.credits`;
    }
    if (keys.length > 0) {
      await tx`
        update api_keys as k set last_request_at = greatest(k.last_request_at, v.l)
        from json_to_recordset(${k}::text::json) as v(i bigint, l timestamptz)
        where k.id = v.i`;
    }
  });
}

/** Sets the payment-provider ids of an account (admin); undefined leaves a field as it is. */
export async function setPaymentIds(db: Database, id: number, customer: string | null | undefined, subscription: string | null | undefined): Promise<void> {
  if (customer !== undefined) await db.sql`update accounts set payment_customer_id = ${customer} where id = ${id}`;
  if (subscription !== undefined) await db.sql`update accounts set payment_subscription_id = ${subscription} where id = ${id}`;
}

export async function markClaimed(db: Database, id: number, at: number): Promise<void> {
  await db.sql`update accounts set claimed_at = coalesce(claimed_at, ${new Date(at)}) where id = ${id}`;
}

export type TokenPurpose = 'login' | 'claim';

/**
 * Records a one-time token (only its hash), or with a null account the request for an address that has no
 * account (token_hash null): both cases are one insert, so both answers cost the same.
 */
export async function recordToken(db: Database, t: { accountId: number | null; purpose: TokenPurpose; tokenHash: string | null; emailHash: string; now: number; ttlMs: number }): Promise<void> {
  await db.sql`
    insert into login_tokens (account_id, purpose, token_hash, email_hash, created_at, expires_at)
    values (${t.accountId}, ${t.purpose}, ${t.tokenHash}, ${t.emailHash}, ${new Date(t.now)}, ${new Date(t.now + t.ttlMs)})`;
}

/** Requests recorded for this address hash since `since` (a bound on mails per address). */
export async function countTokenRequests(db: Database, emailHash: string, since: number): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from login_tokens where email_hash = ${emailHash} and created_at > ${new Date(since)}`;
  return row!.n;
}

/** Uses a token of this purpose once: its account, or null when unknown, used, expired or of another purpose. */
export async function consumeToken(db: Database, tokenHash: string, purpose: TokenPurpose, now: number): Promise<{ accountId: number } | null> {
  const [row] = await db.sql<{ account_id: string }[]>`
    update login_tokens set used_at = ${new Date(now)}
    where token_hash = ${tokenHash} and purpose = ${purpose} and used_at is null and expires_at > ${new Date(now)}
      and account_id is not null
    returning account_id`;
  return row === undefined ? null : { accountId: Number(row.account_id) };
}

function toAccountRow(r: AccountRecord): AccountRow {
  if (!isTier(r.tier)) throw new Error(`account ${r.id} has unknown tier ${JSON.stringify(r.tier)}`);
  return {
    id: Number(r.id), email: r.email, tier: r.tier, creditsRemaining: Number(r.credits_remaining), creditsUsed: Number(r.credits_used),
    periodStart: r.period_start, periodEnd: r.period_end, paymentCustomerId: r.payment_customer_id,
    paymentSubscriptionId: r.payment_subscription_id, claimedAt: r.claimed_at, createdAt: r.created_at, lastRequestAt: r.last_request_at,
  };
}
