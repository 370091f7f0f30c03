// The history writer (DESIGN.md section 1): follows the hub's change batches to keep, per event not yet started,
// the last pregame quote of every book-line and outcome (engine/closing.ts), persists that state every
// `persistMs` so an event that starts while the process is down is still captured at the next start, and writes
// each event's closing snapshot to PostgreSQL once its commence_time has passed. Nodes of a cluster all track the
// same events; each capture is claimed in PostgreSQL (sql/history.ts captureClosing), so one node writes it.

import { lineKey, PregameEvent, type EventMeta, type PregameLine } from '../engine/closing.js';
import { CHANGE, CHG } from '../engine/records.js';
import type { EventView } from '../engine/read-model.js';
import { sqlStateClass, type Database } from '../sql/connection.js';
import { captureClosing, dropOpenEvent, loadOpenEvents, upsertHistoryEvents, upsertPregame } from '../sql/history.js';
import type { PregameQuote } from '../engine/closing.js';
import type { ChangeBatch, Hub } from './hub.js';

export interface HistoryConfig {
  /** how often the pregame state is written to PostgreSQL (README: History and status) */
  persistMs: number;
  /** how often started events are looked for and captured */
  captureMs: number;
}

export const DEFAULT_HISTORY_CONFIG: HistoryConfig = { persistMs: 15_000, captureMs: 1_000 };

export interface HistoryDeps {
  hub: Hub;
  db: Database;
  now(): number;
  log?(msg: string): void;
  /** an event's closing rows were written (the export cache drops what they make out of date) */
  onCapture?(meta: EventMeta): void;
}

function metaOf(ev: EventView): EventMeta {
  const game = ev.kind === 'game';
  return { id: ev.id, sport: ev.sport, commence: ev.commence, home: game ? ev.home : null, away: game ? ev.away : null, simulated: ev.source === 'sim' };
}

/** what one pass of persist() took from an event: written, given back (untake), or dropped when refused */
interface Taken {
  pe: PregameEvent;
  lines: PregameLine[];
  meta: boolean;
  quotes: { eventId: string; q: PregameQuote }[];
}

/** a PostgreSQL data exception (SQLSTATE class 22: invalid text, out-of-range values), which no retry cures */
function isDataException(e: unknown): boolean {
  return sqlStateClass(e) === '22';
}

export class HistoryService {
  private readonly open = new Map<string, PregameEvent>();
  /** events captured by this process: later batches for them are ignored */
  private readonly captured = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  readonly counters = { captured: 0, closingRows: 0, persistedQuotes: 0, failures: 0 };
  /** the served spelling of a player id, bound once: no closure per change record */
  private readonly nameOf: (player: number) => string;

  constructor(private readonly deps: HistoryDeps, private readonly cfg: HistoryConfig = DEFAULT_HISTORY_CONFIG) {
    this.nameOf = (p) => deps.hub.players.name(p);
  }

  /** Loads the persisted pregame state, captures the events that started meanwhile, then follows the hub. */
  async start(): Promise<void> {
    const { hub } = this.deps;
    const nameOf = this.nameOf;
    for (const oe of await loadOpenEvents(this.deps.db)) {
      const pe = new PregameEvent(oe.meta);
      for (const q of oe.quotes) {
        const player = q.player === '' ? -1 : hub.players.id(q.player);
        pe.observe(lineKey(q.market, player, q.book), q.market, player, nameOf, q.book, q.outcome, q.point, q.price, q.ts);
      }
      pe.takeDirty();
      pe.metaDirty = false;
      this.open.set(oe.meta.id, pe);
    }
    await this.enqueue(() => this.captureDue());
    hub.onBatch((b) => this.onBatch(b));
    hub.onFinal((ids) => this.onFinal(ids));
    const capture = setInterval(() => void this.enqueue(() => this.captureDue()), this.cfg.captureMs);
    const persist = setInterval(() => void this.enqueue(() => this.persist()), this.cfg.persistMs);
    capture.unref();
    persist.unref();
    this.timers = [capture, persist];
  }

  /** Captures every started event and persists the pregame state now (tests; shutdown). */
  flush(): Promise<void> {
    return this.enqueue(async () => {
      await this.captureDue();
      await this.persist();
    });
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.flush();
    this.closed = true;
  }

  /** events tracked and not yet captured */
  get openEvents(): number {
    return this.open.size;
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(() => (this.closed ? undefined : fn())).catch((e: unknown) => {
      this.counters.failures++;
      this.deps.log?.(`history writer: ${e instanceof Error ? e.message : String(e)}`);
    });
    this.chain = next;
    return next;
  }

  /** Events made final: one that ends before its start (a cancelled game, an event gone upstream) has no closing
   *  line; its pregame state goes (it was captured at its planned start, and listed by /matches). One that ends
   *  after its start is captured as usual, if it was not yet. */
  private onFinal(ids: readonly string[]): void {
    const now = this.deps.now();
    for (const id of ids) {
      const pe = this.open.get(id);
      if (pe === undefined || pe.meta.commence <= now) continue;
      this.open.delete(id);
      void this.enqueue(() => dropOpenEvent(this.deps.db, id));
    }
  }

  private onBatch(batch: ChangeBatch): void {
    const rm = this.deps.hub.readModel;
    const d = batch.records;
    const now = this.deps.now();
    let lastIdx = -1;
    let pe: PregameEvent | undefined;
    for (let i = 0, off = 0; i < batch.count; i++, off += CHG.STRIDE) {
      const removed = (d[off + CHG.KIND] | 0) === CHANGE.REMOVED;
      const idx = d[off + CHG.EVENT] | 0;
      if (idx !== lastIdx || removed) {
        lastIdx = removed ? -1 : idx;
        const ev = rm.event(idx);
        // a removal concerns an event already followed; a quote starts following one
        pe = ev === undefined ? undefined : removed ? this.open.get(ev.id) : this.eventFor(ev);
      }
      if (pe === undefined) continue;
      const changed = d[off + CHG.LINE_CHANGED_AT];
      const verified = d[off + CHG.VERIFIED_AT];
      const market = d[off + CHG.MARKET] | 0;
      const player = d[off + CHG.PLAYER] | 0;
      const book = d[off + CHG.BOOK] | 0;
      const ts = verified > changed ? verified : changed;
      if (removed) {
        // a quote that left before the start (a withdrawn market, a moved line's old point, a game made final): not
        // a closing price (the withdrawn line stood in the export as its book's close). At or after the start the
        // pregame quotes leave the store by design, and the capture takes the state as it was
        if (now < pe.meta.commence) pe.withdraw(lineKey(market, player, book), d[off + CHG.OUTCOME] | 0, d[off + CHG.POINT], ts);
        continue;
      }
      pe.observe(lineKey(market, player, book), market, player, this.nameOf, book,
        d[off + CHG.OUTCOME] | 0, d[off + CHG.POINT], d[off + CHG.PRICE], ts);
    }
  }

  private eventFor(ev: EventView): PregameEvent | undefined {
    let pe = this.open.get(ev.id);
    if (pe === undefined) {
      if (ev.commence <= this.deps.now()) return undefined;
      const again = this.captured.delete(ev.id);
      this.open.set(ev.id, (pe = new PregameEvent(metaOf(ev))));
      // captured, and pregame again: its start moved later (a game delayed after its planned start). Followed anew
      // from the quotes held now, and captured again at the new start, its rows replacing the first capture's
      if (again) this.seed(pe, ev);
      return pe;
    }
    const m = pe.meta;
    if (m.commence !== ev.commence || m.sport !== ev.sport || (ev.kind === 'game' && (m.home !== ev.home || m.away !== ev.away))) {
      pe.meta = metaOf(ev);
      pe.metaDirty = true;
    }
    return pe;
  }

  /** The event's quotes held now, as pregame quotes (those written before its start). */
  private seed(pe: PregameEvent, ev: EventView): void {
    const rm = this.deps.hub.readModel;
    for (const r of ev.records) {
      const market = rm.market(r);
      const player = rm.player(r);
      const book = rm.book(r);
      for (let o = 0; o < 3; o++) {
        const price = rm.price(r, o);
        if (!(price > 0)) continue;
        const c = rm.changedAt(r, o);
        const v = rm.verifiedAt(r, o);
        pe.observe(lineKey(market, player, book), market, player, this.nameOf, book, o, rm.point(r), price, v > c ? v : c);
      }
    }
  }

  private async captureDue(): Promise<void> {
    const now = this.deps.now();
    for (const [id, pe] of this.open) {
      // a rescheduled event follows the hub's current start time
      const rec = this.deps.hub.event(id);
      if (rec !== undefined && rec.commence !== pe.meta.commence) {
        pe.meta = { ...pe.meta, commence: rec.commence };
        pe.metaDirty = true;
      }
      if (pe.meta.commence > now) continue;
      const rows = pe.closingRows();
      // false: another node of the cluster captured it first (its rows stand; the export cache drops alike)
      let mine: boolean;
      try {
        mine = await captureClosing(this.deps.db, pe.meta, rows, now);
      } catch (e) {
        // a row the database refuses (a data exception, SQLSTATE class 22) would fail every pass and hold up the
        // capture of every event after it: the event is dropped with a log line; anything else (the database out
        // of reach) ends the pass, retried at the next
        if (!isDataException(e)) throw e;
        this.counters.failures++;
        this.deps.log?.(`history writer: closing lines of ${id} refused by the database, not captured: ${e instanceof Error ? e.message : String(e)}`);
        this.open.delete(id);
        continue;
      }
      this.deps.onCapture?.(pe.meta);
      this.open.delete(id);
      this.captured.add(id);
      if (!mine) continue;
      this.counters.captured++;
      this.counters.closingRows += rows.length;
    }
  }

  private async persist(): Promise<void> {
    const taken: Taken[] = [];
    for (const pe of this.open.values()) {
      const meta = pe.metaDirty;
      pe.metaDirty = false;
      const lines: PregameLine[] = [];
      const quotes = pe.takeDirty(lines).map((q) => ({ eventId: pe.meta.id, q }));
      if (meta || lines.length > 0) taken.push({ pe, lines, meta, quotes });
    }
    if (taken.length === 0) return;
    try {
      await this.write(taken);
    } catch (e) {
      if (!isDataException(e)) {
        // written with the next pass (the database out of reach): taken and dropped, a pregame state written
        // before the outage would have stood after a restart as the closing line
        for (const t of taken) t.pe.untake(t.lines, t.meta);
        throw e;
      }
      // a row the database refuses fails the whole write: each event alone, so only the refused one is lost
      for (let i = 0; i < taken.length; i++) {
        try {
          await this.write([taken[i]]);
        } catch (e2) {
          if (!isDataException(e2)) {
            for (const t of taken.slice(i)) t.pe.untake(t.lines, t.meta);
            throw e2;
          }
          this.counters.failures++;
          this.deps.log?.(`history writer: pregame state of ${taken[i].pe.meta.id} refused by the database, not kept: ${e2 instanceof Error ? e2.message : String(e2)}`);
        }
      }
    }
  }

  private async write(taken: readonly Taken[]): Promise<void> {
    const metas = taken.filter((t) => t.meta).map((t) => t.pe.meta);
    const quotes = taken.flatMap((t) => t.quotes);
    if (metas.length > 0) await upsertHistoryEvents(this.deps.db, metas);
    if (quotes.length > 0) await upsertPregame(this.deps.db, quotes);
    this.counters.persistedQuotes += quotes.length;
  }
}
