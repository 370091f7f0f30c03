// Off-and-on comparisons on a shared virtual machine whose timings swing by tens of percent between runs minutes
// apart: the two configurations run in turn, `rounds` times each, so both see the same spells of noise. Reported:
// each configuration's best run (noise here only ever slows a run, so the best is the nearest to the undisturbed
// speed), and the ratios of the runs paired in time (on after off), whose median and range show how far a single
// pair can be trusted.

import { median } from '../../engine/verdict-best-bets.js';

export interface Alternation {
  /** best run of each configuration (a rate: higher is better) */
  off: number;
  on: number;
  /** on / off of the best runs */
  ratio: number;
  /** on / off of each pair of runs, sorted */
  pairs: number[];
}

/** BENCH_ROUNDS: a whole number of rounds, at least 1 (anything else: the default, 5) */
export const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 5)) || 5);

export async function alternate(run: (on: boolean) => Promise<number>, rounds = ROUNDS): Promise<Alternation> {
  let off = 0;
  let on = 0;
  const pairs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const a = await run(false);
    const b = await run(true);
    off = Math.max(off, a);
    on = Math.max(on, b);
    pairs.push(b / a);
  }
  pairs.sort((x, y) => x - y);
  return { off, on, ratio: on / off, pairs };
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

/** "71 %; pairs 66 % (64 % to 75 %)": the best runs' ratio, then the median and range of the paired ratios */
export function describe(a: Alternation): string {
  return `${pct(a.ratio)}; pairs ${pct(median([...a.pairs]))} (${pct(a.pairs[0])} to ${pct(a.pairs[a.pairs.length - 1])})`;
}
