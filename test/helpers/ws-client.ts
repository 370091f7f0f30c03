// A stream client for tests: a real WebSocket over a socket (ws), keeping a book built only from frames.

import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import type { DeltaItem } from '../../http/ws/frames.js';
import type { TestApp } from './app.js';

export interface Frame {
  type: string;
  channel: string;
  epoch: string;
  seq: number;
  prev_seq: number | null;
  pt: number;
  seg?: string;
  reason?: string;
  /** snapshots and heartbeats of a node serving the simulator's prices */
  simulated?: boolean;
  con?: boolean;
  events?: { id: string; bookmakers: { key: string; markets: { key: string; outcomes: { name: string; price: number; point?: number; description?: string; last_update: number }[] }[] }[] }[];
  changes?: DeltaItem[];
  crc?: Record<string, number>;
  quiet_seconds?: number | null;
  upstream?: { worst_sla: string; counts: Record<string, number> };
  code?: string;
  message?: string;
}

/** A stream client that keeps a book built only from frames. */
export class Client {
  readonly frames: Frame[] = [];
  readonly book = new Map<string, DeltaItem>();
  closed: { code: number; reason: string } | null = null;
  private waiters: (() => void)[] = [];
  /** `seed`: a book to start from (a client resuming with the book it had) */
  constructor(readonly ws: WebSocket, readonly binary: boolean, seed?: ReadonlyMap<string, DeltaItem>) {
    if (seed !== undefined) for (const [k, v] of seed) this.book.set(k, v);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const f = (isBinary ? unpack(data) : JSON.parse(data.toString('utf8'))) as Frame;
      this.frames.push(f);
      this.apply(f);
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString() };
      for (const w of this.waiters.splice(0)) w();
    });
  }

  private apply(f: Frame): void {
    if (f.type === 'snapshot') {
      if (f.seg === undefined || f.seg === 'start') this.book.clear();
      for (const ev of f.events ?? []) {
        for (const b of ev.bookmakers) {
          for (const m of b.markets) {
            for (const o of m.outcomes) {
              const i: DeltaItem = { event_id: ev.id, market: m.key, point: o.point ?? null, player: o.description ?? null, outcome: o.name, book: b.key, price: o.price, last_update: o.last_update };
              this.book.set(key(i), i);
            }
          }
        }
      }
    } else if (f.type === 'delta') {
      for (const i of f.changes ?? []) {
        if (i.removed) this.book.delete(key(i));
        else this.book.set(key(i), i);
      }
    }
  }

  async until(pred: (f: Frame) => boolean, ms = 5000): Promise<Frame> {
    const deadline = Date.now() + ms;
    let seen = 0;
    for (;;) {
      for (; seen < this.frames.length; seen++) if (pred(this.frames[seen])) return this.frames[seen];
      if (this.closed !== null) throw new Error(`closed ${this.closed.code} ${this.closed.reason}`);
      if (Date.now() > deadline) throw new Error('timed out waiting for a frame');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** waits until no frame has arrived for `quietMs` */
  async settle(quietMs = 300, ms = 20000): Promise<void> {
    const deadline = Date.now() + ms;
    let n = -1;
    while (n !== this.frames.length) {
      if (Date.now() > deadline) throw new Error('frames kept coming');
      n = this.frames.length;
      await new Promise((r) => setTimeout(r, quietMs));
    }
  }

  async closedWith(ms = 5000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + ms;
    while (this.closed === null) {
      if (Date.now() > deadline) throw new Error('not closed');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.closed;
  }

  eventItems(id: string): DeltaItem[] {
    return [...this.book.values()].filter((i) => i.event_id === id);
  }
}

export function key(i: DeltaItem): string {
  return `${i.event_id}|${i.market}|${i.player ?? ''}|${i.point ?? ''}|${i.outcome}|${i.book}`;
}

export async function connect(app: TestApp, path: string, binary = false, seed?: ReadonlyMap<string, DeltaItem>): Promise<Client> {
  const ws = new WebSocket(app.base.replace('http', 'ws') + path);
  const c = new Client(ws, binary, seed);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return c;
}

