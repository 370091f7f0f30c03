// How accounts and keys are shown: admin listings, /v1/usage, /v1/meta/api-key-check and /v1/keys. A key is shown
// by its id and 8-character prefix only; payment-provider ids by a prefix.

import { TIER_CREDITS } from '../engine/tiers.js';
import type { AccountState, KeyState } from './accounts.js';
import { isoSeconds } from './services.js';

function isoOrNull(ms: number): string | null {
  return ms === 0 ? null : isoSeconds(ms);
}

/** The first 8 characters of a payment-provider id (enough to find it in the provider's dashboard). */
export function idPrefix(id: string | null): string | null {
  return id === null ? null : id.slice(0, 8);
}

export function keyJson(k: KeyState, current = false): Record<string, unknown> {
  return {
    id: k.id,
    prefix: k.prefix,
    created_at_iso: isoSeconds(k.createdAt),
    last_request_at_iso: isoOrNull(k.lastRequestAt),
    revoked: k.revoked,
    ...(current ? { current: true } : {}),
  };
}

export function accountJson(a: AccountState): Record<string, unknown> {
  return {
    id: a.id,
    email: a.email,
    tier: a.tier,
    monthly_credits: TIER_CREDITS[a.tier],
    credits_remaining: a.remaining,
    credits_used: a.used,
    period_start_iso: isoSeconds(a.periodStart),
    period_end_iso: isoSeconds(a.periodEnd),
    claimed: a.claimedAt !== 0,
    payment_customer_id_prefix: idPrefix(a.paymentCustomerId),
    payment_subscription_id_prefix: idPrefix(a.paymentSubscriptionId),
    created_at_iso: isoSeconds(a.createdAt),
    last_request_at_iso: isoOrNull(a.lastRequestAt),
    keys: a.keys.map((k) => keyJson(k)),
  };
}

/** The subscription block of /v1/meta/api-key-check. */
export function subscriptionJson(a: AccountState): Record<string, unknown> {
  return {
    state: a.tier === 'free' ? 'free' : 'active',
    tier: a.tier,
    billing: a.paymentSubscriptionId !== null ? 'payment_provider' : a.tier === 'free' ? 'none' : 'manual',
    period_start_iso: isoSeconds(a.periodStart),
    period_end_iso: isoSeconds(a.periodEnd),
    payment_customer_id_prefix: idPrefix(a.paymentCustomerId),
    payment_subscription_id_prefix: idPrefix(a.paymentSubscriptionId),
    last_request_at_iso: isoOrNull(a.lastRequestAt),
  };
}
