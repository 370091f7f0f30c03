// POST /v1/admin/keys (admin key): issue an API key.

import { ApiError } from '../../engine/errors.js';
import { TIER_CREDITS, isTier } from '../../sql/keys.js';
import type { Route } from '../router.js';
import { AdminKeySchema } from '../schemas.js';
import { compile } from '../serialize.js';
import type { Services } from '../services.js';

const keyJson = compile(AdminKeySchema);
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/;
const MAX_CREDITS = 1_000_000_000;

function field(loc: string, msg: string, input: unknown): never {
  throw new ApiError('VALIDATION_ERROR', `invalid body: ${loc} ${msg}`, [{ loc: ['body', loc], msg, type: 'value_error', input }]);
}

export function adminRoutes(s: Services): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/admin/keys',
      auth: 'admin',
      tag: 'admin',
      summary: 'Issue an API key: {tier, credits?, email?}',
      maxBody: 16 * 1024,
      okStatus: 201,
      response: AdminKeySchema,
      handle: async (ctx) => {
        let body: unknown;
        try {
          body = JSON.parse(ctx.body!.toString('utf8'));
        } catch (e) {
          throw new ApiError('MALFORMED_BODY', 'body is not valid JSON', undefined, { cause: e });
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('MALFORMED_BODY', 'body must be a JSON object');
        const b = body as Record<string, unknown>;
        if (typeof b.tier !== 'string' || !isTier(b.tier)) field('tier', `must be one of ${Object.keys(TIER_CREDITS).join(', ')}`, b.tier);
        let credits: number | undefined;
        if (b.credits !== undefined) {
          if (typeof b.credits !== 'number' || !Number.isInteger(b.credits) || b.credits < 0 || b.credits > MAX_CREDITS) {
            field('credits', `must be an integer from 0 to ${MAX_CREDITS}`, b.credits);
          }
          credits = b.credits;
        }
        let email: string | null = null;
        if (b.email !== undefined && b.email !== null) {
          if (typeof b.email !== 'string' || !EMAIL.test(b.email)) field('email', 'must be an e-mail address', b.email);
          email = b.email;
        }
        const { key, state } = await s.accounts.create({ tier: b.tier, credits, email });
        return { status: 201, body: keyJson({ key, tier: state.tier, credits: state.remaining, email }) };
      },
    },
  ];
}
