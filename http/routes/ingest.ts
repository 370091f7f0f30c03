// POST /v1/ingest (admin key): JSON or msgpack batches of events and price observations.

import { ApiError } from '../../engine/errors.js';
import { decodeMsgpackBatch } from '../../workers/batch-codec.js';
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
  // application/vnd.msgpack is the vendor-tree name some clients send; the other two are the common ones
  if (type === 'application/msgpack' || type === 'application/x-msgpack' || type === 'application/vnd.msgpack') {
    return decodeMsgpackBatch(body);
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
        const result = await s.ingest(parseBody(ctx.contentType, ctx.body!), ctx.now);
        return { status: 202, body: resultJson(result) };
      },
    },
  ];
}
