// Serialised rows of a maintained analytics view (DESIGN.md section 1: cached serialised bodies), one per record
// slot of the view's pool. A row is written again only when its record changed (the pool's write stamp), its
// event's head changed (start time, teams, title) or the row's in-play flag flipped; a request then filters,
// sorts and joins rows it mostly finds made. Serialising every row of the simulator's NBA middles (about 550 kB)
// and consensus (about 720 kB) on each request held the main thread 30 to 100 ms a request; a batch of the feed
// changes a few of them.

import type { EventView } from '../engine/read-model.js';

export class RowCache<T> {
  private readonly items: (T | undefined)[] = [];
  private readonly stamps: number[] = [];
  private readonly events: (EventView | undefined)[] = [];
  private readonly commence: number[] = [];
  private readonly home: string[] = [];
  private readonly away: string[] = [];
  private readonly title: (string | null)[] = [];
  private readonly live: boolean[] = [];

  /** The row kept for record slot `r`, if it was made from the record's write `stamp`, `ev` as it is now and the
   *  same in-play flag. */
  get(r: number, stamp: number, ev: EventView, live: boolean): T | undefined {
    if (this.stamps[r] !== stamp || this.events[r] !== ev || this.live[r] !== live || this.commence[r] !== ev.commence
      || this.home[r] !== ev.home || this.away[r] !== ev.away || this.title[r] !== ev.title) return undefined;
    return this.items[r];
  }

  set(r: number, stamp: number, ev: EventView, live: boolean, item: T): T {
    this.items[r] = item;
    this.stamps[r] = stamp;
    this.events[r] = ev;
    this.commence[r] = ev.commence;
    this.home[r] = ev.home;
    this.away[r] = ev.away;
    this.title[r] = ev.title;
    this.live[r] = live;
    return item;
  }
}

/** A kept row's UTF-8 bytes, in memory of their own: Buffer.from(string) cuts short strings from a shared 8 KB
 *  slab, which a single kept row would hold whole after the rows beside it were replaced. */
export function rowBytes(json: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
  bytes.write(json);
  return bytes;
}

/** A JSON array of rows serialised one by one (UTF-8): what the array's serialiser writes for the same rows. One
 *  copy of bytes encoded when each row was made: encoding the whole body again on each request (a string handed to
 *  the socket) took the main thread 3 to 10 ms a request for the 0.7 MB of the simulator's NBA consensus
 *  (bench/http.ts). With `tails`, each row's bytes are followed by its tail (ASCII): rows kept serialised up to a
 *  field that changes with the clock, such as an age, whose value and closing brace are written per request. With
 *  `kept`, the body is in memory of its own (as rowBytes): a body that is kept, not sent and dropped. */
export function joinRows(rows: readonly { bytes: Buffer }[], tails: readonly string[] | null = null, kept = false): Buffer {
  let size = 2 + Math.max(0, rows.length - 1);
  for (let i = 0; i < rows.length; i++) size += rows[i].bytes.length + (tails === null ? 0 : tails[i].length);
  const body = kept ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size);
  let at = 0;
  body[at++] = 0x5b; // [
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) body[at++] = 0x2c; // ,
    at += rows[i].bytes.copy(body, at);
    if (tails !== null) at += body.write(tails[i], at, 'latin1');
  }
  body[at] = 0x5d; // ]
  return body;
}
