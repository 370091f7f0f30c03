// Closing lines (issue 7): per event not yet started, the last pregame quote of every book, market, player, line
// and outcome, and the closing rows built from it when the event starts. A quote written at or after
// commence_time is never part of it (not even as a substitute for a missing side), and nothing is synthesised:
// a market with no pregame quote has no row, a side with none is null.
//
// Rows follow SPEC's closing-line row. Sides map to over/under as /props does: Over/Under on totals and props,
// home/away on moneylines and spreads (line = the home point), Yes/No on outrights (the selection in
// player_name); a three-way moneyline's draw is a row of its own with player_name "Draw" and no under side.

import { BOOKMAKERS, MARKETS } from './catalogue.js';

/** one persisted or tracked quote; player '' when none */
export interface PregameQuote {
  market: number;
  player: string;
  book: number;
  outcome: number;
  /** NaN when the market has no point */
  point: number;
  price: number;
  /** write time (ms): max(line_changed_at, verified_at) */
  ts: number;
}

export interface ClosingRow {
  source: string;
  market_key: string;
  market_label: string;
  /** '' on game markets */
  player_name: string;
  line: number | null;
  over_price: number | null;
  under_price: number | null;
  /** newest write time (ms) among the sides of the row */
  snapshot_time: number;
}

export interface EventMeta {
  id: string;
  sport: string;
  commence: number;
  /** null on futures and event markets */
  home: string | null;
  away: string | null;
  /** the built-in simulator made it (its prices are no bookmaker's): its closing rows say so */
  simulated?: boolean;
}

/** One book-line (event, market, player, book): per outcome its last pregame point, price and write time. */
export class PregameLine {
  readonly point = [Number.NaN, Number.NaN, Number.NaN];
  readonly price = [0, 0, 0];
  /** -1: no pregame quote for the outcome */
  readonly ts = [-1, -1, -1];
  dirty = false;
  constructor(readonly market: number, readonly player: string, readonly book: number) {}
}

export class PregameEvent {
  readonly lines = new Map<number, PregameLine>();
  readonly dirtyLines: PregameLine[] = [];
  /** the event's meta changed since the last take */
  metaDirty = true;
  constructor(public meta: EventMeta) {}

  /** Records a quote if written before commence and newer than the one held; true when kept. `nameOf` names a
   *  player id (-1: none) the first time its line is seen. A quote at another point than the book-line's other
   *  sides is a line move, which withdraws those sides (the store removes a book's quotes at its old point): they
   *  are kept withdrawn (price 0, the move's time), so that a side quoted before the move never pairs with one
   *  quoted after it, not even after a restart (the withdrawal is persisted like a quote). A price of 0 is such a
   *  withdrawal read back. */
  observe(key: number, market: number, player: number, nameOf: (player: number) => string, book: number, outcome: number,
    point: number, price: number, ts: number): boolean {
    if (!(ts < this.meta.commence) || outcome < 0 || outcome > 2) return false;
    let line = this.lines.get(key);
    if (line === undefined) this.lines.set(key, (line = new PregameLine(market, player < 0 ? '' : nameOf(player), book)));
    if (line.ts[outcome] > ts) return false;
    if (price > 0) {
      for (let k = 0; k < 3; k++) {
        if (k === outcome || line.ts[k] < 0 || line.price[k] === 0 || Object.is(line.point[k], point)) continue;
        // a side written later at another point: this quote's line was left since
        if (line.ts[k] > ts) return false;
        line.price[k] = 0;
        line.point[k] = Number.NaN;
        line.ts[k] = ts;
      }
    }
    line.point[outcome] = point;
    line.price[outcome] = price;
    line.ts[outcome] = ts;
    if (!line.dirty) {
      line.dirty = true;
      this.dirtyLines.push(line);
    }
    return true;
  }

  /** A quote left the store before the start (`ts`: its own last write): its side is withdrawn (price 0, persisted
   *  as a move's withdrawal is) when it is the one held, at the same point and not older than the held one. */
  withdraw(key: number, outcome: number, point: number, ts: number): void {
    const line = this.lines.get(key);
    if (line === undefined || outcome < 0 || outcome > 2 || line.price[outcome] === 0 || line.ts[outcome] > ts) return;
    if (!Object.is(line.point[outcome], point)) return;
    line.price[outcome] = 0;
    line.ts[outcome] = ts;
    if (!line.dirty) {
      line.dirty = true;
      this.dirtyLines.push(line);
    }
  }

  /** The quotes changed since the last call, for persisting; `taken` receives their lines (untake gives them back). */
  takeDirty(taken?: PregameLine[]): PregameQuote[] {
    const out: PregameQuote[] = [];
    for (const line of this.dirtyLines) {
      taken?.push(line);
      line.dirty = false;
      for (let o = 0; o < 3; o++) {
        if (line.ts[o] < 0) continue;
        out.push({ market: line.market, player: line.player, book: line.book, outcome: o, point: line.point[o], price: line.price[o], ts: line.ts[o] });
      }
    }
    this.dirtyLines.length = 0;
    return out;
  }

  /** Marks lines taken by takeDirty dirty again (their write failed): they are written with the next. */
  untake(lines: readonly PregameLine[], meta: boolean): void {
    if (meta) this.metaDirty = true;
    for (const line of lines) {
      if (line.dirty) continue;
      line.dirty = true;
      this.dirtyLines.push(line);
    }
  }

  /** The closing rows of the event: per book-line, the sides quoted before commence on the line of its newest
   *  pregame quote. */
  closingRows(): ClosingRow[] {
    const rows: ClosingRow[] = [];
    const commence = this.meta.commence;
    for (const line of this.lines.values()) {
      let newest = -1;
      // withdrawn sides (price 0) are no quotes
      const quoted = (o: number) => line.ts[o] >= 0 && line.ts[o] < commence && line.price[o] > 0;
      for (let o = 0; o < 3; o++) if (quoted(o) && (newest < 0 || line.ts[o] > line.ts[newest])) newest = o;
      if (newest < 0) continue;
      const point = line.point[newest];
      const side = (o: number): number => (quoted(o) && Object.is(line.point[o], point) ? o : -1);
      const m = MARKETS[line.market];
      const base = { source: BOOKMAKERS[line.book].key, market_key: m.key, market_label: m.label };
      const over = side(0);
      const under = side(1);
      if (over >= 0 || under >= 0) {
        rows.push({
          ...base,
          player_name: line.player,
          line: Number.isNaN(point) ? null : point,
          over_price: over >= 0 ? line.price[over] : null,
          under_price: under >= 0 ? line.price[under] : null,
          snapshot_time: Math.max(over >= 0 ? line.ts[over] : -1, under >= 0 ? line.ts[under] : -1),
        });
      }
      const draw = m.shape === 'three_way' ? side(2) : -1;
      if (draw >= 0) {
        rows.push({ ...base, player_name: 'Draw', line: Number.isNaN(point) ? null : point, over_price: line.price[draw], under_price: null, snapshot_time: line.ts[draw] });
      }
    }
    return rows;
  }
}

/** implied probability of a decimal price, 6 decimals; null for a missing side */
export function impliedProb(price: number | null): number | null {
  return price === null || !(price > 1) ? null : Math.round(1e6 / price) / 1e6;
}

/** the numeric key of a book-line within its event (as engine/read-model.ts recKey) */
export function lineKey(market: number, player: number, book: number): number {
  return (market * 2097152 + (player + 1)) * 1024 + book;
}
