// Request bodies of the small JSON routes (admin keys, verdict prefs): a JSON object or a 400, and 422s that
// name the body field.

import { ApiError } from '../engine/errors.js';
import type { RequestCtx } from './router.js';

export function jsonObject(ctx: RequestCtx): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(ctx.body!.toString('utf8'));
  } catch (e) {
    throw new ApiError('MALFORMED_BODY', 'body is not valid JSON', undefined, { cause: e });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('MALFORMED_BODY', 'body must be a JSON object');
  return body as Record<string, unknown>;
}

export function invalidField(loc: string, msg: string, input: unknown): never {
  throw new ApiError('VALIDATION_ERROR', `invalid body: ${loc} ${msg}`, [{ loc: ['body', loc], msg, type: 'value_error', input }]);
}
