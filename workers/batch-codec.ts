// The msgpack form of an ingest batch (DESIGN.md section 5), shared by POST /v1/ingest, NATS ingest and the
// cluster stream, so every path decodes and refuses bodies the same way.

import { Unpackr } from 'msgpackr';
import { ApiError } from '../engine/errors.js';

/** msgpackr's defaults, but a 64-bit integer as a number: Python, Go and Rust encoders write a millisecond `ts`
 *  as uint64 or int64, which msgpackr would hand over as a BigInt, and every such observation was rejected
 *  (INVALID_TIMESTAMP). Epoch milliseconds are far inside 2^53. */
const unpackr = new Unpackr({ useRecords: false, int64AsType: 'number' });

/** Decodes a msgpack ingest body; bytes that are not msgpack, or not a map, throw MALFORMED_BODY. */
export function decodeMsgpackBatch(body: Uint8Array): unknown {
  let value: unknown;
  try {
    value = unpackr.unpack(body);
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
