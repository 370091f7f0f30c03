// What every view of player props applies alike (/props, and the props /live and one event's odds merge into
// their markets), so the same quote reads the same wherever it is asked for.

import { BOOKMAKERS } from '../../engine/catalogue.js';
import { tidy } from '../../engine/odds.js';

/** SPEC /props: the most recent row per book written within the last 60 minutes (each side judged alone) */
export const PROPS_WINDOW_MS = 60 * 60 * 1000;

/** The decimal price served for a prop side: a book's own price as sent, a DFS pick'em leg (a per-entry payout,
 *  not a single bet) at the midpoint 2.0 (+100, zero vig) or, `effective`, the operator's per-leg price from its
 *  two-leg payout (sqrt of it, tidied as every derived number). */
export function propPrice(book: number, raw: number, effective: boolean): number {
  const b = BOOKMAKERS[book];
  if (b.kind !== 'dfs') return raw;
  return effective && b.dfs_two_leg_payout > 0 ? tidy(Math.sqrt(b.dfs_two_leg_payout)) : 2;
}
