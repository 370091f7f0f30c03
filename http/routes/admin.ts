// Admin (ADMIN_KEY) account operations: issue keys (opening an account, or adding a key to one), list accounts,
// change an account's tier and payment-provider ids, grant credits, revoke keys (at once, in memory too).

import { ApiError } from '../../engine/errors.js';
import { TIER_CREDITS, isTier } from '../../engine/tiers.js';
import type { AccountState } from '../accounts.js';
import { AccountSchema, accountJson } from '../account-json.js';
import { intField, invalidField, jsonObject, optionalString } from '../body.js';
import type { RequestCtx, Route } from '../router.js';
import { AdminKeySchema } from '../schemas.js';
import { compile } from '../serialize.js';
import type { Services } from '../services.js';

const keyJson = compile(AdminKeySchema);
/** local@domain.tld, without blanks or control characters (a NUL reached PostgreSQL as a 500) */
const EMAIL = /^[^\s@\u0000-\u001f\u007f]{1,64}@[^\s@\u0000-\u001f\u007f]{1,255}\.[^\s@\u0000-\u001f\u007f]{2,63}$/;
const MAX_CREDITS = 1_000_000_000;
const PAYMENT_ID = /^[A-Za-z0-9_-]+$/;

const json = (body: unknown, status = 200) => ({ status, body: JSON.stringify(body) });
const AdminRevokedSchema = {
  type: 'object', required: ['id', 'prefix', 'account_id', 'revoked'], additionalProperties: false,
  properties: { id: { type: 'integer' }, prefix: { type: 'string' }, account_id: { type: 'integer' }, revoked: { const: true } },
} as const;
const AccountListSchema = {
  type: 'object', required: ['total', 'accounts'], additionalProperties: false,
  properties: { total: { type: 'integer' }, accounts: { type: 'array', items: AccountSchema } },
} as const;
/** {tier, credits?, email?} opens an account; {account_id} adds a key to one (and nothing beside it) */
const AdminKeyBody = {
  oneOf: [
    {
      type: 'object', required: ['tier'], additionalProperties: false,
      properties: {
        tier: { type: 'string', enum: Object.keys(TIER_CREDITS) },
        credits: { type: 'integer', minimum: 0, maximum: MAX_CREDITS, description: 'default the tier\'s allowance' },
        email: { type: ['string', 'null'], format: 'email' },
      },
    },
    { type: 'object', required: ['account_id'], additionalProperties: false, properties: { account_id: { type: 'integer', minimum: 1 } } },
  ],
} as const;

function idArg(raw: string, code: 'ACCOUNT_NOT_FOUND' | 'KEY_NOT_FOUND'): number {
  if (!/^\d{1,15}$/.test(raw)) throw new ApiError(code);
  return Number(raw);
}

function accountOf(s: Services, ctx: RequestCtx): AccountState {
  const a = s.accounts.account(idArg(ctx.args[0]!, 'ACCOUNT_NOT_FOUND'));
  if (a === undefined) throw new ApiError('ACCOUNT_NOT_FOUND');
  return a;
}

export function adminRoutes(s: Services): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/admin/keys',
      auth: 'admin',
      tag: 'admin',
      summary: 'Issue an API key: {tier, credits?, email?} opens an account; {account_id} adds a key to one',
      maxBody: 16 * 1024,
      okStatus: 201,
      requestBody: AdminKeyBody,
      errors: ['ACCOUNT_NOT_FOUND', 'ACCOUNT_EXISTS'],
      response: AdminKeySchema,
      handle: async (ctx) => {
        const b = jsonObject(ctx, ['tier', 'credits', 'email', 'account_id']);
        if (b.account_id !== undefined) {
          const a = s.accounts.account(intField(b, 'account_id', 1, Number.MAX_SAFE_INTEGER));
          if (a === undefined) throw new ApiError('ACCOUNT_NOT_FOUND');
          // a key takes its account's tier and balance: fields that would say otherwise were silently ignored
          for (const f of ['tier', 'credits', 'email']) {
            if (b[f] !== undefined) {
              invalidField(f, `belongs to the account, whose tier and balance a key added to it takes: change them with PATCH /v1/admin/accounts/${a.id} or POST /v1/admin/accounts/${a.id}/credits`, b[f]);
            }
          }
          const { key, state } = await s.accounts.create({ tier: a.tier, accountId: a.id });
          return { status: 201, body: keyJson({ key, tier: a.tier, credits: a.remaining, email: a.email, account_id: a.id, key_id: state.id, prefix: state.prefix }) };
        }
        if (typeof b.tier !== 'string' || !isTier(b.tier)) invalidField('tier', `must be one of ${Object.keys(TIER_CREDITS).join(', ')}`, b.tier);
        let credits: number | undefined;
        if (b.credits !== undefined) credits = intField(b, 'credits', 0, MAX_CREDITS);
        let email: string | null = null;
        if (b.email !== undefined && b.email !== null) {
          if (typeof b.email !== 'string' || !EMAIL.test(b.email)) invalidField('email', 'must be an e-mail address', b.email);
          email = b.email;
          if (s.accounts.accountByEmail(email) !== undefined) throw new ApiError('ACCOUNT_EXISTS', 'An account with this e-mail exists: add a key to it with {"account_id": <id>}');
        }
        let made;
        try {
          made = await s.accounts.create({ tier: b.tier, credits, email });
        } catch (e) {
          if ((e as { code?: string }).code === '23505') throw new ApiError('ACCOUNT_EXISTS', 'An account with this e-mail exists: add a key to it with {"account_id": <id>}');
          throw e;
        }
        const { key, state } = made;
        return { status: 201, body: keyJson({ key, tier: state.tier, credits: state.remaining, email, account_id: state.account.id, key_id: state.id, prefix: state.prefix }) };
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/accounts',
      auth: 'admin',
      tag: 'admin',
      summary: 'Accounts with their balances, periods and keys (prefixes only)',
      params: [
        { name: 'limit', type: 'integer', min: 1, max: 1000, default: 100, description: 'Accounts per page' },
        { name: 'offset', type: 'integer', min: 0, max: 10_000_000, default: 0, description: 'Accounts to skip' },
        { name: 'email', type: 'string', description: 'Only accounts whose e-mail contains this (case-insensitive)' },
      ],
      response: AccountListSchema,
      handle: (ctx) => {
        const { total, items } = s.accounts.list(ctx.params.limit as number, ctx.params.offset as number, (ctx.params.email as string | undefined) ?? null);
        return json({ total, accounts: items.map(accountJson) });
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/accounts/{account_id}',
      auth: 'admin',
      tag: 'admin',
      summary: 'One account',
      errors: ['ACCOUNT_NOT_FOUND'],
      response: AccountSchema,
      handle: (ctx) => json(accountJson(accountOf(s, ctx))),
    },
    {
      method: 'PATCH',
      path: '/v1/admin/accounts/{account_id}',
      auth: 'admin',
      tag: 'admin',
      summary: 'Change the tier (a new period starts with its allowance) or the payment-provider ids: {tier?, payment_customer_id?, payment_subscription_id?}',
      maxBody: 16 * 1024,
      requestBody: { type: 'object', properties: { tier: { type: 'string' }, payment_customer_id: { type: ['string', 'null'] }, payment_subscription_id: { type: ['string', 'null'] } } },
      errors: ['ACCOUNT_NOT_FOUND'],
      response: AccountSchema,
      handle: async (ctx) => {
        const a = accountOf(s, ctx);
        const b = jsonObject(ctx, ['tier', 'payment_customer_id', 'payment_subscription_id']);
        if (b.tier !== undefined && (typeof b.tier !== 'string' || !isTier(b.tier))) invalidField('tier', `must be one of ${Object.keys(TIER_CREDITS).join(', ')}`, b.tier);
        const customer = b.payment_customer_id === undefined ? undefined : optionalString(b, 'payment_customer_id', 255, PAYMENT_ID);
        const subscription = b.payment_subscription_id === undefined ? undefined : optionalString(b, 'payment_subscription_id', 255, PAYMENT_ID);
        if (b.tier === undefined && customer === undefined && subscription === undefined) invalidField('tier', 'give tier, payment_customer_id or payment_subscription_id', null);
        if (customer !== undefined || subscription !== undefined) await s.accounts.setPayment(a, customer, subscription);
        // the tier it has already changes nothing (a billing sync that sends the whole record each time started a
        // new period, its allowance refilled and its usage wiped)
        if (typeof b.tier === 'string' && isTier(b.tier) && b.tier !== a.tier) await s.accounts.setTier(a, b.tier);
        return json(accountJson(a));
      },
    },
    {
      method: 'POST',
      path: '/v1/admin/accounts/{account_id}/credits',
      auth: 'admin',
      tag: 'admin',
      summary: 'Grant credits to the current period: {credits}',
      maxBody: 16 * 1024,
      requestBody: { type: 'object', required: ['credits'], properties: { credits: { type: 'integer', minimum: 1, maximum: MAX_CREDITS } } },
      errors: ['ACCOUNT_NOT_FOUND'],
      response: AccountSchema,
      handle: async (ctx) => {
        const a = accountOf(s, ctx);
        await s.accounts.grant(a, intField(jsonObject(ctx, ['credits']), 'credits', 1, MAX_CREDITS));
        return json(accountJson(a));
      },
    },
    {
      method: 'DELETE',
      path: '/v1/admin/keys/{key_id}',
      auth: 'admin',
      tag: 'admin',
      summary: 'Revoke a key at once',
      errors: ['KEY_NOT_FOUND'],
      response: AdminRevokedSchema,
      handle: async (ctx) => {
        const k = await s.accounts.revoke(idArg(ctx.args[0]!, 'KEY_NOT_FOUND'), null);
        if (k === null) throw new ApiError('KEY_NOT_FOUND');
        return json({ id: k.id, prefix: k.prefix, account_id: k.account.id, revoked: true });
      },
    },
  ];
}
