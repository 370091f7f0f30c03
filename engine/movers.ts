// Line movers (GET /v1/meta/movers): the price moves of the last 24 hours in a ring, and per quote (event, market,
// player, book, outcome) the move across a window: from the price it had when the window opened (the old price
// of its first move inside the window) to its newest, ranked by the change in implied probability.

export interface Move {
  t: number;
  event: number;
  market: number;
  player: number;
  book: number;
  outcome: number;
  point: number;
  /** the quote's point before the move (a line move at the same price changes only this) */
  fromPoint: number;
  from: number;
  to: number;
}

/** one quote's move across a window: from its price when the window opened to its newest */
export interface Mover extends Omit<Move, 't'> {
  moves: number;
  first_at: number;
  last_at: number;
  /** (1/to - 1/from) * 100: percentage points of implied probability */
  prob_change_pct: number;
}

/** a quote's last price and point as the log saw them */
class LastQuote {
  constructor(public price: number, public point: number) {}
}

export class MoveLog {
  private readonly ring: (Move | undefined)[];
  private head = 0;
  private size = 0;
  /** last price and point per quote: event -> (line key * 3 + outcome) -> its record, changed in place (one probe a
   *  price, on the main thread for every change record) */
  private readonly last = new Map<number, Map<number, LastQuote>>();
  /** every move from this time on is held (NaN before the first price): the first price seen, then the time of the
   *  newest move the ring has let go. A window opening earlier is answered from what is held, and says so. */
  heldSince = Number.NaN;

  constructor(readonly capacity = 100_000) {
    this.ring = new Array(capacity);
  }

  /** A price seen for a quote; a change from the last one seen is a move. */
  price(t: number, event: number, market: number, player: number, book: number, outcome: number, point: number, price: number): void {
    let m = this.last.get(event);
    if (m === undefined) this.last.set(event, (m = new Map()));
    const key = ((market * 2097152 + (player + 1)) * 1024 + book) * 3 + outcome;
    if (this.heldSince !== this.heldSince) this.heldSince = t;
    const q = m.get(key);
    if (q === undefined) {
      m.set(key, new LastQuote(price, point));
      return;
    }
    const prev = q.price;
    const prevPoint = q.point;
    q.price = price;
    q.point = point;
    // a book that moves to another line at the same price moved its quote too (README: a line move is a move)
    if (prev === price && Object.is(prevPoint, point)) return;
    const dropped = this.ring[this.head];
    if (dropped !== undefined && dropped.t > this.heldSince) this.heldSince = dropped.t;
    this.ring[this.head] = { t, event, market, player, book, outcome, point, fromPoint: prevPoint, from: prev, to: price };
    this.head = (this.head + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  dropEvent(event: number): void {
    this.last.delete(event);
  }

  /** the quotes that moved since `since`, largest change in implied probability first */
  movers(since: number, limit: number, keep: (event: number) => boolean = () => true): Mover[] {
    // per event, then per quote by its number (the key of price()): a string key per move cost most of a call over a
    // full ring (about 90 ms for 100,000 moves; the main-thread audit)
    const by = new Map<number, Map<number, Mover>>();
    const all: Mover[] = [];
    let lastEvent = -1;
    let kept = false;
    let inEvent: Map<number, Mover> | undefined;
    for (let i = 0; i < this.size; i++) {
      const mv = this.ring[(this.head - this.size + i + this.capacity) % this.capacity]!;
      if (mv.t < since) continue;
      if (mv.event !== lastEvent) {
        lastEvent = mv.event;
        kept = keep(mv.event);
        inEvent = by.get(mv.event);
        if (inEvent === undefined && kept) by.set(mv.event, (inEvent = new Map()));
      }
      if (!kept) continue;
      const k = ((mv.market * 2097152 + (mv.player + 1)) * 1024 + mv.book) * 3 + mv.outcome;
      const cur = inEvent!.get(k);
      if (cur === undefined) {
        const m: Mover = {
          event: mv.event, market: mv.market, player: mv.player, book: mv.book, outcome: mv.outcome, point: mv.point, fromPoint: mv.fromPoint,
          from: mv.from, to: mv.to, moves: 1, first_at: mv.t, last_at: mv.t, prob_change_pct: 0,
        };
        inEvent!.set(k, m);
        all.push(m);
      } else {
        cur.to = mv.to;
        cur.point = mv.point;
        cur.moves++;
        cur.last_at = mv.t;
      }
    }
    const out = all.filter((m) => m.from !== m.to || !Object.is(m.fromPoint, m.point));
    for (const m of out) m.prob_change_pct = Math.round((1 / m.to - 1 / m.from) * 1e6) / 1e4;
    out.sort((a, b) => Math.abs(b.prob_change_pct) - Math.abs(a.prob_change_pct) || b.last_at - a.last_at);
    return out.slice(0, limit);
  }
}
