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

const time = { oneOf: [{ type: 'string', format: 'date-time' }, { type: 'integer', description: 'epoch milliseconds' }] } as const;
/** A batch: events first (created or updated), then prices of known events; an item that does not validate is
 *  rejected on its own (rejected[], rejected_events[]) and the rest applied. JSON and msgpack carry the same map. */
export const IngestBodySchema = {
  type: 'object',
  properties: {
    events: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'sport_key', 'commence_time'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' }, sport_key: { type: 'string' }, commence_time: time,
          kind: { type: 'string', enum: ['game', 'futures', 'event_market'], default: 'game' },
          home_team: { type: 'string', description: 'games' }, away_team: { type: 'string', description: 'games' },
          title: { type: 'string', description: 'futures and event markets' },
          status: { type: 'string', description: 'final closes the event' },
          probable_pitchers: { type: 'object', description: 'baseball: {home, away, venue, game_status}' },
        },
      },
    },
    prices: {
      type: 'array',
      items: {
        type: 'object',
        required: ['book', 'event_id', 'market', 'price'],
        properties: {
          book: { type: 'string' }, event_id: { type: 'string' }, market: { type: 'string' },
          outcome: { type: 'string', description: 'required with a price; an outright\'s selection (or Yes/No with player)' },
          price: {
            anyOf: [{ type: 'number', exclusiveMinimum: 1 }, { type: 'null' }],
            description: 'decimal odds; null withdraws the book\'s market (a prop: the player\'s; an outright: the selection) on the event',
          },
          point: { type: 'number' }, player: { type: 'string', description: 'player props' },
          ts: { type: 'integer', description: 'epoch milliseconds of the observation, not in the future; default now' },
        },
      },
    },
  },
} as const;

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
      requestBody: IngestBodySchema,
      requestTypes: ['application/json', 'application/msgpack'],
      errors: ['UNSUPPORTED_MEDIA_TYPE'],
      response: IngestResultSchema,
      handle: async (ctx) => {
        const result = await s.ingest(parseBody(ctx.contentType, ctx.body!), ctx.now);
        return { status: 202, body: resultJson(result) };
      },
    },
  ];
}
