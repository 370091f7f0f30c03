// The analytics endpoints agree with /odds at every instant (issue 3: a stale or moved quote never forms an
// arbitrage or EV row). Regression: a batch alone in flight reaches the read model in two steps (its quotes, then
// its analytics a few milliseconds later); a request served between them got an arbitrage the batch had closed, with
// a leg price /odds no longer showed, and EV rows against the sharp's old line (an audit saw it in 127 of 533 probes
// during one 2,400-price batch). To reach that gap every time, the test holds the shard's analytics message 300 ms
// before the hub applies it (the message is copied: the hub recycles its buffer).

import t from 'tap';
import { decode, encode, type ChangesMsg } from '../workers/protocol.js';
import { startTestApp } from './helpers/app.js';

const app = await startTestApp(t);
const key = await app.key('business', 1_000_000);
const hub = app.app.services.hub;
const HOLD_MS = 300;

const FUT = new Date(Date.now() + 86_400_000).toISOString();
const X = { id: 'cons_x', sport_key: 'basketball_wnba', commence_time: FUT, home_team: 'Las Vegas Aces', away_team: 'New York Liberty' };
const q = (book: string, outcome: string, price: number) => ({ book, event_id: X.id, market: 'h2h', outcome, price });

interface Outcome { name: string; price: number }
interface OddsEvent { id: string; bookmakers: { key: string; markets: { key: string; outcomes: Outcome[] }[] }[] }
interface ArbRow { event_id: string; profit_pct: number; legs: { book: string; outcome: string; price: number }[] }
interface ConsRow { event_id: string; outcomes: { name: string; best_price: number; best_book: string }[] }
interface EvRow { event_id: string; side: string; book: string; fair_prob_pct: number }

/** from now on, the message after a batch's quotes-first one (its analytics) waits HOLD_MS, and so does any after it */
function holdAnalytics(): { released: Promise<void> } {
  const h = hub as unknown as { onChanges(shard: number, msg: ChangesMsg): void };
  const apply = h.onChanges.bind(hub);
  let held: [number, ChangesMsg][] | null = null;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  h.onChanges = (shard, msg) => {
    if (held !== null) {
      held.push([shard, decode<ChangesMsg>(encode(msg, null))]);
      return;
    }
    apply(shard, msg);
    if (!msg.quotesFirst) return;
    held = [];
    setTimeout(() => {
      const later = held!;
      held = null;
      h.onChanges = apply;
      for (const [s, m] of later) apply(s, m);
      release();
    }, HOLD_MS);
  };
  return { released };
}

const json = async <T>(path: string): Promise<{ body: T }> =>
  ({ body: (await (await app.get(`${path}${path.includes('?') ? '&' : '?'}apiKey=${key}`)).json()) as T });
const ODDS = `/v1/sports/basketball_wnba/odds?regions=us,eu&markets=h2h&bookmakers=draftkings,fanduel,pinnacle&eventIds=${X.id}`;
const prices = (events: OddsEvent[]) => {
  const m = new Map<string, number>();
  for (const b of events[0]?.bookmakers ?? []) for (const o of b.markets[0]?.outcomes ?? []) m.set(`${b.key}/${o.name}`, o.price);
  return m;
};

t.test('analytics - between a batch\'s quotes and its analytics, /arbitrage and /ev wait and then agree with /odds', async (t) => {
  await app.ingest({
    events: [X],
    prices: [
      q('draftkings', X.home_team, 2.1), q('draftkings', X.away_team, 1.8),
      q('fanduel', X.home_team, 1.75), q('fanduel', X.away_team, 2.15),
      q('pinnacle', X.home_team, 1.95), q('pinnacle', X.away_team, 1.95),
    ],
  });
  const before = await json<ArbRow[]>('/v1/sports/basketball_wnba/arbitrage?markets=h2h');
  t.same(before.body.map((r) => r.legs.map((l) => `${l.book} ${l.price}`)), [['draftkings 2.1', 'fanduel 2.15']], 'the arbitrage is open');

  const { released } = holdAnalytics();
  // one batch alone in flight: draftkings closes the arbitrage, the sharp moves to 1.70 / 2.30 (best prices after it,
  // fanduel's 1.75 and pinnacle's 2.30, sum to 1.006: no arbitrage)
  const ingest = app.ingest({
    prices: [q('draftkings', X.home_team, 1.5), q('draftkings', X.away_team, 1.9), q('pinnacle', X.home_team, 1.7), q('pinnacle', X.away_team, 2.3)],
  });
  let odds = prices((await json<OddsEvent[]>(ODDS)).body);
  for (let i = 0; i < 100 && odds.get(`draftkings/${X.home_team}`) !== 1.5; i++) odds = prices((await json<OddsEvent[]>(ODDS)).body);
  t.equal(odds.get(`draftkings/${X.home_team}`), 1.5, '/odds shows the move while the analytics are held');

  const [arb, ev, cons] = await Promise.all([
    json<ArbRow[]>('/v1/sports/basketball_wnba/arbitrage?markets=h2h'),
    json<EvRow[]>('/v1/sports/basketball_wnba/ev?markets=h2h&minEdge=0'),
    json<ConsRow[]>('/v1/sports/basketball_wnba/consensus?markets=h2h'),
  ]);
  const home = cons.body.find((r) => r.event_id === X.id)?.outcomes.find((o) => o.name === X.home_team);
  t.same([home?.best_book, home?.best_price], ['fanduel', 1.75], 'the consensus\'s best home price is fanduel\'s, as in /odds');
  t.same(arb.body.filter((r) => r.event_id === X.id), [], 'the closed arbitrage is not served');
  const fairHome = ((1 / 1.7) / (1 / 1.7 + 1 / 2.3)) * 100; // 57.5 %: the no-vig line of 1.70 / 2.30
  const rows = ev.body.filter((r) => r.event_id === X.id);
  t.ok(rows.length > 0, 'EV rows against the new line');
  for (const r of rows) {
    const want = r.side === X.home_team ? fairHome : 100 - fairHome;
    t.ok(Math.abs(r.fair_prob_pct - want) < 1e-6, `${r.book} ${r.side}: fair ${r.fair_prob_pct} % is the sharp's new line (${want.toFixed(3)} %)`);
  }
  await released;
  t.equal((await ingest).json.accepted, 4, 'the batch was applied');
});
