// Request bodies of the small JSON routes (admin keys, verdict prefs): a JSON object or a 400, and 422s that
// name the body field.

import { ApiError } from '../engine/errors.js';
import type { RequestCtx } from './router.js';

/** Content types a JSON body may arrive under: none, JSON's own, and the defaults of fetch (text/plain) and of
 *  `curl -d` (form-urlencoded) for a body written as JSON text; any other (msgpack, multipart, XML) is a 415. */
const JSON_TYPES = new Set(['', 'application/json', 'text/plain', 'application/x-www-form-urlencoded']);

/** The body as a JSON object; with `fields`, a field outside them is a 422 (the OpenAPI document declares every
 *  request body closed: a misspelt field, `credit` for `credits`, was ignored and its default taken). */
export function jsonObject(ctx: RequestCtx, fields?: readonly string[]): Record<string, unknown> {
  const type = ctx.contentType.split(';')[0].trim().toLowerCase();
  if (!JSON_TYPES.has(type) && !type.endsWith('+json')) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type} is not accepted here; send the body as application/json`);
  }
  const text = ctx.body!.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new ApiError('MALFORMED_BODY', 'body is not valid JSON', undefined, { cause: e });
  }
  // no body of these routes nests past a few levels; thousands of levels overflowed the stack of whatever walked the
  // value next (a list's join in a 422 message: a 500)
  if (nestedDeeper(text, MAX_NESTING)) throw new ApiError('MALFORMED_BODY', `body nests arrays and objects deeper than ${MAX_NESTING} levels`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('MALFORMED_BODY', 'body must be a JSON object');
  if (fields !== undefined) {
    for (const k of Object.keys(body)) if (!fields.includes(k)) invalidField(k, `is not a field of this body (allowed: ${fields.join(', ')})`, (body as Record<string, unknown>)[k]);
  }
  return body as Record<string, unknown>;
}

const MAX_NESTING = 32;

/** Whether valid JSON `text` opens more than `max` arrays and objects inside one another (strings skipped). */
export function nestedDeeper(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: to its closing quote, past escapes
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A 422 naming the body field; a field left out is of type `missing` with input null, as a query parameter's is. */
export function invalidField(loc: string, msg: string, input: unknown): never {
  const type = input === undefined ? 'missing' : 'value_error';
  throw new ApiError('VALIDATION_ERROR', `invalid body: ${loc} ${msg}`, [{ loc: ['body', loc], msg, type, input: input ?? null }]);
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
