// GET /v1/calc/*: the odds math of issue 3 as calculators over prices the caller types (SPEC "Other endpoints
// mentioned": `/v1/calc/*`). Stateless: no stored price is read, so they cost no credits (as /v1/meta/*), but they
// take a key like every priced endpoint. The numbers come from the functions the analytics views use
// (engine/odds.ts, engine/devig.ts, engine/analytics-math.ts), tidied to 12 significant digits as those views serve
// them. Prices are American with a sign (-110, +150) or decimal above 1 (1.91); lists are comma-separated.

import { NOISE, edgePct, effectivePrice, hasEdge, holdPct, isArbitrageSum, kelly, middle, profitPct } from '../../engine/analytics-math.js';
import { DEVIG_METHODS, bookSum, devig, type DevigMethod } from '../../engine/devig.js';
import { decimalToAmerican, tidy } from '../../engine/odds.js';
import { invalid, queryPrice, type ParamSpec } from '../params.js';
import type { Reply, Route } from '../router.js';
import { compile } from '../serialize.js';

/** the highest combined parlay price served */
const MAX_PARLAY_PRICE = 1e12;
/** outcomes a price list may hold: a two-way or three-way market, or an outright's field */
const MAX_OUTCOMES = 30;

const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const str = { type: 'string' } as const;
const nullableNum = { type: ['number', 'null'] } as const;
const numArr = { type: 'array', items: num } as const;
const nullableNumArr = { type: 'array', items: nullableNum } as const;
const closed = (properties: Record<string, object>) =>
  ({ type: 'object', additionalProperties: false, required: Object.keys(properties), properties }) as const;

const priceFields = { price: num, price_american: int, implied_pct: num } as const;
const OddsCalcSchema = closed(priceFields);
const MethodSchema = closed({ valid: bool, fair_prob_pct: nullableNumArr, fair_price: nullableNumArr });
const DevigCalcSchema = closed({
  prices: numArr, implied_pct: numArr, implied_sum: num, overround_pct: num, devigged: bool, reason: { type: ['string', 'null'] },
  methods: closed(Object.fromEntries(DEVIG_METHODS.map((m) => [m, MethodSchema]))),
});
const ArbLegSchema = closed({ price: num, price_american: int, commission_pct: num, effective_price: num, stake_pct: num, stake: num, payout: num });
const ArbCalcSchema = closed({ implied_sum: num, is_arbitrage: bool, profit_pct: num, total_stake: num, guaranteed_payout: num, legs: { type: 'array', items: ArbLegSchema } });
const KellyCalcSchema = closed({
  ...priceFields, effective_price: num, fair_prob_pct: num, fair_price: num, edge_pct: num, is_positive_ev: bool,
  full_kelly: num, kelly: num, kelly_fraction: num, bankroll: nullableNum, stake: nullableNum,
});
const EvCalcSchema = closed({
  ...priceFields, effective_price: num, outcome: int, sharp_prices: numArr, devig: str, fair_prob_pct: num, fair_price: num,
  edge_pct: num, is_positive_ev: bool, full_kelly: num, kelly: num, kelly_fraction: num, bankroll: nullableNum, stake: nullableNum,
  by_method: closed(Object.fromEntries(DEVIG_METHODS.map((m) => [m, closed({ fair_prob_pct: nullableNum, edge_pct: nullableNum })]))),
});
const MiddleCalcSchema = closed({
  over: closed({ line: num, ...priceFields }), under: closed({ line: num, ...priceFields }),
  window: closed({ low: num, high: num, width: num }), hit_numbers: numArr,
  push_numbers: { type: 'array', items: closed({ number: num, net: num }) },
  profit_if_hit: { type: ['number', 'null'] }, net_if_below: num, net_if_above: num, break_even_hit_rate: { type: ['number', 'null'] },
});
const ParlayCalcSchema = closed({ legs: { type: 'array', items: closed(priceFields) }, ...priceFields, stake: nullableNum, payout: nullableNum });

const oddsJson = compile(OddsCalcSchema);
const devigJson = compile(DevigCalcSchema);
const arbJson = compile(ArbCalcSchema);
const kellyJson = compile(KellyCalcSchema);
const evJson = compile(EvCalcSchema);
const middleJson = compile(MiddleCalcSchema);
const parlayJson = compile(ParlayCalcSchema);

const PRICE_HELP = 'American with a sign (-110, +150; encode + as %2B) or decimal (1.91), from 1.00001 (-10000000) to 100000 (+9999900)';

/** One price parameter as decimal odds; a 422 naming it otherwise. */
function price(name: string, raw: string): number {
  const d = queryPrice(raw);
  if (!(d > 1)) invalid(name, `must be ${PRICE_HELP}`, raw);
  return d;
}

/** A comma-separated list of prices, in order and with repeats (two sides at 1.91 are two prices). */
function prices(name: string, raw: string, min: number, max: number): number[] {
  const items = raw.split(',');
  if (items.length < min || items.length > max) invalid(name, `must list ${min} to ${max} prices, comma-separated`, raw);
  return items.map((item, i) => {
    const d = queryPrice(item);
    if (!(d > 1)) invalid(name, `price ${i + 1} (${JSON.stringify(item)}) must be ${PRICE_HELP}`, raw);
    return d;
  });
}

/** A list of percents in [0, 100), one per price (commissions); all zero when absent. */
function percents(name: string, raw: string | undefined, n: number): number[] {
  if (raw === undefined) return new Array<number>(n).fill(0);
  const items = raw.split(',');
  if (items.length !== n) invalid(name, `must list one percent per price (${n})`, raw);
  return items.map((item) => {
    const text = item.trim();
    // one way to match each text (http/params.ts DECIMAL: `\d+\.?\d*` backtracked quadratically on long digit runs)
    const x = /^(\d+(\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
    if (!(x >= 0 && x < 100)) invalid(name, 'each must be a percent from 0 up to (not including) 100', raw);
    return x;
  });
}

const priceOf = (d: number) => ({ price: tidy(d), price_american: decimalToAmerican(d), implied_pct: tidy(100 / d) });

const commissionParam: ParamSpec = { name: 'commission_pct', type: 'number', default: 0, min: 0, max: 99.99, description: 'Commission on net winnings of the priced side (an exchange price), percent' };

const kellyParams: ParamSpec[] = [
  { name: 'kelly', type: 'number', default: 0.5, min: 0, max: 1, description: 'Kelly fraction (0.5: half Kelly, as /ev serves kelly_fraction)' },
  { name: 'bankroll', type: 'number', min: 0.01, max: 1e12, description: 'With a +EV price, the stake kelly_fraction gives' },
];

/** Kelly outputs of fair probability p at effective price e: full Kelly, the fraction asked, the stake. */
function staking(p: number, e: number, fraction: number, bankroll: number | undefined) {
  const full = kelly(p, e, 1) || 0;
  const part = full * fraction;
  return {
    kelly: fraction, kelly_fraction: tidy(part),
    bankroll: bankroll ?? null, stake: bankroll === undefined ? null : tidy(part * bankroll),
    full_kelly: tidy(full),
  };
}

function ok(body: string): Reply {
  return { status: 200, body };
}

export function calcRoutes(): Route[] {
  const route = (path: string, summary: string, params: ParamSpec[], response: object, handle: Route['handle']): Route =>
    ({ method: 'GET', path, auth: 'key', tag: 'calculators', summary, params, response, handle });
  return [
    route('/v1/calc/odds', 'Converts one price: decimal, American and implied probability',
      [{ name: 'price', type: 'string', required: true, description: `The price: ${PRICE_HELP}` }],
      OddsCalcSchema,
      (ctx) => ok(oddsJson(priceOf(price('price', ctx.params.price as string))))),

    route('/v1/calc/devig', "Fair probabilities of one complete outcome set by every de-vig method (issue 3's math)",
      [{ name: 'prices', type: 'string', required: true, description: `Every outcome's price, comma-separated (2 to ${MAX_OUTCOMES}): ${PRICE_HELP}` }],
      DevigCalcSchema,
      (ctx) => {
        const d = prices('prices', ctx.params.prices as string, 2, MAX_OUTCOMES);
        const implied = d.map((x) => 1 / x);
        const S = bookSum(implied);
        const out = new Float64Array(d.length);
        const methods: Record<string, object> = {};
        for (const m of DEVIG_METHODS) {
          const valid = devig(implied, m as DevigMethod, out);
          // the additive method leaves a side it drives negative NaN: flagged and excluded (issue 3)
          const p = [...out].map((x) => (valid && Number.isFinite(x) ? x : null));
          methods[m] = { valid, fair_prob_pct: p.map((x) => (x === null ? null : tidy(x * 100))), fair_price: p.map((x) => (x === null ? null : tidy(1 / x))) };
        }
        // a zero-margin set (1.08 / 13.5, whose doubles sum to 0.9999999999999999) is de-vigged as it is (devig.ts)
        const devigged = (methods.multiplicative as { valid: boolean }).valid;
        return ok(devigJson({
          prices: d.map(tidy), implied_pct: implied.map((x) => tidy(x * 100)), implied_sum: tidy(S), overround_pct: holdPct(S),
          devigged, reason: devigged ? null : 'the implied probabilities sum below 1 (an arbitrage or stale prices): not de-vigged', methods,
        }));
      }),

    route('/v1/calc/arbitrage', 'Stakes and profit of backing every outcome at the given prices (exchange commission optional)',
      [
        { name: 'prices', type: 'string', required: true, description: `Every outcome's best price, comma-separated (2 to ${MAX_OUTCOMES}): ${PRICE_HELP}` },
        { name: 'commission_pct', type: 'string', description: 'Commission on net winnings per price, percents comma-separated (an exchange leg counts at 1 + (d - 1)(1 - c)); default 0' },
        { name: 'stake', type: 'number', default: 100, min: 0.01, max: 1e12, description: 'Total stake split over the outcomes' },
      ],
      ArbCalcSchema,
      (ctx) => {
        const p = ctx.params;
        const d = prices('prices', p.prices as string, 2, MAX_OUTCOMES);
        const c = percents('commission_pct', p.commission_pct as string | undefined, d.length);
        const eff = d.map((x, i) => effectivePrice(x, c[i]! / 100));
        if (eff.some((e) => !(e > 1))) invalid('commission_pct', 'leaves a price worth nothing (effective price 1)', p.commission_pct);
        const S = eff.reduce((a, e) => a + 1 / e, 0);
        const total = p.stake as number;
        // stakes in proportion to 1 / effective price pay the same whatever wins: total / S
        const legs = d.map((x, i) => {
          const share = 1 / eff[i]! / S;
          return {
            price: tidy(x), price_american: decimalToAmerican(x), commission_pct: c[i], effective_price: tidy(eff[i]!),
            stake_pct: tidy(share * 100), stake: tidy(share * total), payout: tidy(share * total * eff[i]!),
          };
        });
        return ok(arbJson({
          // within the float noise of 1 the set neither wins nor loses: 0, not 2.2e-14 %
          implied_sum: tidy(S), is_arbitrage: isArbitrageSum(S), profit_pct: holdPct(S) === 0 ? 0 : profitPct(S), total_stake: total,
          guaranteed_payout: tidy(total / S), legs,
        }));
      }),

    route('/v1/calc/kelly', 'Edge and Kelly stake of a price against a fair probability (give fair_prob_pct or fair_price)',
      [
        { name: 'price', type: 'string', required: true, description: `The price offered: ${PRICE_HELP}` },
        { name: 'fair_prob_pct', type: 'number', min: 0, max: 100, exclusive: true, description: 'Fair probability of the side, percent (exclusive of 0 and 100)' },
        { name: 'fair_price', type: 'string', description: `Fair price of the side instead of fair_prob_pct: ${PRICE_HELP}` },
        commissionParam,
        ...kellyParams,
      ],
      KellyCalcSchema,
      (ctx) => {
        const p = ctx.params;
        const d = price('price', p.price as string);
        if ((p.fair_prob_pct === undefined) === (p.fair_price === undefined)) {
          invalid(p.fair_prob_pct === undefined ? 'fair_prob_pct' : 'fair_price', 'give exactly one of fair_prob_pct and fair_price', p.fair_price ?? p.fair_prob_pct ?? null);
        }
        const fair = p.fair_prob_pct !== undefined ? (p.fair_prob_pct as number) / 100 : 1 / price('fair_price', p.fair_price as string);
        const e = effectivePrice(d, (p.commission_pct as number) / 100);
        return ok(kellyJson({
          ...priceOf(d), effective_price: tidy(e), fair_prob_pct: tidy(fair * 100), fair_price: tidy(1 / fair),
          edge_pct: edgePct(fair, e), is_positive_ev: hasEdge(fair, e),
          ...staking(fair, e, p.kelly as number, p.bankroll as number | undefined),
        }));
      }),

    route('/v1/calc/ev', "Edge of a price against a sharp line's no-vig fair probability, by a chosen de-vig method",
      [
        { name: 'price', type: 'string', required: true, description: `The price offered: ${PRICE_HELP}` },
        { name: 'sharp', type: 'string', required: true, description: `The sharp book's complete line, every outcome's price comma-separated (2 to ${MAX_OUTCOMES})` },
        { name: 'outcome', type: 'integer', default: 0, min: 0, max: MAX_OUTCOMES - 1, description: "Which of sharp's prices is the priced side's (0: the first)" },
        { name: 'devig', type: 'enum', values: DEVIG_METHODS, default: 'multiplicative', description: 'De-vig method of the fair line' },
        commissionParam,
        ...kellyParams,
      ],
      EvCalcSchema,
      (ctx) => {
        const p = ctx.params;
        const d = price('price', p.price as string);
        const sharp = prices('sharp', p.sharp as string, 2, MAX_OUTCOMES);
        const o = p.outcome as number;
        if (o >= sharp.length) invalid('outcome', `must be below the number of sharp prices (${sharp.length})`, o);
        const implied = sharp.map((x) => 1 / x);
        if (!(bookSum(implied) >= 1 - NOISE)) invalid('sharp', 'sums below 1 in implied probability (an arbitrage or stale prices): not de-vigged', p.sharp);
        const e = effectivePrice(d, (p.commission_pct as number) / 100);
        const out = new Float64Array(sharp.length);
        const by: Record<string, { fair_prob_pct: number | null; edge_pct: number | null }> = {};
        let fair = Number.NaN;
        for (const m of DEVIG_METHODS) {
          const f = devig(implied, m as DevigMethod, out) && Number.isFinite(out[o]!) ? out[o]! : null;
          by[m] = { fair_prob_pct: f === null ? null : tidy(f * 100), edge_pct: f === null ? null : edgePct(f, e) };
          if (m === p.devig && f !== null) fair = f;
        }
        // why, per method: only additive goes negative (a longshot); the solved methods fail to converge on an
        // extreme line (a message that blamed additive for odds_ratio on 1.00001 / 1.00001 misled)
        if (!(fair > 0 && fair < 1)) {
          const why = p.devig === 'additive' ? 'additive goes negative on a longshot' : p.devig === 'worst_case' ? 'none of the methods it takes gives one'
            : 'its solution does not converge on prices this extreme';
          invalid('devig', `${p.devig as string} gives this side no fair probability (${why}); choose another method`, p.devig);
        }
        return ok(evJson({
          ...priceOf(d), effective_price: tidy(e), outcome: o, sharp_prices: sharp.map(tidy), devig: p.devig, fair_prob_pct: tidy(fair * 100),
          fair_price: tidy(1 / fair), edge_pct: edgePct(fair, e), is_positive_ev: hasEdge(fair, e),
          ...staking(fair, e, p.kelly as number, p.bankroll as number | undefined), by_method: by,
        }));
      }),

    route('/v1/calc/middle', 'Outcomes of Over at one line and Under at a higher line, per 100 staked on each',
      [
        { name: 'over_line', type: 'number', required: true, min: -10_000, max: 10_000, description: 'Line of the Over (or the favourite\'s spread taken as a total of margin)' },
        { name: 'over_price', type: 'string', required: true, description: `Price of the Over: ${PRICE_HELP}` },
        { name: 'under_line', type: 'number', required: true, min: -10_000, max: 10_000, description: 'Line of the Under, above over_line' },
        { name: 'under_price', type: 'string', required: true, description: `Price of the Under: ${PRICE_HELP}` },
      ],
      MiddleCalcSchema,
      (ctx) => {
        const p = ctx.params;
        const lo = p.over_line as number;
        const hi = p.under_line as number;
        const op = price('over_price', p.over_price as string);
        const up = price('under_price', p.under_price as string);
        // a line is whole, half or quarter (an Asian line, settled as two halves): 220.3 is no book's line
        for (const [name, v] of [['over_line', lo], ['under_line', hi]] as const) if (!Number.isInteger(v * 4)) invalid(name, 'must be a multiple of 0.25 (a whole, half or quarter line)', p[name]);
        if (!(hi > lo)) invalid('under_line', 'must be above over_line (a middle needs a window)', hi);
        if (hi - lo > 1000) invalid('under_line', 'must be within 1000 of over_line', hi);
        const m = middle(lo, op, hi, up)!;
        return ok(middleJson({
          over: { line: lo, ...priceOf(op) }, under: { line: hi, ...priceOf(up) }, window: m.window, hit_numbers: m.hit_numbers,
          push_numbers: m.push_numbers.map((x) => ({ number: x.number, net: tidy(x.net) })),
          profit_if_hit: m.profit_if_hit === null ? null : tidy(m.profit_if_hit), net_if_below: tidy(m.net_if_below), net_if_above: tidy(m.net_if_above),
          break_even_hit_rate: m.break_even_hit_rate === null ? null : tidy(m.break_even_hit_rate),
        }));
      }),

    route('/v1/calc/parlay', 'Combined price of independent legs (the product of their decimal prices)',
      [
        { name: 'prices', type: 'string', required: true, description: `Each leg's price, comma-separated (2 to ${MAX_OUTCOMES}): ${PRICE_HELP}` },
        { name: 'stake', type: 'number', min: 0.01, max: 1e12, description: 'With a stake, the payout' },
      ],
      ParlayCalcSchema,
      (ctx) => {
        const p = ctx.params;
        const d = prices('prices', p.prices as string, 2, MAX_OUTCOMES);
        const combined = d.reduce((a, x) => a * x, 1);
        // American display stays an exact integer (below 2^53) up to here
        if (!(combined <= MAX_PARLAY_PRICE)) invalid('prices', `combine to more than ${MAX_PARLAY_PRICE} (decimal)`, p.prices);
        const stake = p.stake as number | undefined;
        return ok(parlayJson({
          legs: d.map(priceOf), ...priceOf(combined), stake: stake ?? null, payout: stake === undefined ? null : tidy(stake * combined),
        }));
      }),
  ];
}
