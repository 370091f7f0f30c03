// POST /v1/ingest (admin key): JSON or msgpack batches of events and price observations.

import { unpack } from 'msgpackr';
import { ApiError } from '../../engine/errors.js';
import type { Route } from '../router.js';
import { IngestResultSchema } from '../schemas.js';
import { compile } from '../serialize.js';
import type { Services } from '../services.js';

/** largest ingest body accepted */
export const MAX_INGEST_BYTES = 16 * 1024 * 1024;
const resultJson = compile(IngestResultSchema);

function parseBody(contentType: string, body: Buffer): unknown {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (body.length === 0) throw new ApiError('MALFORMED_BODY', 'empty body');
  if (type === 'application/msgpack' || type === 'application/x-msgpack') {
    let value: unknown;
    try {
      value = unpack(body);
    } catch (e) {
      throw new ApiError('MALFORMED_BODY', `body is not valid msgpack: ${(e as Error).message}`, undefined, { cause: e });
    }
    // msgpackr decodes the reserved byte 0xc1 and extension types (e.g. timestamps) to class instances, which
    // would otherwise pass as an empty batch: only a plain map is a batch
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new ApiError('MALFORMED_BODY', 'body is not a msgpack map {"events", "prices"}');
    }
    return value;
  }
  if (type === 'application/json' || type === '') {
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (e) {
      throw new ApiError('MALFORMED_BODY', `body is not valid JSON: ${(e as Error).message}`, undefined, { cause: e });
    }
  }
  throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type} is not accepted; send application/json or application/msgpack`);
}

export function ingestRoutes(s: Services): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/ingest',
      auth: 'admin',
      tag: 'ingest',
      summary: 'Ingest events and price observations (JSON or application/msgpack); bad items are rejected one by one',
      maxBody: MAX_INGEST_BYTES,
      okStatus: 202,
      response: IngestResultSchema,
      handle: async (ctx) => {
        const result = await s.hub.ingest(parseBody(ctx.contentType, ctx.body!), ctx.now);
        return { status: 202, body: resultJson(result) };
      },
    },
  ];
}
