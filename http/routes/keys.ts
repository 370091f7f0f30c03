// An account's own keys: GET /v1/keys (prefixes only), POST /v1/keys (a new key, shown once), DELETE
// /v1/keys/{key_id} (revoked at once; a key may revoke itself). Free of credits.

import { ApiError } from '../../engine/errors.js';
import { KeySchema, keyJson } from '../account-json.js';
import type { Route } from '../router.js';
import type { Services } from '../services.js';

/** active keys an account may hold */
export const MAX_KEYS_PER_ACCOUNT = 20;

const json = (body: unknown, status = 200) => ({ status, body: JSON.stringify(body) });
const RevokedSchema = {
  type: 'object', required: ['id', 'prefix', 'revoked'], additionalProperties: false,
  properties: { id: { type: 'integer' }, prefix: { type: 'string' }, revoked: { const: true } },
} as const;
/** a new key: the key itself, shown once, beside its record */
const NewKeySchema = {
  ...KeySchema,
  required: ['api_key', ...KeySchema.required],
  properties: { api_key: { type: 'string', description: 'shown only in this answer' }, ...KeySchema.properties },
} as const;

export function keyRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/keys',
      auth: 'key',
      tag: 'account',
      summary: 'The keys of the caller\'s account (id and prefix only)',
      response: { type: 'array', items: KeySchema },
      handle: (ctx) => json(ctx.key!.account.keys.map((k) => keyJson(k, k === ctx.key))),
    },
    {
      method: 'POST',
      path: '/v1/keys',
      auth: 'key',
      tag: 'account',
      summary: `A new key for the caller's account, shown once (at most ${MAX_KEYS_PER_ACCOUNT} active keys)`,
      okStatus: 201,
      errors: ['KEY_LIMIT', 'KEY_NOT_VERIFIED'],
      response: NewKeySchema,
      handle: async (ctx) => {
        const a = ctx.key!.account;
        if (!s.accounts.managesKeys(ctx.key!)) throw new ApiError('KEY_NOT_VERIFIED');
        if (a.keys.filter((k) => !k.revoked).length >= MAX_KEYS_PER_ACCOUNT) throw new ApiError('KEY_LIMIT');
        // counted again in the database: requests made at once all passed the count above (24 of 30 were made); a
        // key made by a sign-up's key is no more verified than it
        const made = await s.accounts.createWithin(a.id, MAX_KEYS_PER_ACCOUNT, ctx.key!.verified);
        if (made === null) throw new ApiError('KEY_LIMIT');
        const { key, state } = made;
        return json({ api_key: key, ...keyJson(state) }, 201);
      },
    },
    {
      method: 'DELETE',
      path: '/v1/keys/{key_id}',
      auth: 'key',
      tag: 'account',
      summary: 'Revoke one of the account\'s keys at once',
      errors: ['KEY_NOT_FOUND', 'KEY_NOT_VERIFIED'],
      response: RevokedSchema,
      handle: async (ctx) => {
        if (!s.accounts.managesKeys(ctx.key!)) throw new ApiError('KEY_NOT_VERIFIED');
        const raw = ctx.args[0]!;
        const k = /^\d{1,15}$/.test(raw) ? await s.accounts.revoke(Number(raw), ctx.key!.account.id) : null;
        if (k === null) throw new ApiError('KEY_NOT_FOUND');
        return json({ id: k.id, prefix: k.prefix, revoked: true });
      },
    },
  ];
}
