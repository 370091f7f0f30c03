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
    verified: k.verified,
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

// The shapes above as JSON schemas, for /openapi.json (every field is always present; `current` only on the
// caller's own key in GET /v1/keys).
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const isoOrNullSchema = { type: ['string', 'null'], format: 'date-time' } as const;
const iso = { type: 'string', format: 'date-time' } as const;

export const KeySchema = {
  type: 'object',
  required: ['id', 'prefix', 'created_at_iso', 'last_request_at_iso', 'revoked', 'verified'],
  properties: {
    id: int, prefix: str, created_at_iso: iso, last_request_at_iso: isoOrNullSchema, revoked: { type: 'boolean' },
    verified: { type: 'boolean', description: 'false for a self-serve sign-up\'s key and the keys it made: once the account holds a verified key, such a key may not manage keys or webhooks' },
    current: { const: true, description: 'only on the key that made the request' },
  },
  additionalProperties: false,
} as const;

export const AccountSchema = {
  type: 'object',
  required: ['id', 'email', 'tier', 'monthly_credits', 'credits_remaining', 'credits_used', 'period_start_iso', 'period_end_iso',
    'claimed', 'payment_customer_id_prefix', 'payment_subscription_id_prefix', 'created_at_iso', 'last_request_at_iso', 'keys'],
  properties: {
    id: int, email: strOrNull, tier: str, monthly_credits: int, credits_remaining: int, credits_used: int,
    period_start_iso: iso, period_end_iso: iso, claimed: { type: 'boolean' },
    payment_customer_id_prefix: strOrNull, payment_subscription_id_prefix: strOrNull,
    created_at_iso: iso, last_request_at_iso: isoOrNullSchema, keys: { type: 'array', items: KeySchema },
  },
  additionalProperties: false,
} as const;

export const SubscriptionSchema = {
  type: 'object',
  required: ['state', 'tier', 'billing', 'period_start_iso', 'period_end_iso', 'payment_customer_id_prefix', 'payment_subscription_id_prefix', 'last_request_at_iso'],
  properties: {
    state: { type: 'string', enum: ['free', 'active'] }, tier: str, billing: { type: 'string', enum: ['payment_provider', 'none', 'manual'] },
    period_start_iso: iso, period_end_iso: iso, payment_customer_id_prefix: strOrNull, payment_subscription_id_prefix: strOrNull,
    last_request_at_iso: isoOrNullSchema,
  },
  additionalProperties: false,
} as const;
