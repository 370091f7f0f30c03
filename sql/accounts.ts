// Accounts, their per-endpoint usage and their one-time login tokens: every SQL statement touching accounts,
// account_usage or login_tokens lives here. Balances are kept in memory on the hot path (http/accounts.ts); their
// changes are added here by saveMeter, at least every second and at shutdown, and the balances other nodes of a
// cluster changed are read back by meteredSince.

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

/** One account's meter since its last write: deltas, never absolute values, so nodes sharing the database add up. */
export interface AccountUpdate {
  id: number;
  tier: Tier;
  /** credits charged since the last write, net of refunds (negative when refunds of written charges outweigh) */
  used: number;
  /** credits granted since the last write */
  granted: number;
  periodStart: Date;
  periodEnd: Date;
  /** set when this node started the period (renewal, tier change): its balance at the start. The stored period,
   *  tier and balance become this one's when it is newer than the stored period; a node that renews the same
   *  period later only adds its deltas */
  allowance: number | null;
  lastRequestAt: Date | null;
}

export interface KeyTouch {
  id: number;
  lastRequestAt: Date;
}

/** An account's stored balance and period, as a write left it or a reload found it. */
export interface Balance {
  id: number;
  tier: Tier;
  creditsRemaining: number;
  creditsUsed: number;
  periodStart: Date;
  periodEnd: Date;
}

interface BalanceRecord { id: string; tier: string; credits_remaining: string; credits_used: string; period_start: Date; period_end: Date }

function toBalance(r: BalanceRecord): Balance {
  if (!isTier(r.tier)) throw new Error(`account ${r.id} has unknown tier ${JSON.stringify(r.tier)}`);
  return {
    id: Number(r.id), tier: r.tier, creditsRemaining: Number(r.credits_remaining), creditsUsed: Number(r.credits_used),
    periodStart: r.period_start, periodEnd: r.period_end,
  };
}

interface UsageRecord { account_id: string; period_start: Date; endpoint: string; calls: string; credits: string }

function toUsage(r: UsageRecord): UsageRow {
  return { accountId: Number(r.account_id), periodStart: r.period_start, endpoint: r.endpoint, calls: Number(r.calls), credits: Number(r.credits) };
}

/**
 * Writes the meter in one transaction of three statements whatever the batch size, as deltas added to what is
 * stored (`credits_used = credits_used + $delta`): several nodes charging one account add up, none overwrites
 * another's charges. Balances: charges and grants of the stored period are added (the balance stops at zero:
 * nodes that each spent what they saw can together overshoot it, and credits_used still counts every charge);
 * a period started by the writer replaces an older stored one; deltas of a period older than the stored one
 * are dropped (it ended; another node or an admin started the next). Per-endpoint usage: calls and credits are
 * added. Keys' last request times never move backwards. Each batch travels as one JSON parameter, so the
 * statement text is fixed (prepared once) and no batch can hit the protocol's 65,535-parameter limit. Returns
 * the written accounts' balances and usage rows as stored after the write.
 */
export async function saveMeter(db: Database, accounts: readonly AccountUpdate[], usage: readonly UsageRow[], keys: readonly KeyTouch[]): Promise<{ balances: Balance[]; usage: UsageRow[] }> {
  if (accounts.length === 0 && usage.length === 0 && keys.length === 0) return { balances: [], usage: [] };
  const a = JSON.stringify(accounts.map((r) => ({
    i: r.id, t: r.tier, u: r.used, g: r.granted, s: r.periodStart.toISOString(), e: r.periodEnd.toISOString(), n: r.allowance,
    l: r.lastRequestAt === null ? null : r.lastRequestAt.toISOString(),
  })));
  const u = JSON.stringify(usage.map((r) => ({ i: r.accountId, s: r.periodStart.toISOString(), p: r.endpoint, c: r.calls, k: r.credits })));
  const k = JSON.stringify(keys.map((r) => ({ i: r.id, l: r.lastRequestAt.toISOString() })));
  return db.sql.begin(async (tx) => {
    let balances: Balance[] = [];
    let usageOut: UsageRow[] = [];
    // ::text first: given a bare json parameter, postgres.js would JSON-encode the string a second time. Every
    // expression of the SET list reads the row as it was: `newer` is decided on the stored period, to the millisecond
    // as the nodes' clocks give it.
    if (accounts.length > 0) {
      const recs = await tx<BalanceRecord[]>`
        update accounts as a
        set tier = case when v.n is not null and v.s > date_trunc('milliseconds', a.period_start) then v.t else a.tier end,
            -- written when it is the stored one too: now() keeps microseconds, the node's clock milliseconds
            period_start = case when v.s = date_trunc('milliseconds', a.period_start)
                                  or (v.n is not null and v.s > date_trunc('milliseconds', a.period_start)) then v.s
                                else a.period_start end,
            period_end = case when v.n is not null and v.s > date_trunc('milliseconds', a.period_start) then v.e else a.period_end end,
            credits_remaining = case
              when v.n is not null and v.s > date_trunc('milliseconds', a.period_start) then greatest(0, v.n - v.u + v.g)
              when v.s = date_trunc('milliseconds', a.period_start) then greatest(0, a.credits_remaining - v.u + v.g)
              else a.credits_remaining end,
            credits_used = case
              when v.n is not null and v.s > date_trunc('milliseconds', a.period_start) then greatest(0, v.u)
              when v.s = date_trunc('milliseconds', a.period_start) then greatest(0, a.credits_used + v.u)
              else a.credits_used end,
            last_request_at = greatest(a.last_request_at, v.l),
            metered_at = clock_timestamp()
        from json_to_recordset(${a}::text::json) as v(i bigint, t text, u bigint, g bigint, s timestamptz, e timestamptz, n bigint, l timestamptz)
        where a.id = v.i
        returning a.id, a.tier, a.credits_remaining, a.credits_used, a.period_start, a.period_end`;
      balances = recs.map(toBalance);
    }
    if (usage.length > 0) {
      const recs = await tx<UsageRecord[]>`
        insert into account_usage as x (account_id, period_start, endpoint, calls, credits)
        select v.i, v.s, v.p, v.c, v.k from json_to_recordset(${u}::text::json) as v(i bigint, s timestamptz, p text, c bigint, k bigint)
        on conflict (account_id, period_start, endpoint) do update
          set calls = greatest(0, x.calls + excluded.calls), credits = greatest(0, x.credits + excluded.credits)
        returning x.account_id, x.period_start, x.endpoint, x.calls, x.credits`;
      usageOut = recs.map(toUsage);
    }
    if (keys.length > 0) {
      await tx`
        update api_keys as k set last_request_at = greatest(k.last_request_at, v.l)
        from json_to_recordset(${k}::text::json) as v(i bigint, l timestamptz)
        where k.id = v.i`;
    }
    return { balances, usage: usageOut };
  });
}

/**
 * Balances metered since `since` (the database's clock) by any node, with the usage rows of their current
 * periods, and the database's clock now (the next call's `since`, less a margin for writes committed late).
 */
export async function meteredSince(db: Database, since: Date): Promise<{ at: Date; balances: Balance[]; usage: UsageRow[] }> {
  return db.sql.begin(async (tx) => {
    const [{ at }] = await tx<{ at: Date }[]>`select clock_timestamp() as at`;
    const recs = await tx<BalanceRecord[]>`
      select id, tier, credits_remaining, credits_used, period_start, period_end from accounts where metered_at > ${since}`;
    if (recs.length === 0) return { at, balances: [], usage: [] };
    const usage = await tx<UsageRecord[]>`
      select u.account_id, u.period_start, u.endpoint, u.calls, u.credits
      from account_usage u join accounts a on a.id = u.account_id and a.period_start = u.period_start
      where a.metered_at > ${since}`;
    return { at, balances: recs.map(toBalance), usage: usage.map(toUsage) };
  });
}

/** The database's clock (the first `since` of meteredSince). */
export async function databaseNow(db: Database): Promise<Date> {
  const [{ at }] = await db.sql<{ at: Date }[]>`select clock_timestamp() as at`;
  return at;
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

/** Deletes the tokens and bare requests no one can use or count any more: expired over an hour ago (the count of
 *  requests per address looks back one hour). Without it each login-link request for a new address added a row for
 *  good. */
export async function pruneTokens(db: Database, now: number): Promise<number> {
  const rows = await db.sql`delete from login_tokens where expires_at < ${new Date(now - 3_600_000)} returning 1`;
  return rows.length;
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
