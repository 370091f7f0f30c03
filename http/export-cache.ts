// The server-side export cache (SPEC: closing lines cached 6 hours). An export's body is written to a file
// under DATA_DIR while it streams to its first client; once the body is complete the file becomes an entry, and
// an identical request within the TTL is streamed from the file, chunk by chunk as the first one was, with the
// same headers. On disk rather than in memory: the exports worth caching are the large ones (up to 500,000 rows,
// about 190 MB of JSON), and holding those in the heap would undo the streaming's bounded memory.
//
// Bounded by age, by a number of entries, and by bytes (least recently used entries go first) counted as the disk
// and the heap pay them: each file in whole 4 KiB blocks plus ENTRY_OVERHEAD, and the bodies still being written
// as well as the entries (six concurrent 41 MB exports put 207 MB under a 100 MB bound, and 40,000 empty days took
// 205 MB of disk and 90 MB of heap as 7.5 MB of bodies). The index lives in memory: the directory is emptied at
// start and removed at close. An entry being read is pinned, so evicting it never pulls a file from under a client;
// its file goes, and stops counting, once the last reader is done.

import { mkdirSync, rmSync } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClosingFilter } from '../sql/history.js';

export interface CacheConfig {
  dir: string;
  ttlMs: number;
  maxBytes: number;
  /** entries at most (default MAX_ENTRIES) */
  maxEntries?: number;
  now(): number;
}

/** the file system's block: a file takes whole blocks on disk */
const BLOCK = 4096;
/** What an entry costs beyond its blocks, counted against the bound: its inode and directory entry, and its index
 *  in memory (key, headers, chunk list: about 2 KB measured). A 187-byte body counts 8 KiB: many tiny entries fill
 *  the bound as the disk and the heap see them, not as their bodies' bytes would. */
export const ENTRY_OVERHEAD = 4096;
/** entries at most: the index is in memory (about 2 KB each), whatever the byte bound allows */
export const MAX_ENTRIES = 10_000;

/** the bytes a body of `size` bytes counts against the bound */
function footprint(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK + ENTRY_OVERHEAD;
}

export interface CachedMeta {
  contentType: string;
  headers: readonly (readonly [string, string])[];
  /** rows in the body */
  rows: number;
  /** the rows the body was read for: a closing capture they cover drops the entry (see invalidate) */
  scope: ClosingFilter;
}

interface Entry {
  key: string;
  meta: CachedMeta;
  file: string;
  /** per chunk: its bytes and the rows it carries, in body order */
  chunks: { bytes: number; rows: number }[];
  size: number;
  /** what it counts against the bound (footprint), until its file is removed */
  counted: number;
  createdAt: number;
  readers: number;
  evicted: boolean;
}

export interface CacheHit {
  meta: CachedMeta;
  /** seconds since the entry was made (the Age header) */
  ageS: number;
  /** the body's chunks with their rows; `counter.rows` counts the rows handed out */
  chunks(counter: { rows: number }): AsyncGenerator<Uint8Array>;
  /** unpins the entry; call once, whether or not the chunks were read */
  release(): void;
}

export interface CacheWriter {
  /** appends a chunk of the body carrying `rows` rows; when the bound has no room for it, even after evicting the
   *  least recently used entries, the writer gives up silently */
  write(chunk: string | Uint8Array, rows: number): Promise<void>;
  /** the body is complete: it becomes the entry of its key */
  commit(): Promise<void>;
  /** the body will not be complete: the file goes (any number of times, at any point: after commit it does nothing) */
  discard(): Promise<void>;
}

let fileCounter = 0;

export class ExportCache {
  private readonly entries = new Map<string, Entry>();
  /** counted against the bound: the entries' footprints (an evicted one's until its file is removed) and what the
   *  bodies being written have reserved */
  private bytes = 0;
  /** bodies being written: a capture they cover makes them stale before they are committed */
  private readonly pending = new Set<{ scope: ClosingFilter; stale: boolean }>();

  constructor(private readonly cfg: CacheConfig) {
    rmSync(cfg.dir, { recursive: true, force: true });
    mkdirSync(cfg.dir, { recursive: true });
  }

  get dir(): string {
    return this.cfg.dir;
  }

  /** entries, the bytes counted against the bound (entries and bodies being written), and the bodies being written */
  get size(): { entries: number; bytes: number; writers: number } {
    return { entries: this.entries.size, bytes: this.bytes, writers: this.pending.size };
  }

  get(key: string): CacheHit | null {
    const e = this.entries.get(key);
    if (e === undefined) return null;
    const age = this.cfg.now() - e.createdAt;
    if (age >= this.cfg.ttlMs || age < 0) {
      this.evict(e);
      return null;
    }
    // most recently used last: eviction takes from the front
    this.entries.delete(key);
    this.entries.set(key, e);
    e.readers++;
    let released = false;
    return {
      meta: e.meta,
      ageS: Math.floor(age / 1000),
      chunks: (counter) => readChunks(e, counter),
      release: () => {
        if (released) return;
        released = true;
        e.readers--;
        if (e.evicted && e.readers === 0) this.remove(e);
      },
    };
  }

  writer(key: string, meta: CachedMeta): CacheWriter {
    const file = join(this.cfg.dir, `${process.pid}-${++fileCounter}.body`);
    const chunks: { bytes: number; rows: number }[] = [];
    let size = 0;
    /** bytes reserved against the bound: the footprint of what was written */
    let reserved = 0;
    let rowsIn = 0;
    let fh: FileHandle | null = null;
    let dead = false;
    let committed = false;
    const encoder = new TextEncoder();
    const mark = { scope: meta.scope, stale: false };
    this.pending.add(mark);
    const drop = async () => {
      dead = true;
      this.pending.delete(mark);
      this.bytes -= reserved;
      reserved = 0;
      const h = fh;
      fh = null;
      await h?.close().catch(() => undefined);
      await unlink(file).catch(() => undefined);
    };
    return {
      write: async (chunk, rows) => {
        if (dead) return;
        const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
        const foot = footprint(size + bytes.byteLength);
        rowsIn += rows;
        // the whole body at the bytes per row so far: one that will not fit is let go before it evicts anything
        const whole = rowsIn > 0 && meta.rows > rowsIn ? footprint(((size + bytes.byteLength) / rowsIn) * meta.rows) : foot;
        // a body made stale by a capture gives its room back now, not at its end
        if (mark.stale || whole > this.cfg.maxBytes || !this.room(foot - reserved)) {
          await drop();
          return;
        }
        // reserved before the write: concurrent writers see each other's bytes
        this.bytes += foot - reserved;
        reserved = foot;
        try {
          fh ??= await open(file, 'w');
          await fh.write(bytes);
        } catch {
          // a full disk or a removed directory costs the cache, never the response
          await drop();
          return;
        }
        chunks.push({ bytes: bytes.byteLength, rows });
        size += bytes.byteLength;
      },
      commit: async () => {
        if (dead) return;
        if (mark.stale || (reserved === 0 && !this.room(footprint(0)))) {
          await drop();
          return;
        }
        if (reserved === 0) {
          reserved = footprint(0);
          this.bytes += reserved;
        }
        dead = true;
        committed = true;
        this.pending.delete(mark);
        try {
          fh ??= await open(file, 'w');
          await fh.close();
        } catch {
          this.bytes -= reserved;
          await unlink(file).catch(() => undefined);
          return;
        }
        const old = this.entries.get(key);
        if (old !== undefined) this.evict(old);
        for (const first of this.entries.values()) {
          if (this.entries.size < (this.cfg.maxEntries ?? MAX_ENTRIES)) break;
          this.evict(first);
        }
        // the writer's reservation becomes the entry's
        this.entries.set(key, { key, meta, file, chunks, size, counted: reserved, createdAt: this.cfg.now(), readers: 0, evicted: false });
      },
      // the file of a committed body is its entry's
      discard: () => (committed ? Promise.resolve() : drop()),
    };
  }

  /** Drops the entries (and the bodies being written) whose rows include a closing capture of this event: the
   *  cache keeps a day's export for 6 hours, but never hides the closing lines of an event captured since. */
  invalidate(sport: string, commence: number): void {
    const day = new Date(commence).toISOString().slice(0, 10);
    const covers = (f: ClosingFilter) => (f.date === undefined || f.date === day)
      && (f.from === undefined || commence >= f.from) && (f.to === undefined || commence < f.to)
      && (f.sports === undefined || f.sports.includes(sport));
    for (const e of [...this.entries.values()]) if (covers(e.meta.scope)) this.evict(e);
    for (const p of this.pending) if (covers(p.scope)) p.stale = true;
  }

  close(): void {
    this.entries.clear();
    this.bytes = 0;
    rmSync(this.cfg.dir, { recursive: true, force: true });
  }

  /** Whether `need` more bytes fit the bound, once the least recently used entries nobody reads are evicted as
   *  needed (an entry being read would keep its file: evicting it frees nothing now). */
  private room(need: number): boolean {
    for (const e of this.entries.values()) {
      if (this.bytes + need <= this.cfg.maxBytes) break;
      if (e.readers === 0) this.evict(e);
    }
    return this.bytes + need <= this.cfg.maxBytes;
  }

  private evict(e: Entry): void {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    if (e.evicted) return;
    e.evicted = true;
    if (e.readers === 0) this.remove(e);
  }

  /** an evicted entry nobody reads: its file goes and stops counting */
  private remove(e: Entry): void {
    this.bytes -= e.counted;
    e.counted = 0;
    void unlink(e.file).catch(() => undefined);
  }
}

async function* readChunks(e: Entry, counter: { rows: number }): AsyncGenerator<Uint8Array> {
  const fh = await open(e.file, 'r');
  try {
    let pos = 0;
    for (const c of e.chunks) {
      const buf = new Uint8Array(c.bytes);
      let got = 0;
      while (got < c.bytes) {
        const { bytesRead } = await fh.read(buf, got, c.bytes - got, pos + got);
        if (bytesRead === 0) throw new Error(`export cache file ${e.file} is shorter than its index`);
        got += bytesRead;
      }
      pos += c.bytes;
      counter.rows += c.rows;
      yield buf;
    }
  } finally {
    await fh.close();
  }
}
