// Per-book freshness thresholds (SPEC "Source freshness classes"). A quote older than its book's `stale_s`
// takes no part in arbitrage, EV, consensus or middles.

import { BOOKMAKERS } from './catalogue.js';
import type { BookDef } from './types.js';

export interface SlaClass {
  name: string;
  tight_s: number;
  slack_s: number;
  stale_s: number;
}

export const SLA_CLASSES: Readonly<Record<string, SlaClass>> = Object.freeze({
  /** sharp books and the busiest US books: polled every few seconds */
  fast: { name: 'fast', tight_s: 15, slack_s: 60, stale_s: 180 },
  standard: { name: 'standard', tight_s: 30, slack_s: 120, stale_s: 300 },
  /** SPEC: the slower class, 120 / 360 / 900 s */
  exchange_slow: { name: 'exchange_slow', tight_s: 120, slack_s: 360, stale_s: 900 },
  /** DFS pick'em boards move rarely */
  dfs: { name: 'dfs', tight_s: 300, slack_s: 900, stale_s: 3600 },
});

/** books whose lines move first: the candidates for EV's sharp reference */
export const SHARP_BOOKS: readonly string[] = Object.freeze(['pinnacle', 'betfair_ex_uk', 'smarkets', 'matchbook', 'lowvig']);

const FAST = new Set(['pinnacle', 'draftkings', 'fanduel', 'betmgm', 'lowvig', 'betonlineag']);

export function slaClassOf(b: BookDef): SlaClass {
  if (b.kind === 'exchange' || b.kind === 'prediction') return SLA_CLASSES.exchange_slow;
  if (b.kind === 'dfs') return SLA_CLASSES.dfs;
  return FAST.has(b.key) ? SLA_CLASSES.fast : SLA_CLASSES.standard;
}

/** stale threshold in ms per book id (catalogue index) */
export const STALE_MS: Float64Array = Float64Array.from(BOOKMAKERS, (b) => slaClassOf(b).stale_s * 1000);
