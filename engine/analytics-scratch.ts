// Every analytics set recomputed from the store alone at a given time: what the incremental engine must equal
// (test/analytics-property.test.ts) and the baseline of bench/analytics.ts.

import { hasEdge, isArbitrageSum } from './analytics-math.js';
import { DEVIG_METHODS, devig } from './devig.js';
import { ARB, CONS, EVR, ROW } from './records.js';
import { LD, type PriceStore } from './price-store.js';
import {
  MIDDLE_MARKET, N_METHODS, OUTCOMES, SHARP_BOOK, evKeyOf, isFresh, lineKeyOf, midKeyOf, middlesOfGroup, writeArb,
  writeConsensus,
} from './analytics-rows.js';

export interface ScratchSets {
  cons: Map<string, Float64Array>;
  arb: Map<string, Float64Array>;
  ev: Map<string, Float64Array>;
  mid: Map<string, Float64Array>;
}

export function scratch(store: PriceStore, now: number): ScratchSets {
  const sets: ScratchSets = { cons: new Map(), arb: new Map(), ev: new Map(), mid: new Map() };
  const groups = new Set<number>();
  const fairs = new Float64Array(N_METHODS * 3);
  const implied = new Float64Array(3);
  for (let line = 0; line < store.lineIdLimit; line++) {
    if (!store.lineLive(line)) continue;
    const key = lineKeyOf(store.lineEvent(line), store.lineMarket(line), store.linePoint(line), store.linePlayer(line));
    const c = new Float64Array(CONS.STRIDE);
    writeConsensus(store, line, c, 0, now);
    sets.cons.set(key, c);
    const a = new Float64Array(ARB.STRIDE);
    if (isArbitrageSum(writeArb(store, line, false, a, 0, now))) sets.arb.set(key, a);
    if (MIDDLE_MARKET[store.lineMarket(line)] === 1) groups.add(store.lineGroup(line));
    // EV: every sharp with a complete fresh set, every other book's fresh quote, every method
    const n = OUTCOMES[store.lineMarket(line)];
    for (let s = 0; s < SHARP_BOOK.length; s++) {
      const base = store.slotOfBook(line, SHARP_BOOK[s]);
      if (base < 0) continue;
      let ok = true;
      for (let o = 0; o < n; o++) {
        if (store.priceOf(base + o) === 0 || !isFresh(store, base + o, now)) ok = false;
        else implied[o] = 1 / store.priceOf(base + o);
      }
      if (!ok) continue;
      const valid: boolean[] = [];
      for (let m = 0; m < N_METHODS; m++) {
        valid.push(devig(n === 3 ? implied : implied.subarray(0, 2), DEVIG_METHODS[m], fairs.subarray(m * 3, m * 3 + 3)));
      }
      for (let o = 0; o < n; o++) {
        const ladder = store.ladder(line, o);
        for (let k = 0; k < ladder.length; k += LD.STRIDE) {
          const book = ladder[k + LD.BOOK];
          const slot = ladder[k + LD.SLOT];
          if (book === SHARP_BOOK[s] || !isFresh(store, slot, now)) continue;
          const eff = ladder[k + LD.PRICE];
          const r = new Float64Array(EVR.STRIDE);
          let any = false;
          for (let m = 0; m < N_METHODS; m++) {
            const p = fairs[m * 3 + o];
            const positive = valid[m] && hasEdge(p, eff);
            r[EVR.FAIR + m] = positive ? p : Number.NaN;
            any ||= positive;
          }
          if (!any) continue;
          r[EVR.KIND] = ROW.UPSERT;
          r[EVR.EVENT] = store.lineEvent(line);
          r[EVR.MARKET] = store.lineMarket(line);
          r[EVR.POINT] = store.linePoint(line);
          r[EVR.PLAYER] = store.linePlayer(line);
          r[EVR.OUTCOME] = o;
          r[EVR.BOOK] = book;
          r[EVR.SHARP] = SHARP_BOOK[s];
          r[EVR.PRICE] = ladder[k + LD.RAW];
          r[EVR.EFF] = eff;
          sets.ev.set(evKeyOf(r, 0), r);
        }
      }
    }
  }
  for (const g of groups) {
    const lines = store.groupLines(g);
    if (lines.length < 2) continue;
    middlesOfGroup(store, lines, false, now, -1, null, (rec) => sets.mid.set(midKeyOf(rec, 0), rec.slice()));
  }
  return sets;
}


