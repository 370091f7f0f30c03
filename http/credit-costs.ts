// The credit-cost table (SPEC Limits, DESIGN.md section 3): one entry per priced endpoint template. The Router
// meters fixed costs from this table (Router.add swaps a route's own cost for the entry's), the variable ones by
// the route's rule; GET /v1/meta/credit-costs and POST /v1/meta/quote are generated from the same table.

import { CREDITS_PER_DELIVERY, WEBHOOK_DELIVERY_LABEL } from '../engine/webhook-catalogue.js';

export { WEBHOOK_DELIVERY_LABEL };

export interface CostEntry {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'EVENT';
  /** endpoint template, or for EVENT the metered event ('webhook delivery') */
  path: string;
  /** credits per call; null when the call's parameters or rows decide (see `rule`) */
  credits: number | null;
  rule: string;
  /** the least a variable cost can be */
  minimum: number;
}

function fixed(method: CostEntry['method'], path: string, credits: number): CostEntry {
  return { method, path, credits, rule: `${credits} per call`, minimum: credits };
}

const PER_1000_ROWS = '1 per 1,000 rows delivered (rows counted as sent), minimum 1';

export const CREDIT_COSTS: readonly CostEntry[] = Object.freeze([
  { method: 'GET', path: '/v1/sports/{sport_key}/odds', credits: null, minimum: 1,
    rule: 'number of markets x number of regions, minimum 1; with bookmakers=, each started group of 10 books counts as one region' },
  { method: 'GET', path: '/v1/sports/{sport_key}/events/{event_id}/odds', credits: null, minimum: 1,
    rule: 'as /odds: number of markets (game and prop) x number of regions, minimum 1; nothing for an event not found' },
  fixed('GET', '/v1/sports/{sport_key}/props', 3),
  fixed('GET', '/v1/sports/{sport_key}/live', 3),
  fixed('GET', '/v1/sports/{sport_key}/consensus', 3),
  fixed('GET', '/v1/sports/{sport_key}/middles', 3),
  fixed('GET', '/v1/prediction-markets/{sport_key}', 3),
  fixed('GET', '/v1/sports/{sport_key}/arbitrage', 10),
  fixed('GET', '/v1/inplay/arbs', 10),
  fixed('GET', '/v1/sports/{sport_key}/ev', 10),
  fixed('GET', '/v1/sports/{sport_key}/best-bets', 10),
  fixed('GET', '/v1/verdict', 5),
  fixed('POST', '/v1/parlay/verdict', 10),
  { method: 'GET', path: '/v1/historical/closing-lines.json', credits: null, minimum: 1, rule: PER_1000_ROWS },
  fixed('GET', '/v1/historical/closing-lines.csv', 1),
  { method: 'GET', path: '/v1/sports/{sport_key}/closing-lines', credits: null, minimum: 1, rule: PER_1000_ROWS },
  fixed('GET', '/v1/historical/sports/{sport_key}/coverage', 1),
  fixed('GET', '/v1/historical/sports/{sport_key}/matches', 1),
  { method: 'EVENT', path: WEBHOOK_DELIVERY_LABEL, credits: CREDITS_PER_DELIVERY, minimum: CREDITS_PER_DELIVERY,
    rule: `${CREDITS_PER_DELIVERY} per delivered event, charged to the subscription's account` },
] satisfies CostEntry[]);

const BY_ROUTE = new Map<string, CostEntry>(CREDIT_COSTS.map((e) => [`${e.method} ${e.path}`, e]));

/** The entry of an endpoint template, e.g. costEntry('GET', '/v1/verdict'); undefined means the call is free. */
export function costEntry(method: string, path: string): CostEntry | undefined {
  return BY_ROUTE.get(`${method} ${path}`);
}

/** The usage label of an endpoint template, as /v1/usage?by_endpoint=true lists it. */
export function endpointLabel(method: string, path: string): string {
  return `${method} ${path}`;
}


/** What Router.add needs of a route (kept structural so this table does not import the Router). */
export interface Priced {
  method: string;
  path: string;
  cost?(params: Record<string, unknown>, ctx: never): number;
  /** metered by the StreamReply it answers with (its cost, settled as delivered), not by `cost` */
  streamed?: boolean;
}

/**
 * Binds a route to the table: a fixed entry replaces the route's own cost (which must agree, so the two never
 * drift); a variable entry keeps the route's rule. A priced route must have a cost, or be `streamed` (its
 * StreamReply carries the cost, settled as delivered) and then have none; a route that charges credits without an
 * entry is refused, so the catalogue lists every priced call.
 */
export function meteredRoute<R extends Priced>(r: R): R & Priced {
  const e = costEntry(r.method, r.path);
  const own = (): number => {
    try {
      return r.cost!({}, undefined as never);
    } catch {
      return Number.NaN;
    }
  };
  if (r.streamed === true) {
    // its StreamReply charges; a cost rule beside it would charge twice
    if (e === undefined) throw new Error(`${r.method} ${r.path} streams a priced answer but has no entry in http/credit-costs.ts`);
    if (r.cost !== undefined) throw new Error(`${r.method} ${r.path} is metered by its stream and must have no cost rule`);
    return r;
  }
  if (e === undefined) {
    if (r.cost !== undefined && own() !== 0) throw new Error(`${r.method} ${r.path} charges credits but has no entry in http/credit-costs.ts`);
    return r;
  }
  // a priced route without its own cost would be charged by the Router and again by whatever meters it: refused
  if (r.cost === undefined) throw new Error(`${r.method} ${r.path} is priced in http/credit-costs.ts but the route has no cost rule`);
  if (e.credits === null) return r;
  if (own() !== e.credits) throw new Error(`${r.method} ${r.path} costs ${own()} but http/credit-costs.ts says ${e.credits}`);
  const credits = e.credits;
  return { ...r, cost: () => credits };
}
