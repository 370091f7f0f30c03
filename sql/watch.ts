// Whether the database answers. postgres.js has no per-query timeout, and a database that stops answering (the
// embedded thread stuck on a file it cannot write, a PostgreSQL whose connections are open but silent, a table held
// by a lock) leaves every query waiting for ever: with the embedded database's one connection, every later query
// queues behind the first. The watch bounds a wait (DATABASE_TIMEOUT_MS), never the query: the query goes on and
// its result is dropped, since cancelling it would not free a silent connection, and a write the caller retried
// after a bound could still commit (the meter's deltas would be added twice). So only requests are bounded here;
// the background writers keep waiting, and keep what they failed to write, as before.
//
// It logs one line when a wait first runs past the bound and one when the last such wait ends, however many
// requests waited meanwhile, and probes with `select 1` (one at a time) so that a database nobody is asking is
// noticed too.

import { ping, type Database } from './connection.js';

/** A wait on the database that ran past its bound; the query it waited on may still complete. */
export class DatabaseTimeout extends Error {
  readonly code = 'DATABASE_TIMEOUT';
  constructor(readonly ms: number) {
    super(`the database did not answer within ${ms} ms`);
  }
}

export class DatabaseWatch {
  /** waits past their bound and not settled yet */
  private late = 0;
  /** when the first of them ran past its bound (0: none) */
  private since = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: Database,
    /** DATABASE_TIMEOUT_MS */
    readonly boundMs: number,
    private readonly log: (msg: string) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** since when the database has not answered a wait within its bound; 0 while it answers */
  get stalledSince(): number {
    return this.since;
  }

  /** `p`, or a DatabaseTimeout once `ms` passed without it settling (what `p` gives later is dropped). */
  within<T>(p: Promise<T>, ms = this.boundMs, what = 'a request'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let over = false;
      const timer = setTimeout(() => {
        over = true;
        this.overdue(ms, what);
        reject(new DatabaseTimeout(ms));
      }, ms);
      timer.unref();
      p.then((v) => {
        clearTimeout(timer);
        if (over) this.ended(null);
        else resolve(v);
      }, (e: unknown) => {
        clearTimeout(timer);
        if (over) this.ended(e);
        else reject(e);
      });
    });
  }

  /** Probes every `intervalMs` once the previous probe answered: never more than one waits on a stuck database. */
  start(intervalMs = Math.min(5000, this.boundMs)): void {
    const probe = (): void => {
      this.timer = null;
      if (this.closed) return;
      const p = ping(this.db);
      this.within(p, this.boundMs, 'select 1').catch(() => undefined);
      const next = (): void => {
        if (!this.closed) this.timer = setTimeout(probe, intervalMs).unref();
      };
      p.then(next, next);
    };
    this.timer = setTimeout(probe, intervalMs).unref();
  }

  /** Stops probing; waits on nothing (a stuck probe must not hold a shutdown). */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private overdue(ms: number, what: string): void {
    if (this.late++ > 0) return;
    this.since = this.now();
    if (!this.closed) {
      this.log(`database stopped answering: ${what} waited ${ms} ms (DATABASE_TIMEOUT_MS) without an answer; requests that ` +
        'need it are answered 503 until it answers again');
    }
  }

  private ended(err: unknown): void {
    if (--this.late > 0) return;
    const s = ((this.now() - this.since) / 1000).toFixed(1);
    this.since = 0;
    if (this.closed) return;
    this.log(err === null ? `database answers again, after ${s} s`
      : `database waits ended after ${s} s, the last with an error: ${err instanceof Error ? err.message : String(err)}`);
  }
}
