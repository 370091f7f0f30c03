// GET /v1/calc/* over a real socket: the odds math of issue 3 as calculators. Every expected number is worked by
// hand beside it (fractions where they are exact), and the served numbers are tidied to 12 significant digits.

import t from 'tap';
import { startTestApp } from './helpers/app.js';

const app = await startTestApp(t);
// a paid tier: the bad-input sweep below sends more than the free tier's 60 requests a second
const key = await app.key('pro', 1000);

interface ErrBody { message: string; error_code: string; detail?: { loc: unknown[]; msg: string }[] }
async function calc<T = any>(path: string, k: string | null = key): Promise<{ res: Response; body: T }> {
  const res = await app.get(`/v1/calc/${path}`, k === null ? {} : { 'X-API-Key': k });
  return { res, body: (await res.json()) as T };
}
/** 12 significant digits, as the service serves a derived number */
const d12 = (x: number) => Number(x.toPrecision(12));

t.test('calc - odds: decimal, American, implied probability', async (t) => {
  const cases: [string, number, number, number][] = [
    // -110: 1 + 100/110 = 21/11; implied 11/21 = 52.380952381 %
    ['-110', d12(21 / 11), -110, 52.380952381],
    // +150 (encoded, and unencoded: a '+' in a query string arrives as a blank)
    ['%2B150', 2.5, 150, 40],
    ['+150', 2.5, 150, 40],
    // 1.91: 100 / 0.91 = 109.89 -> -110; implied 100 / 1.91 = 52.3560209424 %
    ['1.91', 1.91, -110, 52.3560209424],
    // 2.005: (d - 1) * 100 = 100.5 in decimal arithmetic, a half rounded away from zero: +101
    ['2.005', 2.005, 101, 49.8753117207],
    // even money displays +100
    ['2', 2, 100, 50],
  ];
  for (const [price, dec, am, pct] of cases) {
    const { res, body } = await calc(`odds?price=${price}`);
    t.equal(res.status, 200, `${price}: 200`);
    t.same(body, { price: dec, price_american: am, implied_pct: pct }, `${price}: ${dec} / ${am} / ${pct} %`);
  }
  // a longshot typed in decimal is taken as its American twin is (1500 and +149900 are one price)
  t.same((await calc('odds?price=1500')).body, (await calc('odds?price=%2B149900')).body, 'decimal 1500 = +149900');
  t.same((await calc('odds?price=100000')).body, { price: 100000, price_american: 9999900, implied_pct: 0.001 }, 'the top of the range');
  const { res } = await calc('odds?price=-110');
  t.equal(res.headers.get('x-requests-last'), '0', 'a calculator costs no credits');
  t.equal(res.headers.get('x-ratelimit-remaining'), '1000', 'balance untouched');
});

t.test('calc - devig: every method on a two-way line, hand-worked', async (t) => {
  const { res, body } = await calc('devig?prices=1.5,2.75');
  t.equal(res.status, 200, '200');
  // implied 2/3 and 4/11, S = 34/33: overround 1/33 = 3.0303030303 %
  // prices typed in American are served as decimals to 12 significant digits: -170 is 1 + 100/170
  t.same((await calc('devig?prices=-170,%2B150')).body.prices, [d12(1 + 100 / 170), 2.5], 'American prices served as tidied decimals');
  t.same([body.implied_pct, body.implied_sum, body.overround_pct, body.devigged, body.reason],
    [[66.6666666667, 36.3636363636], 1.0303030303, 3.0303030303, true, null], 'implied, S and overround');
  const m = body.methods;
  // multiplicative: (2/3) / (34/33) = 22/34, (4/11) / (34/33) = 12/34
  t.same(m.multiplicative, { valid: true, fair_prob_pct: [d12(2200 / 34), d12(1200 / 34)], fair_price: [d12(34 / 22), d12(34 / 12)] }, 'multiplicative 22/34, 12/34');
  // additive: each less (S - 1) / 2 = 1/66: 43/66 and 23/66; Shin's two-outcome answer is the same (the known identity)
  const add = { valid: true, fair_prob_pct: [d12(4300 / 66), d12(2300 / 66)], fair_price: [d12(66 / 43), d12(66 / 23)] };
  t.same(m.additive, add, 'additive 43/66, 23/66');
  t.same(m.shin, add, 'shin equals additive on two outcomes');
  // power: p_i = pi_i^k summing to 1; the served p1 fixes k = ln p1 / ln(2/3), and (4/11)^k must be the served p2
  const k = Math.log(m.power.fair_prob_pct[0] / 100) / Math.log(2 / 3);
  t.ok(k > 1, 'power: k > 1 on an overround');
  t.ok(Math.abs((4 / 11) ** k * 100 - m.power.fair_prob_pct[1]) < 1e-8, 'power: (4/11)^k is the other side');
  t.ok(Math.abs(m.power.fair_prob_pct[0] + m.power.fair_prob_pct[1] - 100) < 1e-8, 'power: sums to 100 %');
  // odds ratio: odds(p_i) = odds(pi_i) / c; odds(2/3) = 2, odds(4/11) = 4/7, so odds(p1) * odds(p2) = 8/7 / c^2 and
  // c = 2 / odds(p1) must give odds(p2) = (4/7) / c
  const [o1, o2] = m.odds_ratio.fair_prob_pct.map((x: number) => x / (100 - x));
  t.ok(Math.abs(o2 - (4 / 7) / (2 / o1)) < 1e-9, 'odds ratio: one c for both sides');
  t.ok(Math.abs(m.odds_ratio.fair_prob_pct[0] + m.odds_ratio.fair_prob_pct[1] - 100) < 1e-8, 'odds ratio: sums to 100 %');
  // worst case: per side the lowest of multiplicative, additive, power, shin: the favourite's multiplicative 22/34,
  // the longshot's power
  t.same(m.worst_case.fair_prob_pct, [d12(2200 / 34), m.power.fair_prob_pct[1]], 'worst case: the lowest per side');
});

t.test('calc - devig: a three-way line where additive goes negative, and an underround set', async (t) => {
  // 1.05 / 6 / 100: implied 20/21, 1/6, 1/100; S = 1.12904761905; (S - 1) / 3 = 0.0430158730159 exceeds 1/100
  const { body } = await calc('devig?prices=1.05,6,100');
  const S = 20 / 21 + 1 / 6 + 1 / 100;
  const m = (S - 1) / 3;
  t.same(body.methods.additive, {
    valid: true,
    fair_prob_pct: [d12((20 / 21 - m) * 100), d12((1 / 6 - m) * 100), null],
    fair_price: [d12(1 / (20 / 21 - m)), d12(1 / (1 / 6 - m)), null],
  }, 'additive: the longshot is flagged (null) and excluded, the others kept');
  t.ok(body.methods.worst_case.valid && body.methods.worst_case.fair_prob_pct.every((x: number | null) => x !== null && x > 0),
    'worst case still prices every side (additive only where valid)');

  // 1.08 / 13.5: zero margin, the doubles sum to 0.9999999999999999: de-vigged as it is, an overround of 0, no arbitrage
  const zero = await calc('devig?prices=1.08,13.5');
  t.same([zero.body.devigged, zero.body.overround_pct, zero.body.methods.multiplicative.fair_prob_pct], [true, 0, [d12(2500 / 27), d12(200 / 27)]],
    'a zero-margin set is de-vigged');
  const za = await calc('arbitrage?prices=1.08,13.5');
  t.same([za.body.is_arbitrage, za.body.profit_pct], [false, 0], 'and is no arbitrage, with a profit of 0 (not 2.2e-14 %)');
  const under = await calc('devig?prices=2.1,2.1');
  t.same([under.res.status, under.body.devigged, under.body.implied_sum, under.body.overround_pct], [200, false, 0.952380952381, -4.7619047619],
    'S = 2/2.1 < 1: answered, not de-vigged');
  t.match(under.body.reason, /sum below 1/, 'the reason says why');
  t.ok(Object.values(under.body.methods).every((x: any) => x.valid === false && x.fair_prob_pct.every((p: unknown) => p === null)),
    'every method invalid, no number made up');
});

t.test('calc - arbitrage: stakes, payouts, commission', async (t) => {
  // 2.1 and 2.1 at commission 0 and 5 %: the second leg is worth 1 + 1.1 * 0.95 = 2.045; 1/S = 2.1 * 2.045 / 4.145
  const { body } = await calc('arbitrage?prices=2.1,2.1&commission_pct=0,5&stake=1000');
  t.same(body, {
    implied_sum: d12(1 / 2.1 + 1 / 2.045), is_arbitrage: true, profit_pct: d12((4.2945 / 4.145 - 1) * 100), total_stake: 1000,
    guaranteed_payout: d12(1000 * 4.2945 / 4.145),
    legs: [
      // stake share (1 / 2.1) / S = 2.045 / 4.145
      { price: 2.1, price_american: 110, commission_pct: 0, effective_price: 2.1, stake_pct: d12(204.5 / 4.145), stake: d12(2045 / 4.145), payout: d12(1000 * 4.2945 / 4.145) },
      { price: 2.1, price_american: 110, commission_pct: 5, effective_price: 2.045, stake_pct: d12(210 / 4.145), stake: d12(2100 / 4.145), payout: d12(1000 * 4.2945 / 4.145) },
    ],
  }, 'profit 3.60675512666 %, both legs pay 1036.06755127');
  // -110 both ways is no arbitrage: S = 22/21, a loss of 1/22 = 4.5454545 % of the stake, shown as such
  const no = await calc('arbitrage?prices=-110,-110');
  t.same([no.body.is_arbitrage, no.body.profit_pct, no.body.guaranteed_payout], [false, d12((21 / 22 - 1) * 100), d12(100 * 21 / 22)],
    'not an arbitrage: is_arbitrage false, the loss shown');
  // a three-way arbitrage: 3.2 / 3.6 / 3.8
  const three = await calc('arbitrage?prices=3.2,3.6,3.8');
  const S3 = 1 / 3.2 + 1 / 3.6 + 1 / 3.8;
  t.same([three.body.is_arbitrage, three.body.profit_pct, three.body.legs.map((l: any) => l.stake)],
    [true, d12((1 / S3 - 1) * 100), [d12(100 / 3.2 / S3), d12(100 / 3.6 / S3), d12(100 / 3.8 / S3)]], 'three outcomes');
});

t.test('calc - kelly: edge and stake against a fair probability or a fair price', async (t) => {
  // 2.1 at a fair 50 %: edge 0.5 * 2.1 - 1 = 5 %; full Kelly 0.05 / 1.1; half of it by default; of 1000
  const a = await calc('kelly?price=2.1&fair_prob_pct=50&bankroll=1000');
  t.same(a.body, {
    price: 2.1, price_american: 110, implied_pct: 47.619047619, effective_price: 2.1, fair_prob_pct: 50, fair_price: 2, edge_pct: 5,
    is_positive_ev: true, full_kelly: d12(0.05 / 1.1), kelly: 0.5, kelly_fraction: d12(0.025 / 1.1), bankroll: 1000, stake: d12(25 / 1.1),
  }, 'edge 5 %, half Kelly 0.0227272727273, stake 22.7272727273');
  // a fair price of -110 is 11/21: edge 11/21 * 2.1 - 1 = 10 %
  const b = await calc('kelly?price=2.1&fair_price=-110&kelly=1');
  t.same([b.body.fair_prob_pct, b.body.edge_pct, b.body.kelly_fraction, b.body.stake], [52.380952381, 10, d12(0.1 / 1.1), null], 'fair_price -110: 10 %, full Kelly');
  // no edge: 1.8 at 50 % is -10 %, Kelly 0
  const c = await calc('kelly?price=1.8&fair_prob_pct=50&bankroll=500');
  t.same([c.body.edge_pct, c.body.is_positive_ev, c.body.full_kelly, c.body.stake], [-10, false, 0, 0], 'no edge, no stake');
  // an exchange price: 2.1 less 2 % commission on winnings is 2.078: edge 3.9 %
  const d = await calc('kelly?price=2.1&fair_prob_pct=50&commission_pct=2');
  t.same([d.body.effective_price, d.body.edge_pct], [2.078, 3.9], 'commission: effective 2.078, edge 3.9 %');
  // the bounds are exclusive, and the document says so (regression: it published minimum 0 / maximum 100)
  for (const [v, msg] of [['0', 'must be above 0'], ['100', 'must be below 100'], ['-1', 'must be above 0']]) {
    const bad = await calc(`kelly?price=2.1&fair_prob_pct=${v}`);
    t.equal(bad.res.status, 422, `fair_prob_pct=${v}: 422`);
    t.equal(bad.body.detail[0].msg, msg, `fair_prob_pct=${v}: ${msg}`);
  }
  const doc = (await (await app.get('/openapi.json')).json()) as any;
  const param = doc.paths['/v1/calc/kelly'].get.parameters.find((x: { name: string }) => x.name === 'fair_prob_pct');
  t.same([param.schema.exclusiveMinimum, param.schema.exclusiveMaximum, param.schema.minimum], [0, 100, undefined], 'the document gives exclusive bounds');
});

t.test('calc - ev: a price against a sharp line, by de-vig method', async (t) => {
  // sharp 1.91 / 1.91: every method gives 50 %; 2.2 on the second side: edge 10 %, half Kelly 0.1 / 1.2 / 2
  const a = await calc('ev?price=2.2&sharp=1.91,1.91&outcome=1');
  t.same([a.body.devig, a.body.fair_prob_pct, a.body.fair_price, a.body.edge_pct, a.body.kelly_fraction, a.body.is_positive_ev],
    ['multiplicative', 50, 2, 10, d12(0.1 / 1.2 / 2), true], 'fair 50 %, edge 10 %');
  t.ok(Object.values(a.body.by_method).every((x: any) => x.fair_prob_pct === 50 && x.edge_pct === 10), 'every method agrees on a balanced line');
  // full Kelly (0.5 * 2.2 - 1) / (2.2 - 1) = 0.1 / 1.2, as /v1/calc/kelly answers (regression: the ev answer dropped it)
  t.equal(a.body.full_kelly, d12(0.1 / 1.2), 'full_kelly');
  // sharp 1.5 / 2.75 (see devig): the longshot at 3.0 against additive 23/66: edge 23/66 * 3 - 1 = 3/66 = 4.5454545 %
  const b = await calc('ev?price=3&sharp=1.5,2.75&outcome=1&devig=additive&bankroll=100');
  t.same([b.body.fair_prob_pct, b.body.edge_pct, b.body.stake], [d12(2300 / 66), d12(300 / 66), d12((3 / 66) / 2 / 2 * 100)],
    'additive 23/66: edge 4.5454545 %, half Kelly stake of 100');
  // multiplicative 12/34: 36/34 - 1 = 5.88235294118 %
  t.equal(b.body.by_method.multiplicative.edge_pct, d12(200 / 34), 'by_method lists every method');
  // a sharp line that is an arbitrage has no fair price: 422 naming it
  const u = await calc<ErrBody>('ev?price=2&sharp=2.1,2.1');
  t.same([u.res.status, u.body.detail?.[0]?.loc], [422, ['query', 'sharp']], 'underround sharp line: 422 on sharp');
  // additive drives the 1/100 side of 1.05 / 6 / 100 negative: that method has no price for it
  const n = await calc<ErrBody>('ev?price=150&sharp=1.05,6,100&outcome=2&devig=additive');
  t.same([n.res.status, n.body.detail?.[0]?.loc], [422, ['query', 'devig']], 'additive flags the longshot: 422 on devig');
  t.match(n.body.message, /additive goes negative/, 'saying why');
  // odds_ratio on a line at -10,000,000 a side: no fair probability, for its own reason (regression: blamed additive)
  const o = await calc<ErrBody>('ev?price=2&sharp=1.00001,1.00001&outcome=0&devig=odds_ratio');
  t.equal(o.res.status, 422, 'odds_ratio: no fair probability there');
  t.notMatch(o.body.message, /additive/, 'and its 422 does not blame additive');
  const w = await calc('ev?price=150&sharp=1.05,6,100&outcome=2&devig=worst_case');
  t.equal(w.res.status, 200, 'worst_case prices it');
  t.equal(w.body.by_method.additive.fair_prob_pct, null, 'by_method: additive null for the flagged side');
});

t.test('calc - middle: hit and push numbers, nets per 100 a leg', async (t) => {
  // Over 220.5 and Under 223 at 1.91: hits 221, 222; 223 pushes the Under (Over wins 91); a miss loses 100 - 91 = 9
  const a = await calc('middle?over_line=220.5&over_price=1.91&under_line=223&under_price=1.91');
  t.same(a.body, {
    over: { line: 220.5, price: 1.91, price_american: -110, implied_pct: 52.3560209424 },
    under: { line: 223, price: 1.91, price_american: -110, implied_pct: 52.3560209424 },
    window: { low: 220.5, high: 223, width: 2.5 }, hit_numbers: [221, 222], push_numbers: [{ number: 223, net: 91 }],
    // break-even: h * 182 + (1 - h) * (-9) = 0, h = 9 / 191
    profit_if_hit: 182, net_if_below: -9, net_if_above: -9, break_even_hit_rate: d12(9 / 191),
  }, 'the middle of issue 3');
  // quarter lines settle as two halves (regression: 220 and 222 were served as nets of 0, below and above the window)
  const q = await calc('middle?over_line=220.25&over_price=2&under_line=221.75&under_price=2');
  t.same([q.body.hit_numbers, q.body.push_numbers, q.body.net_if_below, q.body.net_if_above], [[221], [{ number: 220, net: 50 }, { number: 222, net: 50 }], 0, 0],
    'over 220.25 / under 221.75 at 2.00: 221 hits, 220 and 222 lose or push half a leg (+50)');
  // whole-number lines both push: 220 (Under wins 91) and 222 (Over wins 91); 221 the one hit
  const b = await calc('middle?over_line=220&over_price=1.91&under_line=222&under_price=1.91');
  t.same([b.body.hit_numbers, b.body.push_numbers], [[221], [{ number: 220, net: 91 }, { number: 222, net: 91 }]], 'pushes at whole lines');
});

t.test('calc - a blank before a price: an unencoded +, or a space after a comma', async (t) => {
  // ' 150' can be +150 (an unencoded '+') and is read so; ' 1.6' can be no American price: the decimal 1.6
  t.same((await calc('parlay?prices=2.5,%201.6')).body.price, 4, '2.5 x 1.6 = 4: the blank before 1.6 is a space');
  t.same((await calc('parlay?prices=1.5,%20150')).body.price, 3.75, '1.5 x 2.5 = 3.75: the blank before 150 is a +');
});

t.test('calc - parlay: the product of the legs', async (t) => {
  // -110 twice: (21/11)^2 = 441/121 = 3.64462809917, +264; 10 staked pays 36.4462809917
  const { body } = await calc('parlay?prices=-110,%2D110&stake=10');
  t.same([body.price, body.price_american, body.implied_pct, body.payout, body.legs.length], [d12(441 / 121), 264, d12(12100 / 441), d12(4410 / 121), 2],
    'two legs at -110');
});

t.test('calc - bad input: a 422 naming the parameter, no credits; a key is required', async (t) => {
  const cases: [string, string][] = [
    ['odds', 'price'], ['odds?price=1', 'price'], ['odds?price=-99', 'price'], ['odds?price=abc', 'price'], ['odds?price=', 'price'],
    ['devig', 'prices'], ['devig?prices=1.9', 'prices'], ['devig?prices=1.9,x', 'prices'], ['devig?prices=1.9,,2', 'prices'],
    [`devig?prices=${Array(31).fill('2').join(',')}`, 'prices'],
    ['arbitrage?prices=2,2&commission_pct=5', 'commission_pct'], ['arbitrage?prices=2,2&commission_pct=0,100', 'commission_pct'],
    ['arbitrage?prices=2,2&commission_pct=0,-1', 'commission_pct'], ['arbitrage?prices=2,2&stake=0', 'stake'],
    ['kelly?price=2', 'fair_prob_pct'], ['kelly?price=2&fair_prob_pct=50&fair_price=2', 'fair_price'], ['kelly?price=2&fair_prob_pct=100', 'fair_prob_pct'],
    ['kelly?price=2&fair_prob_pct=0', 'fair_prob_pct'], ['kelly?price=2&fair_price=1', 'fair_price'], ['kelly?price=2&fair_prob_pct=50&kelly=1.5', 'kelly'],
    ['kelly?price=2&fair_prob_pct=50&bankroll=0', 'bankroll'],
    ['ev?price=2', 'sharp'], ['ev?price=2&sharp=1.9,1.9&outcome=2', 'outcome'], ['ev?price=2&sharp=1.9,1.9&devig=magic', 'devig'],
    ['middle?over_line=220.5&over_price=1.9&under_line=220.5&under_price=1.9', 'under_line'],
    ['middle?over_line=220.5&over_price=1.9&under_price=1.9', 'under_line'], ['middle?over_line=1&over_price=1.9&under_line=1002&under_price=1.9', 'under_line'],
    // a line is whole, half or quarter: 220.3 is no book's line
    ['middle?over_line=220.3&over_price=1.9&under_line=223&under_price=1.9', 'over_line'], ['middle?over_line=220&over_price=1.9&under_line=222.1&under_price=1.9', 'under_line'],
    ['parlay?prices=2', 'prices'],
    // typed prices run from 1.00001 (American -10,000,000) to 100000 (+9,999,900), as ingest takes at most 100000
    ['odds?price=-99999999999999999', 'price'], ['odds?price=1.000001', 'price'], ['odds?price=100001', 'price'], ['odds?price=%2B10000000', 'price'],
    // three legs at +9,999,900 combine to 1e15: past 1e12 the American display is no exact integer (a 500 before)
    ['parlay?prices=%2B9999900,%2B9999900,%2B9999900', 'prices'],
  ];
  for (const [path, name] of cases) {
    const { res, body } = await calc<ErrBody>(path);
    t.equal(res.status, 422, `${path}: 422`);
    t.same(body.detail?.map((d) => d.loc), [['query', name]], `${path}: names ${name}`);
    t.equal(res.headers.get('x-requests-last'), '0', `${path}: no credits`);
  }
  const none = await calc<ErrBody>('odds?price=2', null);
  t.same([none.res.status, none.body.error_code], [401, 'MISSING_KEY'], 'no key: 401');
  const doc = (await (await app.get('/openapi.json')).json()) as { paths: Record<string, unknown> };
  t.same(['odds', 'devig', 'arbitrage', 'kelly', 'ev', 'middle', 'parlay'].filter((p) => doc.paths[`/v1/calc/${p}`] === undefined), [],
    'every calculator in /openapi.json');
});
