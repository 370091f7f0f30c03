// POST /v1/admin/keys (admin key): issue an API key.

import { TIER_CREDITS, isTier } from '../../sql/keys.js';
import { invalidField, jsonObject } from '../body.js';
import type { Route } from '../router.js';
import { AdminKeySchema } from '../schemas.js';
import { compile } from '../serialize.js';
import type { Services } from '../services.js';

const keyJson = compile(AdminKeySchema);
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/;
const MAX_CREDITS = 1_000_000_000;

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
        const b = jsonObject(ctx);
        if (typeof b.tier !== 'string' || !isTier(b.tier)) invalidField('tier', `must be one of ${Object.keys(TIER_CREDITS).join(', ')}`, b.tier);
        let credits: number | undefined;
        if (b.credits !== undefined) {
          if (typeof b.credits !== 'number' || !Number.isInteger(b.credits) || b.credits < 0 || b.credits > MAX_CREDITS) {
            invalidField('credits', `must be an integer from 0 to ${MAX_CREDITS}`, b.credits);
          }
          credits = b.credits;
        }
        let email: string | null = null;
        if (b.email !== undefined && b.email !== null) {
          if (typeof b.email !== 'string' || !EMAIL.test(b.email)) invalidField('email', 'must be an e-mail address', b.email);
          email = b.email;
        }
        const { key, state } = await s.accounts.create({ tier: b.tier, credits, email });
        return { status: 201, body: keyJson({ key, tier: state.tier, credits: state.remaining, email }) };
      },
    },
  ];
}
