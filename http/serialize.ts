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
    detail: err.detail,
  });
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
