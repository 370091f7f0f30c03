// Compiled serialisers (fast-json-stringify), built once at load, and helpers for cached bodies.

import { createHash } from 'node:crypto';
import fastJson from 'fast-json-stringify';
import type { ApiError } from '../engine/errors.js';
import { ErrorSchema } from './schemas.js';

const errorStringify = fastJson(ErrorSchema as object);

export function errorBody(err: ApiError, requestId: string): string {
  return errorStringify({
    message: err.message,
    error_code: err.code,
    details_url: `/v1/meta/errors#${err.code}`,
    request_id: requestId,
    detail: err.detail?.map((d) => ({ loc: d.loc, msg: d.msg, type: d.type, input: inputPreview(d.input, 0) })),
  });
}

/** levels, items per level and characters per string of a 422's echoed `input` */
const PREVIEW_DEPTH = 4;
const PREVIEW_ITEMS = 20;
const PREVIEW_CHARS = 256;

/**
 * The caller's value as a 422 echoes it: primitives as they are (a long string cut), arrays and objects down to
 * PREVIEW_DEPTH levels and PREVIEW_ITEMS entries, what lies deeper as "...". A 12 KB body of 6,000 nested arrays,
 * echoed whole, overflowed JSON.stringify's stack and ended the process (test/http-body-limits.test.ts).
 */
export function inputPreview(v: unknown, depth: number): unknown {
  if (v === undefined) return null;
  if (typeof v === 'string') return v.length > PREVIEW_CHARS ? v.slice(0, PREVIEW_CHARS) + '...' : v;
  if (typeof v !== 'object' || v === null) return typeof v === 'bigint' ? String(v) : v;
  if (depth >= PREVIEW_DEPTH) return '...';
  if (Array.isArray(v)) {
    const out = v.slice(0, PREVIEW_ITEMS).map((x) => inputPreview(x, depth + 1));
    if (v.length > PREVIEW_ITEMS) out.push('...');
    return out;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const k of Object.keys(v)) {
    if (n++ === PREVIEW_ITEMS) {
      out['...'] = '...';
      break;
    }
    out[k.length > PREVIEW_CHARS ? k.slice(0, PREVIEW_CHARS) + '...' : k] = inputPreview((v as Record<string, unknown>)[k], depth + 1);
  }
  return out;
}

export function compile(schema: object): (doc: unknown) => string {
  return fastJson(schema) as (doc: unknown) => string;
}

export function etagOf(body: string | Uint8Array): string {
  return '"' + createHash('sha1').update(body).digest('base64url').slice(0, 27) + '"';
}

/** true when an If-None-Match header matches the ETag */
export function etagMatches(header: string, etag: string): boolean {
  if (header === '') return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
