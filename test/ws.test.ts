import t from 'tap';
import WebSocket from 'ws';
import { pack } from 'msgpackr';
import { crcOf } from '../http/ws/frames.js';
import { Client, connect, key, type Frame } from './helpers/ws-client.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { uniform as rng } from '../engine/prng.js';

const now = Date.now();
const EVENTS = [0, 1, 2].map((i) => ({ id: `ws_evt_${i}`, sport_key: 'basketball_nba', commence_time: now + 3_600_000 * (i + 1), home_team: `Home ${i}`, away_team: `Away ${i}` }));
const BOOKS = ['draftkings', 'fanduel', 'betmgm', 'pinnacle'];


/** a complete, sane two-way price set per book, event and market, so /odds serves every one of them */
function prices(r: () => number, n: number) {
  const out = [];
  for (let k = 0; k < n; k++) {
    const ev = EVENTS[Math.floor(r() * EVENTS.length)];
    const book = BOOKS[Math.floor(r() * BOOKS.length)];
    const m = Math.floor(r() * 3);
    // a 4.5 % margin: each book's own two-way set is sane, so /odds serves every one of them
    const a = 1.7 + Math.floor(r() * 40) / 100;
    const b = 1 / (1.045 - 1 / a);
    if (m === 0) out.push({ book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: a }, { book, event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: b });
    if (m === 1) {
      const pt = [-3.5, -4.5][Math.floor(r() * 2)];
      out.push({ book, event_id: ev.id, market: 'spreads', outcome: ev.home_team, point: pt, price: a }, { book, event_id: ev.id, market: 'spreads', outcome: ev.away_team, point: -pt, price: b });
    }
    if (m === 2) {
      const pt = [220.5, 221.5][Math.floor(r() * 2)];
      out.push({ book, event_id: ev.id, market: 'totals', outcome: 'Over', point: pt, price: a }, { book, event_id: ev.id, market: 'totals', outcome: 'Under', point: pt, price: b });
    }
  }
  return out;
}

/** /odds as the same quote items, for every book and game market */
async function oddsBook(app: TestApp, key: string): Promise<Map<string, number>> {
  const res = await app.get(`/v1/sports/basketball_nba/odds?apiKey=${key}&markets=h2h,spreads,totals&bookmakers=${BOOKS.join(',')}`);
  const body = (await res.json()) as NonNullable<Frame['events']>;
  const out = new Map<string, number>();
  for (const ev of body) for (const b of ev.bookmakers) for (const m of b.markets) for (const o of m.outcomes) {
    out.set(key4(ev.id, m.key, o.point ?? null, o.name, b.key), o.price);
  }
  return out;
}

function key4(id: string, market: string, point: number | null, outcome: string, book: string): string {
  return `${id}|${market}||${point ?? ''}|${outcome}|${book}`;
}

function clientBook(c: Client): Map<string, number> {
  const out = new Map<string, number>();
  for (const i of c.book.values()) out.set(key(i), i.price);
  return out;
}

/** a client's masked text frame (RFC 6455) of `text`, written straight to the socket by the burst test */
function frame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const mask = Buffer.from([1, 2, 3, 4]);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff]);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([head, mask, body]);
}

t.test('ws streams', async (t) => {
  const app = await startTestApp(t);
  const apiKey = await app.key('business');
  await app.ingest({ events: EVENTS, prices: prices(rng(1), 30) });

  t.test('refusals come after the upgrade with a close code and a reason', async (t) => {
    const cases: [string, number][] = [
      ['/v1/ws/odds-fast/basketball_nba', 4001],
      ['/v1/ws/odds-fast/basketball_nba?apiKey=nope', 4001],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${await app.key('pro')}`, 4003],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${await app.key('free')}`, 4003],
      [`/v1/ws/odds-fast/no_such_sport?apiKey=${apiKey}`, 4404],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&format=xml`, 4400],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&markets=foo`, 4400],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&regions=zz`, 4400],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&resume=garbage`, 4400],
      // regressions (the WebSocket audit): a filter given twice with different values streamed the first, where REST
      // answers 422; a sport of outrights alone was opened and held heartbeats forever
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&markets=h2h&markets=spreads`, 4400],
      [`/ws/odds/basketball_nba?apiKey=${apiKey}&bookmakers=pinnacle&bookmakers=fanduel`, 4400],
      [`/v1/ws/odds-fast/basketball_nba_championship_winner?apiKey=${apiKey}`, 4400],
      // a list given empty, as REST refuses it (regression: markets= streamed every market, markets=%20, none)
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&markets=`, 4400],
      [`/ws/odds/basketball_nba?apiKey=${apiKey}&bookmakers=%20,`, 4400],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&regions=`, 4400],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&eventIds=`, 4400],
      // two different keys: neither is taken (the first was, so a pro key followed by a scale one was refused 4003
      // and the other way round streamed as scale), as REST answers 401
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${await app.key('pro')}&apiKey=${apiKey}`, 4001],
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&apiKey=${await app.key('pro')}`, 4001],
      // a merged or decommissioned book, as /odds refuses it (regression: opened a stream that could never carry it)
      [`/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&bookmakers=pointsbetus`, 4400],
      [`/ws/odds/basketball_nba?apiKey=${apiKey}&bookmakers=fanduel,foxbet`, 4400],
    ];
    for (const [path, code] of cases) {
      const c = await connect(app, path);
      const closed = await c.closedWith();
      t.equal(closed.code, code, `${path.replace(/apiKey=[^&]+/, 'apiKey=…')}: ${code}`);
      t.ok(closed.reason.length > 0, 'with a reason');
    }
  });

  t.test('a percent-encoded sport key is read as REST reads it (regression: 4404 for basketball%5Fnba)', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/basketball%5Fnba?apiKey=${apiKey}`);
    const snap = await c.until((f) => f.type === 'snapshot');
    t.equal(snap.channel, 'odds-fast:basketball_nba', 'opened on the decoded sport\'s channel');
    c.ws.close();
  });

  t.test('the 101 carries X-Request-ID and X-Response-Time, as every response does (regression: it had neither)', async (t) => {
    for (const q of [`apiKey=${apiKey}`, 'apiKey=nope']) {
      const ws = new WebSocket(`${app.base.replace('http', 'ws')}/v1/ws/odds-fast/basketball_nba?${q}`);
      const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
        ws.once('upgrade', (res) => resolve(res.headers));
        ws.once('error', reject);
      });
      ws.terminate();
      t.match(headers['x-request-id'], /^[0-9a-f]{32}$/, `${q.replace(/=.*/, '=…')}: X-Request-ID`);
      t.match(headers['x-response-time'], /^\d+\.\d{3}$/, 'X-Response-Time');
    }
  });

  t.test('snapshot, then sequenced deltas with CRCs; the book built from frames equals /odds after many updates', async (t) => {
    for (const format of ['json', 'msgpack']) {
      const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&format=${format}`);
      const snap = await c.until((f) => f.type === 'snapshot');
      t.equal(snap.channel, 'odds-fast:basketball_nba', `${format}: channel`);
      t.ok(typeof snap.epoch === 'string' && snap.epoch.length > 0, 'epoch');
      let seq = snap.seq;
      const r = rng(format === 'json' ? 2 : 3);
      for (let round = 0; round < 40; round++) await app.ingest({ prices: prices(r, 8) });
      await c.until((f) => f.type === 'delta' && f.seq >= seq + 40);
      await c.settle();
      const deltas = c.frames.filter((f) => f.type === 'delta');
      const last = deltas[deltas.length - 1];
      let gaps = 0;
      for (const f of deltas) {
        if (f.prev_seq !== seq) gaps++;
        seq = f.seq;
      }
      t.equal(gaps, 0, `${format}: every delta's prev_seq is the previous seq (no frame lost)`);
      t.ok(last.crc !== undefined, 'deltas carry per-event CRCs');
      for (const [id, crc] of Object.entries(last.crc ?? {})) t.equal(crcOf(c.eventItems(id)), crc, `${format}: CRC of ${id} matches the local book`);
      t.same(clientBook(c), await oddsBook(app, apiKey), `${format}: book from frames equals /odds`);
      c.ws.close();
    }
  });

  t.test('a delta announces an event new to the stream with its head (teams, start), before a client could know it', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
    await c.until((f) => f.type === 'snapshot');
    const fresh = { id: 'ws_new_1', sport_key: 'basketball_nba', commence_time: Date.now() + 7_200_000, home_team: 'Miami Heat', away_team: 'Orlando Magic' };
    const quote = (p: number) => [{ book: 'fanduel', event_id: fresh.id, market: 'h2h', outcome: fresh.home_team, price: p }, { book: 'fanduel', event_id: fresh.id, market: 'h2h', outcome: fresh.away_team, price: 3.9 - p }];
    await app.ingest({ events: [fresh], prices: quote(1.8) });
    const d = await c.until((f) => f.type === 'delta' && (f.changes ?? []).some((i) => i.event_id === fresh.id));
    const heads = (d.events ?? []) as unknown as { id: string; home_team: string; away_team: string; commence_time: string; sport_key: string }[];
    t.same(heads.map((h) => [h.id, h.sport_key, h.home_team, h.away_team, h.commence_time]),
      [[fresh.id, 'basketball_nba', 'Miami Heat', 'Orlando Magic', new Date(fresh.commence_time).toISOString().slice(0, 19) + 'Z']], 'the head comes with the first quotes');
    await app.ingest({ prices: quote(1.85) });
    const next = await c.until((f) => f.type === 'delta' && f.seq > d.seq && (f.changes ?? []).some((i) => i.event_id === fresh.id));
    t.equal(next.events, undefined, 'announced once');
    await app.ingest({ events: [{ ...fresh, status: 'final' }] });
    c.ws.close();
  });

  t.test('a corrupted local book is detected by the CRC', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
    await c.until((f) => f.type === 'snapshot');
    const victim = [...c.book.values()].find((i) => i.event_id === EVENTS[0].id)!;
    c.book.set(key(victim), { ...victim, price: victim.price + 0.01 });
    await app.ingest({ prices: [{ book: 'fanduel', event_id: EVENTS[0].id, market: 'h2h', outcome: EVENTS[0].home_team, price: 1.77 }, { book: 'fanduel', event_id: EVENTS[0].id, market: 'h2h', outcome: EVENTS[0].away_team, price: 2.11 }] });
    const d = await c.until((f) => f.type === 'delta' && f.crc?.[EVENTS[0].id] !== undefined);
    t.not(crcOf(c.eventItems(EVENTS[0].id)), d.crc![EVENTS[0].id], 'the CRC no longer matches the corrupted book');
    c.ws.close();
  });

  t.test('resume inside the window replays the missed deltas; outside it, a snapshot with a reason', async (t) => {
    const a = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
    const snap = await a.until((f) => f.type === 'snapshot');
    a.ws.close();
    await a.closedWith();
    const r = rng(9);
    for (let i = 0; i < 5; i++) await app.ingest({ prices: prices(r, 4) });
    // the client resumes with the book it had
    const b = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&resume=${snap.epoch}:${snap.seq}`, false, a.book);
    const first = await b.until(() => true);
    t.equal(first.type, 'delta', 'no snapshot: the missed deltas are replayed');
    t.equal(first.prev_seq, snap.seq, 'starting right after the resumed seq');
    await b.until((f) => f.type === 'delta' && f.seq === snap.seq + 5);
    await b.settle();
    const deltas = b.frames.filter((f) => f.type === 'delta');
    const last = deltas[deltas.length - 1];
    t.ok(deltas.length >= 2, `${deltas.length} deltas replayed`);
    t.equal(first.crc, undefined, 'an earlier replayed delta carries no CRC (its state is gone)');
    const touched = new Set(b.frames.filter((f) => f.type === 'delta').flatMap((f) => f.changes!.map((i) => i.event_id)));
    t.same(Object.keys(last.crc ?? {}).sort(), [...touched].sort(), 'the last replayed delta carries the CRC of every event the replay touched');
    for (const [id, crc] of Object.entries(last.crc ?? {})) t.equal(crcOf(b.eventItems(id)), crc, `after the replay, ${id}: the resumed book's CRC matches`);
    b.ws.close();
    const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&resume=otherepoch:3`);
    t.equal((await c.until((f) => f.type === 'snapshot')).reason, 'server_restarted', 'another epoch: snapshot, server_restarted');
    c.ws.close();
    const d = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&resume=${snap.epoch}:999999`);
    t.equal((await d.until((f) => f.type === 'snapshot')).reason, 'resume_window_exceeded', 'a seq the server never held: snapshot');
    d.ws.close();
  });

  t.test('an event whose start or teams change with no quote is announced with its quotes (regression: it never was)', async (t) => {
    type Head = { id: string; commence_time: string; home_team: string };
    const ev = { id: 'ws_head_1', sport_key: 'icehockey_nhl', commence_time: Math.floor(Date.now() / 1000) * 1000 + 7_200_000, home_team: 'Head Home', away_team: 'Head Away' };
    await app.ingest({ events: [ev], prices: [
      { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.8 },
      { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.05 },
    ] });
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + 'Z';
    const mine = (c: Client) => [...c.book.values()].filter((i) => i.event_id === ev.id).map((i) => [i.outcome, i.price]).sort();
    // business: a window of 1 s; scale: none
    for (const [tier, k] of [['business', apiKey], ['scale', await app.key('scale')]] as const) {
      const c = await connect(app, `/ws/odds/icehockey_nhl?apiKey=${k}`);
      const snap = await c.until((f) => f.type === 'snapshot');
      const later = ev.commence_time + 3_600_000 * (tier === 'business' ? 1 : 2);
      await app.ingest({ events: [{ ...ev, commence_time: later }] });
      const d = await c.until((f) => f.type === 'delta' && f.seq > snap.seq);
      t.same((d.events as unknown as Head[] | undefined)?.map((e) => [e.id, e.commence_time]), [[ev.id, iso(later)]], `${tier}: the new start is announced`);
      t.same(mine(c), [['Head Away', 2.05], ['Head Home', 1.8]], `${tier}: the book unchanged`);
      const renamed = `Renamed Home ${tier}`;
      await app.ingest({ events: [{ ...ev, commence_time: later, home_team: renamed }] });
      const d2 = await c.until((f) => f.type === 'delta' && f.seq > d.seq);
      t.same((d2.events as unknown as Head[] | undefined)?.map((e) => e.home_team), [renamed], `${tier}: the new name is announced`);
      t.same(mine(c), [['Head Away', 2.05], [renamed, 1.8]], `${tier}: the home side under its new name only`);
      // back to its name for the next tier
      await app.ingest({ events: [{ ...ev, commence_time: later }] });
      await c.until((f) => f.type === 'delta' && f.seq > d2.seq);
      c.ws.close();
    }
    await app.ingest({ events: [{ ...ev, status: 'final' }] });
  });

  t.test('a resume token of one tier channel is not replayed on another (their seqs count apart)', async (t) => {
    // business /ws/odds coalesces over 1 s, scale over 0: one name, two sequences. A business client upgraded to
    // scale resumed with its business seq and was replayed the scale channel's deltas from that number: a gap
    const a = await connect(app, `/ws/odds/basketball_nba?apiKey=${apiKey}`);
    const snap = await a.until((f) => f.type === 'snapshot');
    a.ws.close();
    await a.closedWith();
    const scale = await app.key('scale');
    const warm = await connect(app, `/ws/odds/basketball_nba?apiKey=${scale}`);
    const scaleSnap = await warm.until((f) => f.type === 'snapshot');
    t.not(scaleSnap.epoch, snap.epoch, 'the two channels name their sequences apart');
    const r = rng(21);
    for (let i = 0; i < 3; i++) await app.ingest({ prices: prices(r, 4) });
    await warm.until((f) => f.type === 'delta');
    warm.ws.close();
    const b = await connect(app, `/ws/odds/basketball_nba?apiKey=${scale}&resume=${snap.epoch}:${snap.seq}`);
    const first = await b.until(() => true);
    t.same([first.type, first.reason], ['snapshot', 'server_restarted'], 'the business token on the scale channel: a snapshot, not a replay');
    b.ws.close();
  });

  t.test('a resume token of another sport\'s or stream kind\'s channel gets a snapshot, not that channel\'s deltas', async (t) => {
    // regression from the WebSocket audit: the epoch named the process and the tier window alone, so the channels of
    // every sport and kind at one window shared it, and an NFL token resumed on MLB replayed MLB's deltas onto the
    // client's NFL book
    for (const [from, to] of [
      ['/v1/ws/odds-fast/americanfootball_nfl', '/v1/ws/odds-fast/basketball_nba'],
      ['/ws/live/basketball_nba', '/ws/odds/basketball_nba'],
    ]) {
      // the target channel has deltas its ring still holds, from seq 1
      const target = await connect(app, `${to}?apiKey=${apiKey}`);
      const snap = await target.until((f) => f.type === 'snapshot');
      await app.ingest({ prices: prices(rng(31), 4) });
      await target.until((f) => f.type === 'delta' && f.seq > snap.seq);
      target.ws.close();
      // a token of the other channel, held since its snapshot
      const other = await connect(app, `${from}?apiKey=${apiKey}`);
      const token = await other.until((f) => f.type === 'snapshot');
      other.ws.close();
      t.not(token.epoch, snap.epoch, `${from} and ${to} name their sequences apart`);
      const b = await connect(app, `${to}?apiKey=${apiKey}&resume=${token.epoch}:${token.seq}`);
      const first = await b.until(() => true);
      t.same([first.type, first.reason, first.channel], ['snapshot', 'server_restarted', snap.channel], `${from}'s token on ${to}: a snapshot of it, not its deltas`);
      b.ws.close();
    }
  });

  t.test('markets=h2h on a three-way sport streams its three-way moneyline, as /odds serves it', async (t) => {
    const epl = { id: 'ws_epl_1', sport_key: 'soccer_epl', commence_time: Date.now() + 3_600_000, home_team: 'Arsenal', away_team: 'Chelsea' };
    await app.ingest({ events: [epl], prices: ['Arsenal', 'Chelsea', 'Draw'].map((outcome, i) => ({ book: 'williamhill', event_id: epl.id, market: 'h2h_3_way', outcome, price: 2.5 + i })) });
    const c = await connect(app, `/v1/ws/odds-fast/soccer_epl?apiKey=${apiKey}&markets=h2h`);
    const snap = await c.until((f) => f.type === 'snapshot');
    const ev = snap.events!.find((e) => e.id === epl.id);
    t.same(ev?.bookmakers.flatMap((b) => b.markets.map((m) => [b.key, m.key, m.outcomes.length])), [['williamhill', 'h2h_3_way', 3]],
      'the three-way line, draw included (it was filtered out: an empty book list)');
    await app.ingest({ prices: [{ book: 'williamhill', event_id: epl.id, market: 'h2h_3_way', outcome: 'Draw', price: 3.75 }] });
    const d = await c.until((f) => f.type === 'delta');
    t.same(d.changes!.map((i) => [i.market, i.outcome, i.price]), [['h2h_3_way', 'Draw', 3.75]], 'and its deltas');
    c.ws.close();
    await app.ingest({ events: [{ ...epl, status: 'final' }] });
  });

  t.test('regions filter books as on /odds; bookmakers override them', async (t) => {
    const booksOf = async (query: string) => {
      const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&${query}`);
      const snap = await c.until((f) => f.type === 'snapshot');
      c.ws.close();
      return [...new Set(snap.events!.flatMap((e) => e.bookmakers.map((b) => b.key)))].sort();
    };
    const odds = (await (await app.get(`/v1/sports/basketball_nba/odds?apiKey=${apiKey}&regions=us`)).json()) as { bookmakers: { key: string }[] }[];
    const rest = [...new Set(odds.flatMap((e) => e.bookmakers.map((b) => b.key)))].sort();
    t.same(await booksOf('regions=us'), rest, 'regions=us: the books /odds serves for us');
    t.notOk(rest.includes('pinnacle'), 'pinnacle is not a us book');
    t.same(await booksOf('regions=us&bookmakers=pinnacle'), ['pinnacle'], 'bookmakers win');
  });

  t.test('a burst of subscribes gets one snapshot, with the last filters (regression: one built on the spot per message)', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
    await c.until((f) => f.type === 'snapshot');
    const books = ['draftkings', 'betmgm', 'pinnacle', 'betrivers', 'fanduel'];
    // written in one go, so the server reads them together, as a client in a loop sends them
    const burst = Array.from({ length: 20 }, (_, i) => JSON.stringify({ op: 'subscribe', bookmakers: books[i % books.length] }));
    (c.ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(Buffer.concat(burst.map(frame)));
    const last = await c.until((f) => f.type === 'snapshot' && f.reason === 'subscribed');
    await c.settle(300);
    const snaps = c.frames.filter((f) => f.type === 'snapshot' && f.reason === 'subscribed' && (f.seg === undefined || f.seg === 'start'));
    t.equal(snaps.length, 1, `one snapshot for 20 subscribes (got ${snaps.length})`);
    const seen = new Set(last.events!.flatMap((e) => e.bookmakers.map((b) => b.key)));
    t.same([...seen], [books[19 % books.length]], 'built with the last subscribe\'s filters');
    c.ws.close();
  });

  t.test('filters on connect and by a subscribe message; bad messages get an error frame', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}&markets=h2h&bookmakers=fanduel`);
    const snap = await c.until((f) => f.type === 'snapshot');
    const books = new Set(snap.events!.flatMap((e) => e.bookmakers.map((b) => b.key)));
    const markets = new Set(snap.events!.flatMap((e) => e.bookmakers.flatMap((b) => b.markets.map((m) => m.key))));
    t.same([...books], ['fanduel'], 'snapshot: only fanduel');
    t.same([...markets], ['h2h'], 'snapshot: only h2h');
    await app.ingest({ prices: prices(rng(5), 20) });
    const d = await c.until((f) => f.type === 'delta');
    t.ok(d.changes!.every((i) => i.market === 'h2h' && i.book === 'fanduel'), 'deltas filtered');
    c.ws.send(JSON.stringify({ op: 'subscribe', markets: 'totals', oddsFormat: 'american' }));
    const re = await c.until((f) => f.type === 'snapshot' && f.reason === 'subscribed');
    const outcomes = re.events!.flatMap((e) => e.bookmakers.flatMap((b) => b.markets.flatMap((m) => m.outcomes)));
    t.ok(outcomes.length > 0 && outcomes.every((o) => Number.isInteger(o.price) && Math.abs(o.price) >= 100), 'new filters, American prices');
    c.ws.send('not json');
    t.equal((await c.until((f) => f.type === 'error')).code, 'BAD_MESSAGE', 'malformed message: error frame');
    c.ws.send(JSON.stringify({ op: 'subscribe', markets: 'nope' }));
    t.match((await c.until((f) => f.type === 'error' && /nope/.test(f.message ?? ''))).message, /unknown markets/, 'bad filter: error frame');
    // regression: an object where a string belongs reached String() and threw, which ended the whole process
    for (const bad of [{ markets: { toString: 1 } }, { eventIds: [{ toString: null }] }, { bookmakers: 42 }, { markets: ['h2h', 7] }]) {
      c.ws.send(JSON.stringify({ op: 'subscribe', ...bad }));
      const err = await c.until((f) => f.type === 'error' && /array of strings/.test(f.message ?? ''));
      t.equal(err.code, 'BAD_MESSAGE', `${JSON.stringify(bad)}: an error frame, not a crash`);
    }
    // an empty list subscribed everything (regression): refused as a list given empty
    for (const empty of [{ markets: [] }, { bookmakers: '' }, { eventIds: ' , ' }]) {
      c.ws.send(JSON.stringify({ op: 'subscribe', ...empty }));
      const err = await c.until((f) => f.type === 'error' && /at least one value/.test(f.message ?? '') && f.message!.startsWith(Object.keys(empty)[0]));
      t.equal(err.code, 'BAD_MESSAGE', `${JSON.stringify(empty)}: an error frame`);
    }
    c.ws.send(JSON.stringify({ op: 'subscribe', eventIds: 'x'.repeat(70 * 1024) }));
    t.match((await c.until((f) => f.type === 'error' && /at most/.test(f.message ?? ''))).message, /at most 65536 bytes/, 'a 70 KB message: an error frame, the connection kept');
    t.equal(c.closed, null, 'still connected');
    t.equal((await app.get('/v1/sports')).status, 200, 'and the server still serves');
    c.ws.close();
  });

  t.test('/v4 aliases, msgpack client messages, and the fields every frame carries', async (t) => {
    const c = await connect(app, `/v4/ws/odds-fast/basketball_nba?apiKey=${apiKey}&format=msgpack`);
    const snap = await c.until((f) => f.type === 'snapshot');
    t.equal(snap.channel, 'odds-fast:basketball_nba', 'the /v4 path serves the same channel');
    // regression (the WebSocket audit): with a trailing slash the upgrade met the 426 of a plain GET
    for (const path of [`/ws/odds/basketball_nba/?apiKey=${apiKey}`, `/v1/ws/odds-fast/basketball_nba/?apiKey=${apiKey}&markets=h2h&markets=h2h`]) {
      const slash = await connect(app, path);
      const s = await slash.until((f) => f.type === 'snapshot');
      t.equal(s.channel, path.startsWith('/ws/odds') ? 'odds:basketball_nba' : 'odds-fast:basketball_nba', `a trailing slash streams too (${path.split('?')[0]}; a parameter repeated with one value is fine)`);
      slash.ws.close();
    }
    c.ws.send(pack({ op: 'ping' }));
    const pong = await c.until((f) => f.type === 'pong');
    c.ws.send(pack([1, 2, 3]));
    const err = await c.until((f) => f.type === 'error');
    t.equal(err.code, 'BAD_MESSAGE', 'a msgpack array is refused with an error frame');
    for (const f of [snap, pong, err]) {
      t.ok(['channel', 'epoch', 'seq', 'prev_seq', 'pt'].every((k) => k in f), `${f.type}: channel, epoch, seq, prev_seq, pt`);
    }
    c.ws.close();
  });

  t.test('/ws/odds coalesces per tier window; heartbeats carry quiet_seconds and upstream', async (t) => {
    const c = await connect(app, `/ws/odds/basketball_nba?apiKey=${apiKey}`);
    await c.until((f) => f.type === 'snapshot');
    const r = rng(11);
    for (let i = 0; i < 6; i++) await app.ingest({ prices: prices(r, 2) });
    const d = await c.until((f) => f.type === 'delta', 3000);
    t.ok(d.changes!.length >= 2, 'several batches merged into one delta');
    const hb = await c.until((f) => f.type === 'heartbeat', 7000);
    t.ok(typeof hb.quiet_seconds === 'number', 'quiet_seconds');
    t.ok(['ok', 'degraded', 'breach', 'stale'].includes(hb.upstream!.worst_sla), 'worst_sla');
    t.ok(hb.upstream!.counts.ok >= 1, 'fresh books counted ok');
    c.ws.close();
    // a channel that never changed: quiet since it opened (it was null)
    const idle = await connect(app, `/v1/ws/odds-fast/esports?apiKey=${apiKey}`);
    const quiet = await idle.until((f) => f.type === 'heartbeat', 7000);
    t.ok(typeof quiet.quiet_seconds === 'number' && quiet.quiet_seconds >= 0, 'quiet_seconds on a channel with no delta yet: a number');
    idle.ws.close();
  });

  t.test('a client that stops reading ends with exactly the current state; another meanwhile got every delta', async (t) => {
    const slow = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
    const fast = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
    const s0 = await fast.until((f) => f.type === 'snapshot');
    await slow.until((f) => f.type === 'snapshot');
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const r = rng(13);
    // enough volume to fill the kernel buffers and the server's low watermark
    for (let i = 0; i < 100; i++) await app.ingest({ prices: prices(r, 500) });
    socket.resume();
    await fast.until((f) => f.type === 'delta' && f.seq >= s0.seq + 100, 30000);
    await fast.settle();
    const target = fast.frames.filter((f) => f.type === 'delta').pop()!.seq;
    await slow.until((f) => (f.type === 'delta' || f.type === 'snapshot') && f.seq === target, 30000);
    t.ok(slow.frames.some((f) => f.con === true || (f.type === 'snapshot' && f.reason !== undefined)),
      'the slow client was caught up by a merged delta (con) or a snapshot');
    let seq = s0.seq;
    let gaps = 0;
    for (const f of fast.frames.filter((x) => x.type === 'delta')) {
      if (f.prev_seq !== seq) gaps++;
      seq = f.seq;
    }
    t.equal(gaps, 0, 'the fast client received every delta in order');
    const want = await oddsBook(app, apiKey);
    t.same(clientBook(slow), want, 'slow client book equals /odds');
    t.same(clientBook(fast), want, 'fast client book equals /odds');
    slow.ws.close();
    fast.ws.close();
  });
});
