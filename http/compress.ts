// gzip for clients that ask for it (Accept-Encoding), as The Odds API v4 does ("Clients should send the
// Accept-Encoding: gzip request header on every request. The API returns gzip-compressed JSON"): a sport's odds of
// 150 KB travel as about 19 KB. Compression runs once per body: the bodies the routes keep (an /odds body, the sports
// list) are the same Buffer until they are rebuilt, so their gzip is kept beside them, weakly; a body made per request
// is compressed on the spot when small, and in libuv's thread pool when large (about 0.6 ms of a core for 150 KB and
// 3 ms for 800 KB at level 1; measured on this machine), so the main thread goes on serving meanwhile.

import { Readable, pipeline } from 'node:stream';
import { createGzip, gzip, gzipSync } from 'node:zlib';

/** bodies below this are sent as they are: the gzip framing would eat most of the gain */
export const GZIP_MIN_BYTES = 1024;
/** above this a body is compressed off the main thread */
const GZIP_SYNC_MAX_BYTES = 64 * 1024;
/** fastest: it shrinks JSON about eightfold, and level 6 took about 2.5 times as long for a third less */
const LEVEL = 1;

/** Whether an Accept-Encoding header admits gzip (`gzip`, `x-gzip` or `*` with a q above 0, gzip not refused). */
export function acceptsGzip(header: string): boolean {
  if (header === '') return false;
  let star = false;
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k.trim().toLowerCase() === 'q') q = Number(v);
    }
    const ok = q > 0 && q <= 1;
    if (coding === 'gzip' || coding === 'x-gzip') return ok;
    if (coding === '*') star = ok;
  }
  return star;
}

export class Gzip {
  private readonly kept = new WeakMap<Uint8Array, Buffer>();
  /** a kept body being compressed off the thread, and who waits for it: the clients polling a body that was just
   *  rebuilt share one compression instead of each starting its own */
  private readonly running = new WeakMap<Uint8Array, ((gz: Buffer | null) => void)[]>();

  /** Compresses `body`: at once (the kept bytes of a body compressed before, or a small one), else null and `done`
   *  is called later with the bytes, or with null when compression failed (the body then goes as it is). */
  compress(body: string | Uint8Array, done: (gz: Buffer | null) => void): Buffer | null {
    const bytes = typeof body === 'string' ? null : body;
    if (bytes !== null) {
      const hit = this.kept.get(bytes);
      if (hit !== undefined) return hit;
    }
    const size = bytes === null ? Buffer.byteLength(body as string) : bytes.byteLength;
    if (size <= GZIP_SYNC_MAX_BYTES) {
      const gz = gzipSync(body, { level: LEVEL });
      if (bytes !== null) this.kept.set(bytes, gz);
      return gz;
    }
    if (bytes === null) {
      gzip(body, { level: LEVEL }, (err, gz) => done(err === null ? gz : null));
      return null;
    }
    const waiting = this.running.get(bytes);
    if (waiting !== undefined) {
      waiting.push(done);
      return null;
    }
    const all = [done];
    this.running.set(bytes, all);
    gzip(bytes, { level: LEVEL }, (err, gz) => {
      this.running.delete(bytes);
      if (err === null) this.kept.set(bytes, gz);
      for (const f of all) f(err === null ? gz : null);
    });
    return null;
  }
}

/** A streamed body (an export of up to about 190 MB) gzipped as it goes: compressed in libuv's thread pool a chunk
 *  at a time, taken as the socket takes it. Stopping early (the client left) destroys the compressor and, through
 *  it, returns the source, so its producer stops too; a source that fails makes the iteration throw. */
export async function* gzipChunks(chunks: AsyncIterable<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  const gz = createGzip({ level: LEVEL });
  pipeline(Readable.from(chunks), gz, () => undefined);
  try {
    for await (const c of gz) yield c as Buffer;
  } finally {
    gz.destroy();
  }
}
