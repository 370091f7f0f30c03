// Admission of the heavy historical requests: the closing-line exports (their row count and every page query),
// /v1/historical/sports/{sport_key}/matches and the coverage counts. Each runs queries of up to seconds over the
// closing lines for 0 (HEAD) or 1 credit, and nothing bounded them: one key's 40 concurrent exports, 40 loops of free
// HEADs or 10 loops of /matches queued so much work in the embedded database's one session that /health's 2 s ping
// failed (503) and every other request waited behind them (audit M1).
//
// Two bounds. Requests: an account has at most `perAccount` of them in flight (beyond: 429 CONCURRENCY_LIMIT), the
// node at most `total` (beyond: 503 SERVICE_UNAVAILABLE), both with Retry-After. An export holds its place from its
// count until its body ended or its client left (a HEAD until its count is done); one served from the export cache
// reads no database and takes none. Queries: at most `queries` heavy queries run at once and the others wait their
// turn in order, so any other query of the process (the health ping, a capture, the meter write) waits behind at
// most that many.

import { ApiError } from '../engine/errors.js';

export interface AdmissionLimits {
  /** heavy requests of one account in flight */
  perAccount: number;
  /** heavy requests of the node in flight */
  total: number;
  /** heavy queries running at once */
  queries: number;
}

/** `queries` is 1 on the embedded database (one session: a second query in flight only waits there, ahead of
 *  everyone else's) and 2 on PostgreSQL (pool of 10 connections: the rest stay free for other requests) */
export const DEFAULT_ADMISSION: AdmissionLimits = { perAccount: 2, total: 8, queries: 1 };

/** seconds a refused request is told to wait: a day's export takes seconds */
export const ADMISSION_RETRY_AFTER_S = 2;

export class Admission {
  private readonly byAccount = new Map<number, number>();
  private admitted = 0;
  private running = 0;
  /** queries waiting for their turn, first asked first */
  private readonly queue: (() => void)[] = [];
  /** the most heavy queries that ran at once */
  peakQueries = 0;

  constructor(readonly limits: AdmissionLimits) {}

  /** requests in flight, queries running and queries waiting */
  get counts(): { admitted: number; running: number; waiting: number } {
    return { admitted: this.admitted, running: this.running, waiting: this.queue.length };
  }

  /** A heavy request of the account (null: a route without a key) starts: returns what ends it (called once or
   *  more), or throws 429 CONCURRENCY_LIMIT or 503 SERVICE_UNAVAILABLE when the account or the node is at its bound. */
  enter(account: number | null): () => void {
    const mine = account === null ? 0 : this.byAccount.get(account) ?? 0;
    const retryAfter = ADMISSION_RETRY_AFTER_S;
    if (account !== null && mine >= this.limits.perAccount) {
      throw new ApiError('CONCURRENCY_LIMIT', `At most ${this.limits.perAccount} closing-line exports, coverage or matches requests of one account at once; retry once one has ended`, undefined, { retryAfter });
    }
    if (this.admitted >= this.limits.total) {
      throw new ApiError('SERVICE_UNAVAILABLE', `This node serves ${this.limits.total} closing-line exports, coverage or matches requests at once; retry in ${retryAfter} s`, undefined, { retryAfter });
    }
    this.admitted++;
    if (account !== null) this.byAccount.set(account, mine + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.admitted--;
      if (account === null) return;
      const n = this.byAccount.get(account)! - 1;
      if (n === 0) this.byAccount.delete(account);
      else this.byAccount.set(account, n);
    };
  }

  /** Runs a heavy query once fewer than `queries` run, in the order asked. */
  async query<T>(run: () => PromiseLike<T>): Promise<T> {
    if (this.running < this.limits.queries) this.running++;
    // the query that ends hands its turn over (running stays)
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    if (this.running > this.peakQueries) this.peakQueries = this.running;
    try {
      return await run();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.running--;
    }
  }
}
