// Every webhook event type of both variants, triggered from prices posted to /v1/ingest and received by a real
// receiver on loopback; the chat formats' shapes. Source-quality events follow the app's clock (TestClock).

import t from 'tap';
import { TestClock, appDatabases, startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver, verifyB, type Received } from './helpers/webhook-receiver.js';

const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

// the outbox statements run on both databases in webhooks-delivery; the evaluation here on the external one when set
for (const database of appDatabases().slice(-1)) {
  t.test(`webhook events (${database})`, async (t) => {
    const clock = new TestClock();
    const app = await startTestApp(t, { database, shards: 1, now: clock.now, webhooks: { allowPrivate: true, retryDelaysMs: [100, 100], pollMs: 25 } });
    const rx = await startReceiver(t);
    const key = await app.key('enterprise');
    const create = async (body: unknown) => {
      const res = await call(app, 'POST', '/v1/webhooks', key, body);
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      return j(res);
    };
    const A = await create({ url: rx.url + '?A', events: ['arb_flagged', 'live_arb', 'ev_alert', 'line_move', 'odds_drop', 'new_event'] });
    const B = await create({
      destination_url: rx.url + '?B',
      events: ['arbitrage.opened', 'arbitrage.closed', 'ev.flagged', 'line_move.steam', 'source_quality.breach', 'source_quality.recovery', 'parser.degraded'],
    });
    const slack = await create({ destination_url: rx.url + '?slack', events: ['arbitrage.opened'], format: 'slack' });
    const discord = await create({ destination_url: rx.url + '?discord', events: ['arbitrage.opened'], format: 'discord' });
    const onlyNhl = await create({ url: rx.url + '?nhl', events: ['arb_flagged', 'new_event'], sport_filter: ['icehockey_nhl'] });
    const highEdge = await create({ destination_url: rx.url + '?edge', events: ['arbitrage.opened', 'ev.flagged'], filters: { min_edge_pct: 50 } });

    const A_ = (type: string, match?: string) => (r: Received) => r.path.endsWith('?A') && r.body?.event_type === type && (match === undefined || r.body.data.match_id === match);
    const B_ = (type: string, pred: (d: any) => boolean = () => true) => (r: Received) => r.path.endsWith('?B') && r.body?.event === type && pred(r.body.data);
    const now = Date.now();
    const nba = { id: 'we_nba', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
    const h2h = (e: { id: string; home_team: string; away_team: string }, book: string, home: number, away: number) => [
      { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: home },
      { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: away },
    ];

    t.test('futures: sides Yes and No and the event\'s title, as REST names them (they were Over and Under, teams empty)', async (t) => {
      const fut = { id: 'we_fut', sport_key: 'americanfootball_nfl', commence_time: now + 10 * 86_400_000, kind: 'futures', title: 'Super Bowl LXI' };
      // DraftKings' Chiefs at 8.0 (0.125) and Polymarket's No at 85 cents: 0.975, an arbitrage
      await app.ingest({ events: [fut], prices: [
        { book: 'draftkings', event_id: fut.id, market: 'outrights', outcome: 'Kansas City Chiefs', price: 8 },
        { book: 'polymarket', event_id: fut.id, market: 'outrights', outcome: 'No', player: 'Kansas City Chiefs', price: 1 / 0.85 },
      ] });
      const [ne] = await rx.waitFor(A_('new_event', fut.id));
      t.equal(ne.body.data.event_title, 'Super Bowl LXI', 'new_event: event_title');
      const [arb] = await rx.waitFor(A_('arb_flagged', fut.id));
      t.same(arb.body.data.legs.map((l: { side: string }) => l.side), ['Kansas City Chiefs Yes', 'Kansas City Chiefs No'], 'arb_flagged: the selection with Yes and No');
      t.equal(arb.body.data.event_title, 'Super Bowl LXI', 'arb_flagged: event_title');
      // (Variant B's arbitrage.opened is of moneylines only: SPEC)
      await app.ingest({ events: [{ ...fut, status: 'final' }] });
    });

    t.test('new_event, arb_flagged and arbitrage.opened, with the chat formats', async (t) => {
      await app.ingest({ events: [nba], prices: [...h2h(nba, 'draftkings', 2.2, 1.6), ...h2h(nba, 'fanduel', 1.6, 2.2)] });
      const [ne] = await rx.waitFor(A_('new_event', nba.id));
      t.same(ne.body.data, {
        sport_key: 'basketball_nba', match_id: nba.id, home_team: nba.home_team, away_team: nba.away_team,
        commence_time: new Date(Math.floor(nba.commence_time / 1000) * 1000).toISOString().replace('.000Z', 'Z'), // to the second, as REST serves it (regression: .000Z)
      }, 'new_event data');
      const [arb] = await rx.waitFor(A_('arb_flagged', nba.id));
      const d = arb.body.data;
      t.same(Object.keys(d).sort(), ['away_team', 'edge_pct', 'home_team', 'legs', 'market', 'match_id', 'sport_key'], 'arb_flagged data: exactly the SPEC fields');
      t.same([d.sport_key, d.match_id, d.home_team, d.away_team, d.market], ['basketball_nba', nba.id, 'Boston Celtics', 'Miami Heat', 'h2h'], 'event and market');
      // (1 / (2 / 2.2) - 1) * 100 is 10.000000000000009 in doubles: served to 12 significant digits, as over REST
      t.equal(d.edge_pct, 10, 'edge_pct 10');
      t.same(d.legs, [{ book: 'draftkings', side: 'Boston Celtics', price: 2.2, effective_price: 2.2 }, { book: 'fanduel', side: 'Miami Heat', price: 2.2, effective_price: 2.2 }],
        'legs {book, side, price} and the effective price');
      const [op] = await rx.waitFor(B_('arbitrage.opened', (x) => x.event_id === nba.id));
      t.equal(op.body.data.market, 'h2h', 'moneyline');
      t.equal(op.body.data.implied_sum, 0.909090909091, 'implied_sum 2 / 2.2 to 12 significant digits');
      t.same(op.body.data.legs.map((l: { book: string; outcome: string }) => [l.book, l.outcome]), [['draftkings', 'Boston Celtics'], ['fanduel', 'Miami Heat']], 'legs');
      t.ok(close(op.body.data.legs[0].stake_pct, 50), 'stakes');
      t.ok(verifyB(B.signing_secret, op.headers['x-service-signature'] as string, op.headers['x-service-timestamp'] as string, op.raw), 'signed');

      const [sl] = await rx.waitFor((r) => r.path.endsWith('?slack'));
      t.equal(typeof sl.body.text, 'string', 'slack: text');
      t.match(sl.body.text, /Arbitrage: Miami Heat @ Boston Celtics/, 'slack: readable title');
      const att = sl.body.attachments[0];
      t.match(att.color, /^#[0-9a-f]{6}$/, 'slack: attachment color');
      t.ok(att.fields.every((f: any) => typeof f.title === 'string' && typeof f.value === 'string' && typeof f.short === 'boolean'), 'slack: fields {title, value, short}');
      t.match(att.footer, /arbitrage\.opened · evt_/, 'slack: footer names the event');
      t.ok(verifyB(slack.signing_secret, sl.headers['x-service-signature'] as string, sl.headers['x-service-timestamp'] as string, sl.raw), 'slack: signed');
      const [dc] = await rx.waitFor((r) => r.path.endsWith('?discord'));
      const em = dc.body.embeds[0];
      t.match(dc.body.content, /Miami Heat @ Boston Celtics/, 'discord: content');
      t.same([typeof em.title, typeof em.description, typeof em.color], ['string', 'string', 'number'], 'discord: embed');
      t.ok(em.fields.every((f: any) => typeof f.name === 'string' && typeof f.value === 'string' && typeof f.inline === 'boolean'), 'discord: fields {name, value, inline}');
      t.ok(!Number.isNaN(Date.parse(em.timestamp)), 'discord: timestamp');
      t.match(em.fields.find((f: any) => f.name === 'Legs').value, /Boston Celtics at draftkings 2\.2/, 'discord: legs readable');
      t.equal(rx.requests.filter((r) => r.path.endsWith('?nhl')).length, 0, 'sport_filter: an NBA event does not reach an NHL-only subscription');
      t.equal(rx.requests.filter((r) => r.path.endsWith('?edge')).length, 0, 'filters.min_edge_pct: a 10 % arbitrage does not reach a 50 % threshold');
    });

    t.test('arbitrage.closed when the flagged arbitrage closes', async (t) => {
      await app.ingest({ prices: h2h(nba, 'fanduel', 1.6, 1.7) });
      const [cl] = await rx.waitFor(B_('arbitrage.closed', (x) => x.event_id === nba.id));
      const [op] = await rx.waitFor(B_('arbitrage.opened', (x) => x.event_id === nba.id));
      t.equal(cl.body.data.arb_id, op.body.data.arb_id, 'the same arb_id');
      t.ok(close(cl.body.data.edge_pct_at_open, 10), 'edge at open');
      t.ok(cl.body.data.duration_s >= 0, 'duration');
    });

    t.test('live_arb on an event in play', async (t) => {
      const live = { id: 'we_live', sport_key: 'basketball_nba', commence_time: Date.now() - 600_000, home_team: 'Utah Jazz', away_team: 'Orlando Magic' };
      await app.ingest({ events: [live], prices: [...h2h(live, 'betmgm', 2.3, 1.5), ...h2h(live, 'bovada', 1.5, 2.3)] });
      const [r] = await rx.waitFor(A_('live_arb', live.id));
      t.equal(r.body.data.market, 'h2h', 'live arbitrage');
      t.equal(rx.requests.filter(A_('arb_flagged', live.id)).length, 0, 'not also arb_flagged');
    });

    t.test('arb_flagged and live_arb: one book\'s own line past 1.0 is no arbitrage across two books', async (t) => {
      // regression (the webhook audit): DraftKings' Over and Under 220.5 both at 2.1 were announced as an arbitrage,
      // both legs at DraftKings (the store judges a book's pair on moneylines and outrights only)
      const sub = await create({ url: rx.url + '?one', events: ['arb_flagged', 'live_arb'], sport_filter: ['basketball_wnba'] });
      const game = (id: string, commence: number) => ({ id, sport_key: 'basketball_wnba', commence_time: commence, home_team: `Home ${id}`, away_team: `Away ${id}` });
      const pre = game('we_one_pre', Date.now() + 3_600_000);
      const live = game('we_one_live', Date.now() - 600_000);
      const two = game('we_one_two', Date.now() + 3_600_000);
      const total = (e: { id: string }, book: string, over: number, under: number) => [
        { book, event_id: e.id, market: 'totals', outcome: 'Over', point: 160.5, price: over },
        { book, event_id: e.id, market: 'totals', outcome: 'Under', point: 160.5, price: under },
      ];
      // one batch: the rows of all three are written together, so the two-book one's arrival shows the others' absence
      await app.ingest({ events: [pre, live, two], prices: [
        ...total(pre, 'draftkings', 2.1, 2.1), ...total(live, 'fanduel', 2.1, 2.1),
        ...total(two, 'draftkings', 2.1, 1.7), ...total(two, 'fanduel', 1.7, 2.1),
      ] });
      const [r] = await rx.waitFor((x) => x.path.endsWith('?one'));
      t.equal(r.body.data.match_id, two.id, 'the arbitrage across two books is announced');
      t.same(r.body.data.legs.map((l: { book: string; side: string }) => [l.book, l.side]), [['draftkings', 'Over 160.5'], ['fanduel', 'Under 160.5']], 'its legs at two books');
      const list = await j(await call(app, 'GET', `/v1/webhooks/${sub.id as number}/deliveries?limit=50`, key));
      t.same(list.map((d: { event_type: string }) => d.event_type), ['arb_flagged'], 'one delivery recorded: no arb_flagged nor live_arb for a single book\'s line');
      t.equal(rx.requests.filter((x) => x.path.endsWith('?one')).length, 1, 'and one received');
      await call(app, 'DELETE', `/v1/webhooks/${sub.id as number}`, key);
    });

    t.test('a feed\'s status live does not put a game in play before its start (as REST and the streams judge it)', async (t) => {
      const g = { id: 'we_status_live', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Miami Heat', away_team: 'Chicago Bulls', status: 'live' };
      await app.ingest({ events: [g], prices: [...h2h(g, 'betmgm', 2.3, 1.5), ...h2h(g, 'bovada', 1.5, 2.3)] });
      await rx.waitFor(A_('arb_flagged', g.id));
      t.equal(rx.requests.filter(A_('live_arb', g.id)).length, 0, 'arb_flagged, not live_arb');
    });

    t.test('arb_flagged: an exchange leg carries the effective price edge_pct was computed with; a prop\'s side names the player', async (t) => {
      const g = { id: 'we_exch', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Atlanta Hawks', away_team: 'Toronto Raptors' };
      await app.ingest({ events: [g], prices: [...h2h(g, 'betfair_ex_uk', 2.3, 1.75), ...h2h(g, 'draftkings', 1.75, 2.0)] });
      const [r] = await rx.waitFor(A_('arb_flagged', g.id));
      const legs = r.body.data.legs as { book: string; price: number; effective_price: number }[];
      const ex = legs.find((l) => l.book === 'betfair_ex_uk')!;
      t.ok(ex.effective_price < ex.price, 'the exchange leg: effective price below its price (commission)');
      const S = legs.reduce((sum, l) => sum + 1 / l.effective_price, 0);
      t.ok(close(r.body.data.edge_pct, (1 / S - 1) * 100), 'edge_pct follows from the legs\' effective prices');
      const p = { id: 'we_prop', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Utah Jazz', away_team: 'Denver Nuggets' };
      const prop = (player: string) => [
        { book: 'fanduel', event_id: p.id, market: 'player_rebounds', player, point: 8.5, outcome: 'Over', price: 2.1 },
        { book: 'fanduel', event_id: p.id, market: 'player_rebounds', player, point: 8.5, outcome: 'Under', price: 1.8 },
        { book: 'draftkings', event_id: p.id, market: 'player_rebounds', player, point: 8.5, outcome: 'Over', price: 1.8 },
        { book: 'draftkings', event_id: p.id, market: 'player_rebounds', player, point: 8.5, outcome: 'Under', price: 2.05 },
      ];
      await app.ingest({ events: [p], prices: [...prop('Player One'), ...prop('Player Two')] });
      const both = await rx.waitFor(A_('arb_flagged', p.id), 5000, 2);
      t.same(both.map((x) => (x.body.data.legs as { side: string }[]).map((l) => l.side)).sort(),
        [['Player One Over 8.5', 'Player One Under 8.5'], ['Player Two Over 8.5', 'Player Two Under 8.5']], 'each player\'s arbitrage names its player');
    });

    t.test('arbitrage.opened: an arbitrage that grows past a threshold after it opened reaches that subscription then, once', async (t) => {
      const three = await create({ destination_url: rx.url + '?three', events: ['arbitrage.opened', 'arbitrage.closed'], filters: { min_edge_pct: 3 } });
      const g = { id: 'we_grow', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Sacramento Kings', away_team: 'Portland Trail Blazers' };
      const here = (path: string, type: string) => (r: Received) => r.path.endsWith(path) && r.body?.event === type && r.body.data.event_id === g.id;
      await app.ingest({ events: [g], prices: [...h2h(g, 'fanduel', 2.06, 1.8), ...h2h(g, 'draftkings', 1.8, 2.0)] });
      const [opened] = await rx.waitFor(here('?B', 'arbitrage.opened'));
      t.ok(close(opened.body.data.edge_pct, 1.47783251232), 'opened at 1.478 % (min 0 hears it)');
      await app.ingest({ prices: h2h(g, 'fanduel', 2.2, 1.75) });
      const [grown] = await rx.waitFor(here('?three', 'arbitrage.opened'));
      t.ok(close(grown.body.data.edge_pct, 4.7619047619), 'the min 3 % subscription hears it at 4.76 %');
      t.equal(grown.body.data.arb_id, opened.body.data.arb_id, 'the same arbitrage (arb_id)');
      await app.ingest({ prices: h2h(g, 'fanduel', 2.25, 1.72) });
      await app.ingest({ prices: [...h2h(g, 'fanduel', 1.8, 1.9), ...h2h(g, 'draftkings', 1.8, 1.9)] });
      await rx.waitFor(here('?three', 'arbitrage.closed'));
      t.equal(rx.requests.filter(here('?three', 'arbitrage.opened')).length, 1, 'told once, though it grew again');
      t.equal(rx.requests.filter(here('?B', 'arbitrage.opened')).length, 1, 'the subscription told at the opening is not told again');
      const [closedB] = await rx.waitFor(here('?B', 'arbitrage.closed'));
      t.ok(close(closedB.body.data.edge_pct_at_open, 1.47783251232), 'its close carries the edge at the opening');
      await call(app, 'DELETE', `/v1/webhooks/${three.id as string}`, key);
    });

    t.test('arbitrage.closed goes to the subscriptions told of the opening, whatever their filters say by then, and to no other', async (t) => {
      // regressions (the webhook audit): a subscription made after an opening got the close of an arbitrage it never
      // heard of, and one that raised min_edge_pct after an opening never got its close
      const g = { id: 'we_told', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Chicago Bulls', away_team: 'Detroit Pistons' };
      const here = (path: string, type: string) => (r: Received) => r.path.endsWith(path) && r.body?.event === type && r.body.data.event_id === g.id;
      const told = await create({ destination_url: rx.url + '?told', events: ['arbitrage.opened', 'arbitrage.closed'] });
      const closesOnly = await create({ destination_url: rx.url + '?closes', events: ['arbitrage.closed'] });
      await app.ingest({ events: [g], prices: [...h2h(g, 'fanduel', 2.1, 1.8), ...h2h(g, 'draftkings', 1.8, 2.1)] });
      const [opened] = await rx.waitFor(here('?told', 'arbitrage.opened'));
      t.ok(close(opened.body.data.edge_pct, 5), 'opened at 5 %');
      const late = await create({ destination_url: rx.url + '?late', events: ['arbitrage.opened', 'arbitrage.closed'] });
      const raised = await call(app, 'PATCH', `/v1/webhooks/${told.id as string}`, key, { filters: { min_edge_pct: 10 } });
      t.equal(raised.status, 200, 'the told subscription raises its threshold above the arbitrage\'s edge');
      await raised.arrayBuffer();
      await app.ingest({ prices: [...h2h(g, 'fanduel', 1.8, 1.9), ...h2h(g, 'draftkings', 1.8, 1.9)] });
      const [cl] = await rx.waitFor(here('?told', 'arbitrage.closed'));
      t.equal(cl.body.data.arb_id, opened.body.data.arb_id, 'the told subscription gets the close, its new threshold notwithstanding');
      await rx.waitFor(here('?closes', 'arbitrage.closed'));
      t.pass('a subscription of closes alone gets the close of an opening that reached its filters');
      await new Promise((r) => setTimeout(r, 300));
      t.equal(rx.requests.filter(here('?late', 'arbitrage.closed')).length, 0, 'the subscription made after the opening gets no close');
      for (const sub of [told, closesOnly, late]) await call(app, 'DELETE', `/v1/webhooks/${sub.id as string}`, key);
    });

    t.test('PATCH filters: a filter left out keeps its value, null clears it', async (t) => {
      // regression (the webhook audit): {"filters": {"min_edge_pct": 3}} turned sport_keys [basketball_nba] to every sport
      const sub = await create({ destination_url: rx.url + '?merge', events: ['arbitrage.opened'], filters: { sport_keys: ['basketball_nba'], min_edge_pct: 4.5 } });
      const patch = async (filters: unknown) => (await (await call(app, 'PATCH', `/v1/webhooks/${sub.id as string}`, key, { filters })).json()) as { filters: unknown };
      t.same((await patch({ min_edge_pct: 3 })).filters, { sport_keys: ['basketball_nba'], min_edge_pct: 3 }, 'min_edge_pct alone: sport_keys kept');
      t.same((await patch({ sport_keys: ['icehockey_nhl'] })).filters, { sport_keys: ['icehockey_nhl'], min_edge_pct: 3 }, 'sport_keys alone: min_edge_pct kept');
      t.same((await patch({ sport_keys: null })).filters, { sport_keys: null, min_edge_pct: 3 }, 'null clears sport_keys: every sport');
      t.same((await patch({})).filters, { sport_keys: null, min_edge_pct: 3 }, 'an empty object changes nothing');
      t.same((await patch({ min_edge_pct: null })).filters, { sport_keys: null, min_edge_pct: null }, 'null clears min_edge_pct: the default threshold');
      // regression (the webhook audit): filters null was taken by create (no filter) and 422 on PATCH
      t.same((await patch({ sport_keys: ['soccer_epl'], min_edge_pct: 2.5 })).filters, { sport_keys: ['soccer_epl'], min_edge_pct: 2.5 }, 'both set again');
      const cleared = await call(app, 'PATCH', `/v1/webhooks/${sub.id as string}`, key, { filters: null });
      t.equal(cleared.status, 200, 'filters null: 200');
      t.same((await j(cleared)).filters, { sport_keys: null, min_edge_pct: null }, 'filters null clears both, as a create with filters null makes it');
      const made = await call(app, 'POST', '/v1/webhooks', key, { destination_url: rx.url + '?nullf', events: ['arbitrage.opened'], filters: null });
      t.equal(made.status, 201, 'create takes filters null');
      const m = await j(made);
      t.same(m.filters, { sport_keys: null, min_edge_pct: null }, 'the same filters');
      await call(app, 'DELETE', `/v1/webhooks/${m.id as string}`, key);
      await call(app, 'DELETE', `/v1/webhooks/${sub.id as string}`, key);
    });

    t.test('ev_alert and ev.flagged against the sharp no-vig line', async (t) => {
      const g = { id: 'we_ev', sport_key: 'basketball_nba', commence_time: Date.now() + 7_200_000, home_team: 'Denver Nuggets', away_team: 'Phoenix Suns' };
      await app.ingest({ events: [g], prices: [...h2h(g, 'pinnacle', 1.952, 1.952), ...h2h(g, 'draftkings', 2.1, 1.7)] });
      const [a] = await rx.waitFor(A_('ev_alert', g.id));
      const d = a.body.data;
      t.same([d.book, d.side, d.price, d.sharp_book, d.devig], ['draftkings', 'Denver Nuggets', 2.1, 'pinnacle', 'multiplicative'], 'the +EV quote');
      t.equal(d.edge_pct, 5, 'edge 0.5 * 2.1 - 1 = 5 % (5.000000000000004 in doubles)');
      t.ok(close(d.fair_price, 2), 'fair price 2.0');
      const [b] = await rx.waitFor(B_('ev.flagged', (x) => x.event_id === g.id));
      t.same([b.body.data.outcome, b.body.data.book], ['Denver Nuggets', 'draftkings'], 'ev.flagged');
    });

    t.test('ev_alert and ev.flagged: a +EV pick that grows past a threshold, by its own move or the sharp\'s, is announced then, once', async (t) => {
      const three = await create({ destination_url: rx.url + '?ev3', events: ['ev.flagged'], filters: { min_edge_pct: 3 } });
      const g = { id: 'we_evgrow', sport_key: 'basketball_nba', commence_time: Date.now() + 7_500_000, home_team: 'Utah Jazz', away_team: 'Memphis Grizzlies' };
      const at = (path: string, type: string, book: string) => (r: Received) =>
        r.path.endsWith(path) && (r.body?.event_type ?? r.body?.event) === type && (r.body.data.match_id ?? r.body.data.event_id) === g.id && r.body.data.book === book;
      // pinnacle's no-vig line is 0.5 / 0.5: draftkings' 2.02 on the home side and fanduel's 2.02 on the away side are
      // +1 %, below ev_alert's 2 % and the default min_edge_pct
      await app.ingest({ events: [g], prices: [...h2h(g, 'pinnacle', 1.952, 1.952), ...h2h(g, 'draftkings', 2.02, 1.8), ...h2h(g, 'fanduel', 1.8, 2.02)] });
      await new Promise((r) => setTimeout(r, 300));
      const evTold = () => rx.requests.filter((r) => ['ev_alert', 'ev.flagged'].includes(r.body?.event_type ?? r.body?.event) && (r.body.data.match_id ?? r.body.data.event_id) === g.id);
      t.equal(evTold().length, 0, '+1 % edges reach no +EV subscription (the two 2.02 sides are an arbitrage, announced as such)');
      // draftkings moves to 2.08: 0.5 * 2.08 - 1 = +4 %, its EV bits unchanged (the shard sends no EV record)
      await app.ingest({ prices: [{ book: 'draftkings', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 2.08 }] });
      const [a] = await rx.waitFor(at('?A', 'ev_alert', 'draftkings'));
      t.same([a.body.data.side, a.body.data.price, a.body.data.edge_pct], ['Utah Jazz', 2.08, 4], 'ev_alert once the edge passes 2 %: +4 % at 2.08');
      const [b3] = await rx.waitFor(at('?ev3', 'ev.flagged', 'draftkings'));
      t.equal(b3.body.data.edge_pct, 4, 'ev.flagged to the min 3 % subscription at +4 %');
      await rx.waitFor(at('?B', 'ev.flagged', 'draftkings'));
      // growing further tells nobody again
      await app.ingest({ prices: [{ book: 'draftkings', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 2.1 }] });
      // pinnacle moves to 2.0 / 1.9: the away side's fair probability (1 / 1.9) / (1 / 2 + 1 / 1.9) = 0.512820...,
      // fanduel's 2.02 on it is +3.59 % (and draftkings' home side falls to +2.3 %: no news)
      await app.ingest({ prices: h2h(g, 'pinnacle', 2.0, 1.9) });
      const [f] = await rx.waitFor(at('?A', 'ev_alert', 'fanduel'));
      t.ok(close(f.body.data.edge_pct, (1 / 1.9) / (1 / 2 + 1 / 1.9) * 2.02 * 100 - 100), `the sharp's move takes fanduel's away side to +3.59 % (${f.body.data.edge_pct})`);
      t.equal(f.body.data.side, 'Memphis Grizzlies', 'the away side');
      await rx.waitFor(at('?ev3', 'ev.flagged', 'fanduel'));
      await new Promise((r) => setTimeout(r, 300));
      for (const [path, type] of [['?A', 'ev_alert'], ['?B', 'ev.flagged'], ['?ev3', 'ev.flagged']]) {
        for (const book of ['draftkings', 'fanduel']) t.equal(rx.requests.filter(at(path, type, book)).length, 1, `${path} ${type} ${book}: told once`);
      }
      t.equal(rx.requests.filter((r) => r.path.endsWith('?edge') && r.body?.data?.event_id === g.id).length, 0, 'nothing reaches min_edge_pct 50');
      await call(app, 'DELETE', `/v1/webhooks/${three.id as string}`, key);
    });

    t.test('ev_alert: a quote\'s move and its sharp\'s in one batch are judged together, never the move against the old line', async (t) => {
      // draftkings 2.02 against pinnacle's 0.5 / 0.5 is +1 %; one batch moves it to 2.1 (+5 % against the old line) and
      // pinnacle to 2.2 / 1.7 (home fair 0.4359: -8.5 %, the pick leaves the set). The batch is answered quotes first,
      // then its analytics: the move was priced against the old line in between and announced (regression)
      const g = { id: 'we_evboth', sport_key: 'basketball_nba', commence_time: Date.now() + 7_800_000, home_team: 'Dallas Mavericks', away_team: 'Houston Rockets' };
      await app.ingest({ events: [g], prices: [...h2h(g, 'pinnacle', 1.952, 1.952), ...h2h(g, 'draftkings', 2.02, 1.8)] });
      await app.ingest({ prices: [...h2h(g, 'pinnacle', 2.2, 1.7), { book: 'draftkings', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 2.1 }] });
      await new Promise((r) => setTimeout(r, 400));
      const told = rx.requests.filter((r) => ['ev_alert', 'ev.flagged'].includes(r.body?.event_type ?? r.body?.event) && (r.body.data.match_id ?? r.body.data.event_id) === g.id);
      t.same(told.map((r) => [r.body.data.book, r.body.data.edge_pct]), [], 'no +EV event: the pick left the set in that batch');
    });

    t.test('line_move (points and price), odds_drop and line_move.steam', async (t) => {
      const g = { id: 'we_move', sport_key: 'basketball_nba', commence_time: Date.now() + 9_000_000, home_team: 'Chicago Bulls', away_team: 'Detroit Pistons' };
      const spread = (home: number, price: number) => [
        { book: 'williamhill_us', event_id: g.id, market: 'spreads', outcome: g.home_team, point: home, price },
        { book: 'williamhill_us', event_id: g.id, market: 'spreads', outcome: g.away_team, point: -home, price },
      ];
      await app.ingest({ events: [g], prices: [...spread(-3.5, 1.91), ...h2h(g, 'espnbet', 2.0, 1.8), ...h2h(g, 'betrivers', 2.0, 1.8), ...h2h(g, 'fanatics', 2.0, 1.8)] });
      await app.ingest({ prices: spread(-4.5, 1.91) });
      const [pm] = await rx.waitFor(A_('line_move', g.id));
      t.equal(pm.body.data.kind, 'points', 'a points move');
      t.same([pm.body.data.from.point, pm.body.data.to.point, pm.body.data.move_points], [-3.5, -4.5, 1], 'from -3.5 to -4.5');
      t.equal(pm.body.data.book, 'williamhill_us', 'book');
      const wh = (price: number) => ({ book: 'williamhill_us', event_id: g.id, market: 'spreads', outcome: g.home_team, point: -4.5, price });
      await app.ingest({ prices: [wh(1.93)] });
      await new Promise((r) => setTimeout(r, 150));
      t.equal(rx.requests.filter(A_('line_move', g.id)).length, 1, '1.91 to 1.93 is 2 cents (-110 to -108): below the threshold');
      await app.ingest({ prices: [wh(1.95)] });
      const [cm] = await rx.waitFor((r) => A_('line_move', g.id)(r) && r.body.data.book === 'williamhill_us' && r.body.data.kind === 'price');
      t.same([cm.body.data.from.price_american, cm.body.data.to.price_american, cm.body.data.move_cents], [-110, -105, 5], 'then 1.95 is 5 cents from the last report: a price move');
      // three books shorten the home side within seconds: steam; 2.0 to 1.7 is more than 10 % under the average
      await app.ingest({ prices: [
        { book: 'espnbet', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 1.9 },
        { book: 'betrivers', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 1.88 },
        { book: 'fanatics', event_id: g.id, market: 'h2h', outcome: g.home_team, price: 1.7 },
      ] });
      const [st] = await rx.waitFor(B_('line_move.steam', (x) => x.event_id === g.id));
      t.equal(st.body.data.direction, 'shortening', 'shortening');
      t.equal(st.body.data.outcome, 'Chicago Bulls', 'outcome');
      t.same(st.body.data.books.map((b: { book: string }) => b.book).sort(), ['betrivers', 'espnbet', 'fanatics'], 'three books');
      const moves = await rx.waitFor((r) => A_('line_move', g.id)(r) && r.body.data.kind === 'price' && r.body.data.market === 'h2h', 3000, 3);
      t.same(moves.map((m) => m.body.data.book).sort(), ['betrivers', 'espnbet', 'fanatics'], 'price moves of 11+ cents');
      const [od] = await rx.waitFor(A_('odds_drop', g.id));
      t.same([od.body.data.book, od.body.data.price, od.body.data.average_price], ['fanatics', 1.7, 2], 'odds_drop: 1.7 against 2.0');
      t.ok(close(od.body.data.drop_pct, 15), 'drop 15 %');
      t.equal(rx.requests.filter(A_('odds_drop', g.id)).length, 1, 'only the drop above 10 %');
    });

    t.test('line_move, odds_drop and steam: a move observed longer ago than its book\'s stale threshold is no news', async (t) => {
      // draftkings' stale_s is 180: observations 1,100 s and 1,000 s old (a feed's backlog) move 2.0 / 1.8 to 2.4 / 1.6,
      // three books likewise: nothing is announced (regression: line_move, odds_drop and steam on 16-minute-old data)
      const g = { id: 'we_late', sport_key: 'basketball_nba', commence_time: Date.now() + 9_500_000, home_team: 'Atlanta Hawks', away_team: 'Charlotte Hornets' };
      const at = (book: string, home: number, away: number, ts: number) => h2h(g, book, home, away).map((x) => ({ ...x, ts }));
      const books = ['draftkings', 'betrivers', 'fanatics'];
      await app.ingest({ events: [g], prices: books.flatMap((b) => at(b, 2.0, 1.8, Date.now() - 1_100_000)) });
      await app.ingest({ prices: books.flatMap((b) => at(b, 2.4, 1.6, Date.now() - 1_000_000)) });
      await new Promise((r) => setTimeout(r, 400));
      const told = rx.requests.filter((r) => ['line_move', 'odds_drop', 'line_move.steam'].includes(r.body?.event_type ?? r.body?.event)
        && (r.body.data.match_id ?? r.body.data.event_id) === g.id);
      t.same(told.map((r) => r.body.event_type ?? r.body.event), [], 'nothing announced');
      // then a fresh move from the late prices is news as usual, measured from them
      await app.ingest({ prices: at('draftkings', 2.0, 1.8, Date.now()) });
      const [lm] = await rx.waitFor((r) => A_('line_move', g.id)(r) && r.body.data.book === 'draftkings');
      t.same([lm.body.data.from.price, lm.body.data.to.price], [2.4, 2], 'a fresh move is announced, from the last (late) price');
    });

    t.test('parser.degraded when a feed\'s rejection rate passes 10 %', async (t) => {
      const prices = [];
      for (let i = 0; i < 60; i++) prices.push({ book: 'no_such_book', event_id: nba.id, market: 'h2h', outcome: nba.home_team, price: 2 });
      prices.push(...h2h(nba, 'betmgm', 1.8, 1.9));
      const res = await app.ingest({ prices });
      t.equal(res.json.rejected.length, 60, '60 rejected');
      const [r] = await rx.waitFor(B_('parser.degraded'), 3000);
      t.equal(r.body.data.feed, 'none', 'the feed');
      t.ok(r.body.data.rejected >= 60 && r.body.data.rejected_pct > 10, 'rate above 10 %');
    });

    t.test('source_quality.breach and recovery follow the per-book thresholds', async (t) => {
      const t0 = clock.freeze();
      await app.ingest({ prices: h2h(nba, 'bovada', 1.8, 2.0) });
      await new Promise((r) => setTimeout(r, 1300)); // one tick sees bovada ok
      clock.freeze(t0 + 130_000); // standard class: slack 120 s
      const [br] = await rx.waitFor(B_('source_quality.breach', (x) => x.book === 'bovada'), 3000);
      t.same([br.body.data.from, br.body.data.to, br.body.data.sla_class], ['ok', 'breach', 'standard'], 'ok to breach');
      t.same(br.body.data.thresholds, { tight_s: 30, slack_s: 120, stale_s: 300 }, 'thresholds');
      await app.ingest({ prices: h2h(nba, 'bovada', 1.81, 2.0) });
      const [rc] = await rx.waitFor(B_('source_quality.recovery', (x) => x.book === 'bovada'), 3000);
      t.same([rc.body.data.from, rc.body.data.to], ['breach', 'ok'], 'back to ok');
      t.ok(rc.body.data.breached_for_s >= 0, 'breached_for_s');
      clock.release();
    });

    t.test('sport_filter passes its own sport', async (t) => {
      const nhl = { id: 'we_nhl', sport_key: 'icehockey_nhl', commence_time: Date.now() + 3_600_000, home_team: 'Boston Bruins', away_team: 'Toronto Maple Leafs' };
      await app.ingest({ events: [nhl], prices: [...h2h(nhl, 'draftkings', 2.2, 1.6), ...h2h(nhl, 'fanduel', 1.6, 2.2)] });
      const got = await rx.waitFor((r) => r.path.endsWith('?nhl'), 3000, 2);
      t.same(got.map((r) => r.body.event_type).sort(), ['arb_flagged', 'new_event'], 'both types of the NHL event');
      t.ok(got.every((r) => r.body.data.sport_key === 'icehockey_nhl'), 'only NHL');
      void onlyNhl;
      void highEdge;
    });
  });
}
