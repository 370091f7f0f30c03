// Binary layouts of the two record streams, written down once. Both are flat Float64Arrays with a fixed
// stride so a batch crosses threads as one transferred buffer (DESIGN.md section 6: typed-array records raised
// end-to-end throughput from about 0.6 M to 1.1 M updates/s against per-record msgpack).
//
// Ids are the main thread's interned ids. `point` is the line point (NaN when the market has none): for
// spreads it is the home side's point, the away side's being its negation. `player` is -1 when none.
// `outcome` is a slot of the market's shape: two_way 0 home, 1 away; three_way adds 2 draw; over_under 0 over,
// 1 under.

/** One price observation, main thread to shard. */
export const OBS = {
  EVENT: 0,
  MARKET: 1,
  POINT: 2,
  PLAYER: 3,
  OUTCOME: 4,
  BOOK: 5,
  PRICE: 6,
  TS: 7,
  STRIDE: 8,
} as const;

/** Full quote state, used to rebuild a restarted shard from the read model (no change records emitted). */
export const RESTORE = {
  EVENT: 0,
  MARKET: 1,
  POINT: 2,
  PLAYER: 3,
  OUTCOME: 4,
  BOOK: 5,
  PRICE: 6,
  LINE_CHANGED_AT: 7,
  VERIFIED_AT: 8,
  STRIDE: 9,
} as const;

/** One change record, shard to main thread. */
export const CHG = {
  KIND: 0,
  EVENT: 1,
  MARKET: 2,
  POINT: 3,
  PLAYER: 4,
  OUTCOME: 5,
  BOOK: 6,
  PRICE: 7,
  LINE_CHANGED_AT: 8,
  VERIFIED_AT: 9,
  STRIDE: 10,
} as const;

/** Change kinds. `last_update` of a quote is max(line_changed_at, verified_at). */
export const CHANGE = {
  /** a quote appeared */
  NEW: 1,
  /** its price moved */
  PRICE: 2,
  /** polled again with the same price: verified_at moved, line_changed_at did not */
  VERIFIED: 3,
  /** the quote is gone (event final, or the book moved to another line) */
  REMOVED: 4,
} as const;

/** A growable Float64Array of fixed-stride records; grows by 1.5x like postgres.js bytes.js. */
export class RecordBuffer {
  data: Float64Array;
  length = 0;

  constructor(readonly stride: number, capacityRecords = 256) {
    this.data = new Float64Array(stride * capacityRecords);
  }

  /** offset of a new record */
  push(): number {
    const off = this.length * this.stride;
    if (off + this.stride > this.data.length) {
      const next = new Float64Array(Math.max(this.stride * 16, Math.ceil(this.data.length * 1.5) + this.stride));
      next.set(this.data.subarray(0, off));
      this.data = next;
    }
    this.length++;
    return off;
  }

  /** the records so far as a view of the buffer, and reset: valid until the next push (to encode at once) */
  drain(): Float64Array {
    const out = this.data.subarray(0, this.length * this.stride);
    this.length = 0;
    return out;
  }

  /** the records so far as an exact-size copy (to transfer), and reset */
  take(): Float64Array {
    const out = this.data.slice(0, this.length * this.stride);
    this.length = 0;
    return out;
  }
}

// Analytics records, shard to main thread, emitted at the end of each batch for what changed (issue 3).

/** Consensus of one line: per outcome, over fresh quotes of non-prediction books and of prediction books
 *  apart, the sum of implied probabilities, the count, and best and worst raw price with their books. */
export const CONS = {
  KIND: 0, EVENT: 1, MARKET: 2, POINT: 3, PLAYER: 4,
  /** books whose fresh quotes went into the numbers (non-prediction; prediction books in PBOOKS) */
  BOOKS: 5,
  /** outcome o's fields start at O + o * OSIZE */
  O: 6,
  SUM: 0, CNT: 1, BEST: 2, BEST_BOOK: 3, WORST: 4, WORST_BOOK: 5,
  PSUM: 6, PCNT: 7, PBEST: 8, PBEST_BOOK: 9, PWORST: 10, PWORST_BOOK: 11,
  OSIZE: 12,
  PBOOKS: 42,
  STRIDE: 43,
} as const;

/** One outcome's consensus of one line, as the shards send it (the main thread keeps whole CONS records): every
 *  outcome of a line when the line is made (or its shard restarted), then each outcome whose numbers changed in a
 *  batch, so a move of one side's quote leaves the other side's state unread in the shard and sends half the bytes
 *  (bench/analytics.ts). F is where the outcome's fields start, in the order of a CONS outcome block (CONS.SUM ...
 *  CONS.PWORST_BOOK). KIND REMOVE (OUTCOME -1) withdraws the line's consensus. */
export const CONSO = {
  KIND: 0, EVENT: 1, MARKET: 2, POINT: 3, PLAYER: 4, OUTCOME: 5, BOOKS: 6, PBOOKS: 7, F: 8,
  STRIDE: 20,
} as const;

/** An arbitrage on one line: implied sum over the best fresh effective price per outcome, and per outcome the
 *  best ARB.ALTS fresh quotes (so a request that excludes books can fall back to the next one). */
export const ARB = {
  KIND: 0, EVENT: 1, MARKET: 2, POINT: 3, PLAYER: 4, N: 5, SUM: 6, DETECTED_AT: 7,
  /** outcome o, alternative k: fields start at LEGS + (o * ALTS + k) * LSIZE; BOOK -1 means none */
  LEGS: 8, ALTS: 4, BOOK: 0, PRICE: 1, EFF: 2, LSIZE: 3,
  STRIDE: 44,
} as const;

/** A sharp book's no-vig line on one line: bit m of VALID is set when de-vig method m (engine/devig.ts
 *  DEVIG_METHODS) gave a valid set, and P + m * 3 + o is then its fair probability of outcome o; bit
 *  ADDITIVE_FLAGGED + o (engine/devig.ts) when the additive method flagged outcome o, whose entry is then NaN. Sent
 *  whenever the sharp's fresh quotes on the line change; REMOVE when it no longer has a complete fresh set. */
export const FAIR = {
  KIND: 0, EVENT: 1, MARKET: 2, POINT: 3, PLAYER: 4, SHARP: 5, VALID: 6, P: 7,
  STRIDE: 25,
} as const;

/** A quote with a positive edge against some sharp's no-vig line: one record per quote for every sharp at once.
 *  MASK bit s is set while the quote's edge against sharp index s (engine/analytics-rows.ts SHARP_BOOK) is
 *  positive under at least one de-vig method; which methods, and the fair probabilities, follow from the FAIR
 *  records and the quote's price. Sent only when the mask changes (REMOVE when it becomes 0), so PRICE and EFF
 *  are the quote's at that moment: its current price is the read model's (one point per book, market and
 *  player). */
export const EVQ = {
  KIND: 0, EVENT: 1, MARKET: 2, POINT: 3, PLAYER: 4, OUTCOME: 5, BOOK: 6, PRICE: 7, EFF: 8, MASK: 9,
  STRIDE: 10,
} as const;

/** One positive-EV row as served and compared: one quote against one sharp, every method at once. FAIR + m is
 *  method m's fair probability of the outcome when its edge is positive, NaN otherwise. Built on the main
 *  thread from EVQ and FAIR (and by the from-scratch recomputation); not sent between threads. */
export const EVR = {
  KIND: 0, EVENT: 1, MARKET: 2, POINT: 3, PLAYER: 4, OUTCOME: 5, BOOK: 6, SHARP: 7,
  PRICE: 8, EFF: 9, FAIR: 10,
  STRIDE: 16,
} as const;

/** A middle across two lines of one (event, market, player), in "over/under" terms: LO and HI are totals-style
 *  lines (for spreads, the home margin: LO = -home point of the home leg, HI = -home point of the away leg). */
export const MID = {
  KIND: 0, EVENT: 1, MARKET: 2, PLAYER: 3, LO: 4, HI: 5,
  OVER_BOOK: 6, OVER_PRICE: 7, OVER_EFF: 8, UNDER_BOOK: 9, UNDER_PRICE: 10, UNDER_EFF: 11,
  /** distinct books with a fresh quote (that counts) on any line of the group */
  BOOKS: 12,
  STRIDE: 13,
} as const;

/** Analytics record kinds. */
export const ROW = { UPSERT: 1, REMOVE: 4 } as const;
