// Request bodies of the small JSON routes (admin keys, verdict prefs): a JSON object or a 400, and 422s that
// name the body field.

import { ApiError } from '../engine/errors.js';
import type { RequestCtx } from './router.js';

/** The body as a JSON object; with `fields`, a field outside them is a 422 (the OpenAPI document declares every
 *  request body closed: a misspelt field, `credit` for `credits`, was ignored and its default taken). */
export function jsonObject(ctx: RequestCtx, fields?: readonly string[]): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(ctx.body!.toString('utf8'));
  } catch (e) {
    throw new ApiError('MALFORMED_BODY', 'body is not valid JSON', undefined, { cause: e });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('MALFORMED_BODY', 'body must be a JSON object');
  if (fields !== undefined) {
    for (const k of Object.keys(body)) if (!fields.includes(k)) invalidField(k, `is not a field of this body (allowed: ${fields.join(', ')})`, (body as Record<string, unknown>)[k]);
  }
  return body as Record<string, unknown>;
}

export function invalidField(loc: string, msg: string, input: unknown): never {
  throw new ApiError('VALIDATION_ERROR', `invalid body: ${loc} ${msg}`, [{ loc: ['body', loc], msg, type: 'value_error', input }]);
}

/** local@domain.tld, without blanks or control characters (a NUL reached PostgreSQL as a 500) */
const EMAIL = /^[^\s@\u0000-\u001f\u007f]{1,64}@[^\s@\u0000-\u001f\u007f]{1,255}\.[^\s@\u0000-\u001f\u007f]{2,63}$/;

/** An e-mail address field: a string of at most 254 characters shaped local@domain.tld, or a 422. */
export function emailField(b: Record<string, unknown>, name: string): string {
  const v = b[name];
  if (typeof v !== 'string' || v.length > 254 || !EMAIL.test(v.trim())) invalidField(name, 'must be an e-mail address', v);
  return v.trim();
}

/** An optional string field of at most `max` characters matching `re`; null when absent or null. */
export function optionalString(b: Record<string, unknown>, name: string, max: number, re: RegExp = /^[^\u0000-\u001f]*$/): string | null {
  const v = b[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length === 0 || v.length > max || !re.test(v)) invalidField(name, `must be a string of 1 to ${max} characters`, v);
  return v;
}

/** An integer field within [min, max], or a 422. */
export function intField(b: Record<string, unknown>, name: string, min: number, max: number): number {
  const v = b[name];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) invalidField(name, `must be an integer from ${min} to ${max}`, v);
  return v;
}
