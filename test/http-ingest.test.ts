// POST /v1/ingest over a real socket: admin auth, JSON and msgpack bodies, per-item rejections, malformed and
// oversized bodies (nothing applied), final events and no-change verifications.

import { request } from 'node:http';
import { pack } from 'msgpackr';
import t from 'tap';
import { MAX_INGEST_BYTES } from '../http/routes/ingest.js';
import { ADMIN_KEY, fixture, startTestApp } from './helpers/app.js';

interface Outcome { name: string; price: number; point?: number }
interface OddsEvent {
  id: string; commence_time: string;
  bookmakers: { key: string; last_update: string; verified_at?: string; line_changed_at?: string; markets: { key: string; outcomes: Outcome[] }[] }[];
}
interface IngestAnswer {
  events: number; accepted: number;
  rejected: { index: number; error_code: string; message: string }[];
  rejected_events?: { index: number; error_code: string; message: string }[];
}
interface ErrBody { message: string; error_code: string }

const app = await startTestApp(t);
const key = await app.key('business');
const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const NOW = Math.floor(Date.now() / 1000) * 1000;
const { nba, epl } = fixture(NOW);

async function odds(sport: string, query = ''): Promise<OddsEvent[]> {
  const res = await app.get(`/v1/sports/${sport}/odds?${query}`, { 'X-API-Key': key });
  if (res.status !== 200) throw new Error(`odds ${res.status}: ${await res.text()}`);
  return (await res.json()) as OddsEvent[];
}

async function eventIds(sport: string): Promise<string[]> {
  return ((await (await app.get(`/v1/sports/${sport}/events`)).json()) as { id: string }[]).map((e) => e.id);
}

/** POST with full control of the bytes: `chunks` are written one by one; no content-length means chunked. */
function rawPost(path: string, headers: Record<string, string | number>, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = request({ host: '127.0.0.1', port: app.app.port, path, method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => { settled = true; resolve({ status: res.statusCode ?? 0, body }); });
      res.on('error', (e) => { if (!settled) { settled = true; reject(e); } });
    });
    // the server answers 413 and closes while the client still writes: write errors after that are expected
    req.on('error', (e) => { if (!settled) { settled = true; reject(e); } });
    void (async () => {
      for (const c of chunks) {
        if (req.destroyed) return;
        if (!req.write(c)) {
          await new Promise<void>((r) => {
            const done = () => { req.off('drain', done); req.off('close', done); r(); };
            req.on('drain', done);
            req.on('close', done);
          });
        }
      }
      req.end();
    })();
  });
}

const p = (book: string, ev: { id: string }, market: string, outcome: string, price: number, extra: Record<string, unknown> = {}) =>
  ({ book, event_id: ev.id, market, outcome, price, ...extra });

t.test('ingest - the admin key is required', async (t) => {
  const body = { events: [nba] };
  const cases: [string, Record<string, string>][] = [
    ['no key', {}],
    ['an API key in X-API-Key', { 'X-API-Key': key }],
    ['an API key as Bearer', { authorization: `Bearer ${key}` }],
  ];
  for (const [name, headers] of cases) {
    const res = await app.post('/v1/ingest', body, headers);
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(((await res.json()) as ErrBody).error_code, 'ADMIN_KEY_REQUIRED', `${name}: ADMIN_KEY_REQUIRED`);
  }
  t.same(await eventIds('basketball_nba'), [], 'nothing applied');
  const get = await app.get('/v1/ingest', admin);
  t.equal(get.status, 405, 'GET /v1/ingest is 405');
  await get.arrayBuffer();
});

t.test('ingest - JSON: 202 with per-item rejections, good items applied', async (t) => {
  const res = await app.post('/v1/ingest', {
    events: [
      nba,
      { ...epl },
      { id: 'bad event id!', sport_key: 'basketball_nba', commence_time: NOW + 1000, home_team: 'A', away_team: 'B' },
      { id: 'ing_same', sport_key: 'basketball_nba', commence_time: NOW + 1000, home_team: 'Same', away_team: 'same' },
      { id: 'ing_nosport', sport_key: 'curling_world', commence_time: NOW + 1000, home_team: 'A', away_team: 'B' },
      { id: 'ing_notime', sport_key: 'basketball_nba', commence_time: '2031-01-01 12:00', home_team: 'A', away_team: 'B' },
      { id: 'ing_status', sport_key: 'basketball_nba', commence_time: NOW + 1000, home_team: 'A', away_team: 'B', status: 'postponed' },
      'not an object',
      // a NUL was stored and failed every closing-line write after it (PostgreSQL text holds none)
      { id: 'ing_nul', sport_key: 'basketball_nba', commence_time: NOW + 1000, home_team: 'Poison\u0000Home', away_team: 'B' },
      // a lone surrogate ("\ud800" in JSON) is no character: PostgreSQL refused it, and the history writer dropped the
      // event's whole closing set with it (the exports audit)
      { id: 'ing_surrogate', sport_key: 'basketball_nba', commence_time: NOW + 1000, home_team: 'Lone \ud800 Home', away_team: 'B' },
    ],
    prices: [
      p('draftkings', nba, 'h2h', 'Boston Celtics', 1.5), // 0 ok
      p('draftkings', nba, 'h2h', 'Miami Heat', 2.75), // 1 ok
      p('nosuchbook', nba, 'h2h', 'Miami Heat', 2.75), // 2
      p('pointsbetus', nba, 'h2h', 'Miami Heat', 2.75), // 3 merged
      p('draftkings', { id: 'nope' }, 'h2h', 'Miami Heat', 2.75), // 4
      p('draftkings', nba, 'moneyline', 'Miami Heat', 2.75), // 5
      p('draftkings', nba, 'h2h_3_way', 'Draw', 15), // 6 not for basketball
      p('draftkings', nba, 'h2h', 'Lakers', 2.75), // 7
      p('draftkings', nba, 'spreads', 'Miami Heat', 1.9), // 8 no point
      p('draftkings', nba, 'h2h', 'Miami Heat', 2.75, { point: 1.5 }), // 9 point on h2h
      p('draftkings', nba, 'spreads', 'Miami Heat', 1.9, { point: 6.3 }), // 10 not a quarter
      p('draftkings', nba, 'h2h', 'Miami Heat', 1.0), // 11 price not above 1
      p('draftkings', nba, 'h2h', 'Miami Heat', '2.75' as unknown as number), // 12 price as a string
      p('draftkings', nba, 'h2h', 'Miami Heat', 2.75, { ts: NOW + 3_600_000 }), // 13 ts in the future
      42, // 14
      p('draftkings', nba, 'h2h', 'Miami Heat', 2.75, { player: 'Jimmy Butler' }), // 15 player on a game market
      p('fanduel', nba, 'spreads', 'Boston Celtics', 1.91, { point: -6.5 }), // 16 ok
      p('fanduel', nba, 'spreads', 'Miami Heat', 1.91, { point: 6.5 }), // 17 ok
      p('draftkings', epl, 'h2h', 'Arsenal', 2.1), // 18 ok: h2h on soccer is three-way
      p('draftkings', epl, 'h2h', 'draw', 3.4), // 19 ok: outcome names are case-insensitive
      p('draftkings', epl, 'h2h', 'Chelsea', 3.6), // 20 ok
      p('draftkings', { id: 'ing_same' }, 'h2h', 'Same', 2), // 21 its event was rejected
      p('draftkings', nba, 'player_points', 'Over', 1.9, { point: 20.5, player: 'Jayson\u0000Tatum' }), // 22 a control character
      p('prizepicks', nba, 'h2h', 'Miami Heat', 1.3), // 23 a DFS board offers props only (/odds served it at its payout)
      p('prizepicks', nba, 'player_points', 'Over', 1.5, { point: 20.5, player: 'Jimmy Butler' }), // 24 ok
      p('draftkings', nba, 'player_points', 'Over', 1.9, { point: 20.5, player: 'Jayson \udc00Tatum' }), // 25 a lone surrogate
      p('draftkings', nba, 'player_points', 'Over', 1.9, { point: 20.5, player: 'Nikola Jokić 😀' }), // 26 ok: a pair is a character
    ],
  }, admin);
  t.equal(res.status, 202, '202 Accepted');
  const body = (await res.json()) as IngestAnswer;
  t.equal(body.events, 2, 'two events upserted');
  t.equal(body.accepted, 9, 'nine prices applied');
  t.same(body.rejected.map((r) => [r.index, r.error_code]), [
    [2, 'UNKNOWN_BOOK'],
    [3, 'INACTIVE_BOOK'],
    [4, 'EVENT_NOT_FOUND'],
    [5, 'UNKNOWN_MARKET'],
    [6, 'MARKET_NOT_OFFERED'],
    [7, 'INVALID_OUTCOME'],
    [8, 'INVALID_POINT'],
    [9, 'INVALID_POINT'],
    [10, 'INVALID_POINT'],
    [11, 'INVALID_PRICE'],
    [12, 'INVALID_PRICE'],
    [13, 'INVALID_TIMESTAMP'],
    [14, 'INVALID_ITEM'],
    [15, 'INVALID_PLAYER'],
    [21, 'EVENT_NOT_FOUND'],
    [22, 'INVALID_PLAYER'],
    [23, 'MARKET_NOT_OFFERED'],
    [25, 'INVALID_PLAYER'],
  ], 'each bad price rejected on its own, by index into prices');
  t.ok(body.rejected.every((r) => Object.keys(r).sort().join() === 'error_code,index,message' && r.message.length > 0), 'rejections carry index, error_code and message');
  t.match(body.rejected.find((r) => r.index === 3)?.message, /merged into fanatics/, 'an inactive book names its successor');
  t.same(body.rejected_events?.map((r) => [r.index, r.error_code]), [
    [2, 'INVALID_EVENT'], [3, 'INVALID_EVENT'], [4, 'UNKNOWN_SPORT'], [5, 'INVALID_EVENT'], [6, 'INVALID_EVENT'], [7, 'INVALID_ITEM'], [8, 'INVALID_EVENT'],
    [9, 'INVALID_EVENT'],
  ], 'bad events are rejected one by one too');

  t.same(await eventIds('basketball_nba'), ['evt_nba_1'], 'the good NBA event is listed');
  const [ev] = await odds('basketball_nba', 'markets=h2h,spreads');
  const books = Object.fromEntries(ev.bookmakers.map((b) => [b.key, b.markets.map((m) => [m.key, m.outcomes.map((o) => o.price)])]));
  t.same(books, { draftkings: [['h2h', [1.5, 2.75]]], fanduel: [['spreads', [1.91, 1.91]]] }, 'the good prices are served');
  const [soccer] = await odds('soccer_epl');
  t.same(soccer.bookmakers[0].markets[0].outcomes, [{ name: 'Arsenal', price: 2.1 }, { name: 'Chelsea', price: 3.6 }, { name: 'Draw', price: 3.4 }], 'the three-way line');
});

t.test('ingest - msgpack bodies work the same', async (t) => {
  const ev = { id: 'ing_mp_1', sport_key: 'basketball_wnba', commence_time: NOW + 3_600_000, home_team: 'Seattle Storm', away_team: 'Las Vegas Aces' };
  const body = pack({
    events: [ev],
    prices: [
      p('draftkings', ev, 'h2h', 'Seattle Storm', 1.8),
      p('draftkings', ev, 'h2h', 'Las Vegas Aces', 2.05),
      p('draftkings', ev, 'totals', 'Over', 1.9, { point: 160.5 }),
      p('draftkings', ev, 'totals', 'Under', 1.9, { point: 160.5 }),
      p('draftkings', ev, 'totals', 'Sideways', 1.9, { point: 160.5 }),
    ],
  });
  const res = await app.post('/v1/ingest', body, { ...admin, 'content-type': 'application/msgpack' });
  t.equal(res.status, 202, '202');
  const answer = (await res.json()) as IngestAnswer;
  t.same([answer.events, answer.accepted, answer.rejected.map((r) => [r.index, r.error_code])], [1, 4, [[4, 'INVALID_OUTCOME']]], 'same accounting as JSON');
  const [served] = await odds('basketball_wnba', 'markets=h2h,totals');
  t.same(served.bookmakers[0].markets.map((m) => m.outcomes), [
    [{ name: 'Seattle Storm', price: 1.8 }, { name: 'Las Vegas Aces', price: 2.05 }],
    [{ name: 'Over', price: 1.9, point: 160.5 }, { name: 'Under', price: 1.9, point: 160.5 }],
  ], 'served from a msgpack batch');

  // regression: Python, Go and Rust encoders write a millisecond ts as uint64 (0xcf) or int64 (0xd3); msgpackr read it as
  // a BigInt and every such observation was rejected INVALID_TIMESTAMP. A BigInt packs as uint64 here.
  // A BigInt packs as int64 (0xd3); the same bytes under 0xcf are the uint64 of the same value.
  for (const [marker, price] of [[0xd3, 2.1], [0xcf, 2.15]] as const) {
    const ts64 = Buffer.from(pack({ prices: [{ ...p('draftkings', ev, 'h2h', 'Las Vegas Aces', price), ts: BigInt(Date.now()) }] }));
    const at = ts64.indexOf(0xd3);
    t.ok(at > 0, 'precondition: the body carries an int64');
    ts64[at] = marker;
    const r64 = await app.post('/v1/ingest', ts64, { ...admin, 'content-type': 'application/msgpack' });
    const a64 = (await r64.json()) as IngestAnswer;
    t.same([r64.status, a64.accepted, a64.rejected], [202, 1, []], `ts as 0x${marker.toString(16)}: accepted`);
    const [after64] = await odds('basketball_wnba', 'markets=h2h');
    t.equal(after64.bookmakers[0].markets[0].outcomes[1].price, price, `ts as 0x${marker.toString(16)}: applied`);
  }

  const alt = await app.post('/v1/ingest', pack({ prices: [p('draftkings', ev, 'h2h', 'Seattle Storm', 1.85)] }), { ...admin, 'content-type': 'application/x-msgpack; charset=binary' });
  t.equal(alt.status, 202, 'application/x-msgpack with a parameter is accepted too');
  const vnd = await app.post('/v1/ingest', pack({ prices: [p('draftkings', ev, 'h2h', 'Seattle Storm', 1.85)] }), { ...admin, 'content-type': 'application/vnd.msgpack' });
  t.equal(vnd.status, 202, 'application/vnd.msgpack too');
  await vnd.arrayBuffer();
  t.equal(((await alt.json()) as IngestAnswer).accepted, 1, 'applied');

  const broken = await app.post('/v1/ingest', Buffer.from([0xc1]), { ...admin, 'content-type': 'application/msgpack' });
  t.equal(broken.status, 400, 'the reserved byte 0xc1 is 400, not an empty batch');
  t.equal(((await broken.json()) as ErrBody).error_code, 'MALFORMED_BODY', 'MALFORMED_BODY');
  const valid = pack({ prices: [p('draftkings', ev, 'h2h', 'Seattle Storm', 1.5)] });
  const bad: [string, Buffer][] = [
    ['a msgpack array', pack([1, 2, 3])],
    ['a msgpack number', pack(7)],
    ['a truncated map', valid.subarray(0, valid.length - 3)],
    ['trailing bytes after a map', Buffer.concat([valid, Buffer.from([1, 2])])],
    ['a timestamp extension', pack(new Date(NOW))],
  ];
  for (const [name, bytes] of bad) {
    const res = await app.post('/v1/ingest', bytes, { ...admin, 'content-type': 'application/msgpack' });
    t.equal(res.status, 400, `${name}: 400`);
    t.equal(((await res.json()) as ErrBody).error_code, 'MALFORMED_BODY', `${name}: MALFORMED_BODY`);
  }
  const [after] = await odds('basketball_wnba');
  t.equal(after.bookmakers[0].markets[0].outcomes[0].price, 1.85, 'no malformed msgpack body changed a price');
});

t.test('ingest - malformed bodies are 400 and apply nothing', async (t) => {
  const before = await odds('basketball_nba', 'markets=h2h,spreads&regions=us');
  const newEvent = { id: 'ing_never', sport_key: 'basketball_nba', commence_time: NOW + 1_000_000, home_team: 'Chicago Bulls', away_team: 'Detroit Pistons' };
  const move = p('draftkings', nba, 'h2h', 'Boston Celtics', 1.4);
  const cases: [string, string][] = [
    ['truncated JSON', JSON.stringify({ events: [newEvent], prices: [move] }).slice(0, -2)],
    ['a JSON array', JSON.stringify([{ events: [newEvent], prices: [move] }])],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['a JSON string', '"events"'],
    ['events not an array', JSON.stringify({ events: { 0: newEvent }, prices: [move] })],
    ['prices not an array', JSON.stringify({ events: [newEvent], prices: move })],
    ['events null', JSON.stringify({ events: null, prices: [move] })],
    ['prices null', JSON.stringify({ events: [newEvent], prices: null })],
    ['an empty body', ''],
    // regression: a misspelt top level was a 202 applying nothing, with no word of why
    ['a misspelt "event"', JSON.stringify({ event: [newEvent], prices: [move] })],
  ];
  for (const [name, raw] of cases) {
    const res = await app.post('/v1/ingest', raw, admin);
    t.equal(res.status, 400, `${name}: 400`);
    const body = (await res.json()) as ErrBody;
    t.equal(body.error_code, 'MALFORMED_BODY', `${name}: MALFORMED_BODY`);
  }
  t.same(await odds('basketball_nba', 'markets=h2h,spreads&regions=us'), before, 'odds unchanged');
  t.notOk((await eventIds('basketball_nba')).includes('ing_never'), 'no event from a rejected body');

  const empty = await app.ingest({});
  t.same([empty.status, empty.json.events, empty.json.accepted, empty.json.rejected], [202, 0, 0, []], 'an empty object is a valid empty batch');
});

t.test('ingest - wrong content type is 415', async (t) => {
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const res = await app.post('/v1/ingest', JSON.stringify({ events: [nba] }), { ...admin, 'content-type': type });
    t.equal(res.status, 415, `${type}: 415`);
    t.equal(((await res.json()) as ErrBody).error_code, 'UNSUPPORTED_MEDIA_TYPE', `${type}: UNSUPPORTED_MEDIA_TYPE`);
  }
  const charset = await app.post('/v1/ingest', JSON.stringify({}), { ...admin, 'content-type': 'application/json; charset=utf-8' });
  t.equal(charset.status, 202, 'application/json with a charset is JSON');
  await charset.arrayBuffer();
});

t.test('ingest - bodies above 16 MiB are 413, with or without content-length', async (t) => {
  const before = await odds('basketball_nba', 'markets=h2h,spreads&regions=us');
  const move = p('draftkings', nba, 'h2h', 'Boston Celtics', 1.3);
  // valid JSON of an exact size: a batch with a padding field the server ignores
  const jsonOfSize = (size: number): Buffer => {
    // padded with blanks before the closing brace (a field of its own would be refused: the body holds events and prices)
    const head = JSON.stringify({ prices: [move] });
    return Buffer.from(head.slice(0, -1) + ' '.repeat(size - Buffer.byteLength(head)) + '}');
  };
  const big = jsonOfSize(17 * 1024 * 1024);
  t.equal(big.length, 17 * 1024 * 1024, 'precondition: a 17 MiB body');

  const declared = await fetch(`${app.base}/v1/ingest`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: big });
  t.equal(declared.status, 413, 'content-length above the limit: 413');
  t.equal(((await declared.json()) as ErrBody).error_code, 'BODY_TOO_LARGE', 'BODY_TOO_LARGE');

  const chunks: Buffer[] = [];
  for (let off = 0; off < big.length; off += 1024 * 1024) chunks.push(big.subarray(off, off + 1024 * 1024));
  const chunked = await rawPost('/v1/ingest', { ...admin, 'content-type': 'application/json' }, chunks);
  t.equal(chunked.status, 413, 'chunked, no content-length: 413 once the limit is passed');
  t.equal((JSON.parse(chunked.body) as ErrBody).error_code, 'BODY_TOO_LARGE', 'BODY_TOO_LARGE');

  const lying = await rawPost('/v1/ingest', { ...admin, 'content-type': 'application/json', 'content-length': String(big.length) }, chunks);
  t.equal(lying.status, 413, 'declared size checked before reading');
  t.same(await odds('basketball_nba', 'markets=h2h,spreads&regions=us'), before, 'nothing from an oversized body was applied');

  const exact = await fetch(`${app.base}/v1/ingest`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: jsonOfSize(MAX_INGEST_BYTES) });
  t.equal(exact.status, 202, 'exactly 16 MiB is accepted');
  t.equal(((await exact.json()) as IngestAnswer).accepted, 1, 'and applied');
  const [ev] = await odds('basketball_nba', 'bookmakers=draftkings');
  t.equal(ev.bookmakers[0].markets[0].outcomes[0].price, 1.3, 'the price from the 16 MiB body');

  const health = await app.get('/health');
  t.equal(health.status, 200, 'the server is fine afterwards');
  await health.arrayBuffer();
});

t.test('ingest - status final removes an event from /events and /odds', async (t) => {
  const ev = { id: 'ing_final_1', sport_key: 'icehockey_nhl', commence_time: NOW + 3_600_000, home_team: 'Boston Bruins', away_team: 'Buffalo Sabres' };
  await app.ingest({ events: [ev], prices: [p('draftkings', ev, 'h2h', ev.home_team, 1.7), p('draftkings', ev, 'h2h', ev.away_team, 2.2)] });
  t.same(await eventIds('icehockey_nhl'), ['ing_final_1'], 'listed');
  t.same((await odds('icehockey_nhl')).map((e) => e.id), ['ing_final_1'], 'priced');
  const fin = await app.ingest({ events: [{ ...ev, status: 'final' }], prices: [p('draftkings', ev, 'h2h', ev.home_team, 1.6)] });
  t.equal(fin.status, 202, '202');
  t.equal(fin.json.events, 1, 'the final event counts as upserted');
  t.same(fin.json.rejected.map((r: { error_code: string }) => r.error_code), ['INVALID_EVENT'], 'a price for a final event is rejected');
  t.same(await eventIds('icehockey_nhl'), [], 'gone from /events');
  t.same(await odds('icehockey_nhl'), [], 'gone from /odds');
  t.same(await odds('icehockey_nhl', 'include_live=true'), [], 'also with include_live');
  const later = await app.ingest({ prices: [p('draftkings', ev, 'h2h', ev.home_team, 1.6)] });
  t.same(later.json.rejected.map((r: { error_code: string }) => r.error_code), ['EVENT_NOT_FOUND'], 'a later price finds no event');
});

t.test('ingest - a game made final and upserted again in one batch is not re-created (its prices would be lost)', async (t) => {
  const ev = { id: 'ing_final_2', sport_key: 'icehockey_nhl', commence_time: NOW + 3_600_000, home_team: 'Boston Bruins', away_team: 'Buffalo Sabres' };
  await app.ingest({ events: [ev], prices: [p('draftkings', ev, 'h2h', ev.home_team, 1.7), p('draftkings', ev, 'h2h', ev.away_team, 2.2)] });
  const r = await app.ingest({ events: [{ ...ev, status: 'final' }, ev], prices: [p('fanduel', ev, 'h2h', ev.home_team, 1.75), p('fanduel', ev, 'h2h', ev.away_team, 2.1)] });
  t.equal(r.status, 202, '202');
  t.same([r.json.events, r.json.accepted], [1, 0], 'the final counts, nothing is applied');
  t.same(r.json.rejected_events.map((x: { index: number; error_code: string }) => [x.index, x.error_code]), [[1, 'INVALID_EVENT']], 'the second upsert is rejected');
  t.match(r.json.rejected_events[0].message, /final in this batch/, 'and says why');
  t.same(r.json.rejected.map((x: { error_code: string }) => x.error_code), ['INVALID_EVENT', 'INVALID_EVENT'], 'its prices are rejected, not counted as applied');
  t.notOk((await eventIds('icehockey_nhl')).includes('ing_final_2'), 'the game is gone');
  const again = await app.ingest({ events: [ev], prices: [p('fanduel', ev, 'h2h', ev.home_team, 1.75), p('fanduel', ev, 'h2h', ev.away_team, 2.1)] });
  t.same([again.json.events, again.json.accepted], [1, 2], 'a later batch re-creates it');
  t.same((await odds('icehockey_nhl', 'eventIds=ing_final_2')).map((e) => e.bookmakers.map((b) => b.key)), [['fanduel']], 'with its new prices only');
});

t.test('ingest - times out of range: commence_time and ts outside 2000 to 2099 are rejected one by one', async (t) => {
  const base = { sport_key: 'basketball_nba', home_team: 'Chicago Bulls', away_team: 'Detroit Pistons' };
  const r = await app.ingest({ events: [
    { ...base, id: 'ing_time_far', commence_time: 9_000_000_000_000_000 },
    { ...base, id: 'ing_time_secs', commence_time: Math.floor(NOW / 1000) + 3600 },
    { ...base, id: 'ing_time_2100', commence_time: '2100-01-01T00:00:00Z' },
    { ...base, id: 'ing_time_ok', commence_time: NOW + 3_600_000 },
  ] });
  t.same(r.json.rejected_events.map((x: { index: number; error_code: string }) => [x.index, x.error_code]), [[0, 'INVALID_EVENT'], [1, 'INVALID_EVENT'], [2, 'INVALID_EVENT']], 'three rejected');
  t.match(r.json.rejected_events[1].message, /not seconds/, 'the message names the likely mistake');
  t.equal(r.json.events, 1, 'the good one upserted');
  // a start time a Date cannot hold once made /events and /odds of the whole sport answer 500
  t.equal((await app.get('/v1/sports/basketball_nba/events')).status, 200, '/events still answers');
  t.equal((await app.get('/v1/sports/basketball_nba/odds', { 'X-API-Key': key })).status, 200, '/odds still answers');
  const ev = { ...base, id: 'ing_time_ok', commence_time: NOW + 3_600_000 };
  const prices = await app.ingest({ prices: [
    { ...p('draftkings', ev, 'h2h', ev.home_team, 1.7), ts: Math.floor(NOW / 1000) },
    { ...p('draftkings', ev, 'h2h', ev.home_team, 1.7), ts: 0 },
    { ...p('draftkings', ev, 'h2h', ev.home_team, 1.7), ts: NOW - 0.5 },
    { ...p('draftkings', ev, 'h2h', ev.home_team, 1.7), ts: NOW - 1000 },
  ] });
  t.same(prices.json.rejected.map((x: { index: number; error_code: string }) => [x.index, x.error_code]), [[0, 'INVALID_TIMESTAMP'], [1, 'INVALID_TIMESTAMP'], [2, 'INVALID_TIMESTAMP']], 'seconds, zero and fractions rejected');
  t.match(prices.json.rejected[0].message, /not seconds/, 'a ts in seconds is named as such');
  t.equal(prices.json.accepted, 1, 'the good one applied');
});

t.test('ingest - a repeated identical price is a verification', async (t) => {
  const ev = { id: 'ing_ver_1', sport_key: 'baseball_mlb', commence_time: NOW + 3_600_000, home_team: 'New York Yankees', away_team: 'Boston Red Sox' };
  const t1 = Date.now() - 20_000;
  const t2 = t1 + 5_000;
  const both = (ts: number) => [p('draftkings', ev, 'h2h', ev.home_team, 1.7, { ts }), p('draftkings', ev, 'h2h', ev.away_team, 2.2, { ts })];
  t.equal((await app.ingest({ events: [ev], prices: both(t1) })).json.accepted, 2, 'first observation');
  t.equal((await app.ingest({ prices: both(t2) })).json.accepted, 2, 'the same prices again');
  const [served] = await odds('baseball_mlb', 'include=verification');
  const b = served.bookmakers[0];
  t.equal(b.verified_at, new Date(t2).toISOString(), 'verified_at moved');
  t.equal(b.line_changed_at, new Date(t1).toISOString(), 'line_changed_at did not');
  t.equal(b.last_update, new Date(t2).toISOString(), 'last_update is the verification');
  t.same(b.markets[0].outcomes.map((o) => o.price), [1.7, 2.2], 'same prices');
  const metrics = await (await app.get('/metrics')).text();
  t.match(metrics, /^linewire_ingest_accepted_total \d+/m, 'ingest counters exported');
});

t.test('ingest - a ts ahead of the server clock is taken as now: the next real-time update still applies', async (t) => {
  // regression: a quote stamped 50 s ahead (inside the 60 s skew allowance) kept that stamp, so every update of the
  // next 50 s was "older" and ignored, and last_update was served in the future
  const ev = { id: 'ing_skew_1', sport_key: 'basketball_wnba', commence_time: Date.now() + 3_600_000, home_team: 'Chicago Sky', away_team: 'Dallas Wings' };
  const ahead = await app.ingest({ events: [ev], prices: [p('fanduel', ev, 'h2h', 'Chicago Sky', 1.9, { ts: Date.now() + 50_000 }), p('fanduel', ev, 'h2h', 'Dallas Wings', 1.9)] });
  t.equal(ahead.json.accepted, 2, 'the ahead ts is within the allowance: accepted');
  await app.ingest({ prices: [p('fanduel', ev, 'h2h', 'Chicago Sky', 2.05, { ts: Date.now() })] });
  const [served] = await odds('basketball_wnba', `eventIds=${ev.id}`);
  const book = served.bookmakers.find((b) => b.key === 'fanduel')!;
  t.equal(book.markets[0].outcomes[0].price, 2.05, 'the update a moment later applied');
  t.ok(Date.parse(book.last_update) <= Date.now(), 'last_update is not in the future');
});

t.test('ingest - price null withdraws a book\'s market: its quotes leave /odds and every view, a later price stays', async (t) => {
  // the connector audit: a line a book pulled (missing from a complete snapshot) had no way out but the event's end,
  // and stayed in /odds and in an arbitrage meanwhile
  const ev = { id: 'ing_wd_1', sport_key: 'basketball_nba', commence_time: NOW + 3_600_000, home_team: 'Denver Nuggets', away_team: 'Utah Jazz' };
  const t0 = Date.now() - 10_000;
  const r = await app.ingest({ events: [ev], prices: [
    p('fanduel', ev, 'h2h', ev.home_team, 2.2, { ts: t0 }), p('fanduel', ev, 'h2h', ev.away_team, 1.6, { ts: t0 }),
    p('draftkings', ev, 'h2h', ev.home_team, 1.6, { ts: t0 }), p('draftkings', ev, 'h2h', ev.away_team, 2.2, { ts: t0 }),
    p('fanduel', ev, 'totals', 'Over', 1.9, { ts: t0, point: 220.5 }), p('fanduel', ev, 'totals', 'Under', 1.9, { ts: t0, point: 220.5 }),
  ] });
  t.equal(r.json.accepted, 6, 'six prices');
  const arbs = async () => ((await (await app.get('/v1/sports/basketball_nba/arbitrage', { 'X-API-Key': key })).json()) as { event_id: string }[]).filter((a) => a.event_id === ev.id);
  t.equal((await arbs()).length, 1, 'fanduel home 2.2 and draftkings away 2.2: an arbitrage');
  const w = await app.ingest({ prices: [{ book: 'fanduel', event_id: ev.id, market: 'h2h', price: null }] });
  t.same([w.status, w.json.accepted, w.json.rejected], [202, 1, []], 'the withdrawal is accepted (no outcome needed)');
  const [served] = (await odds('basketball_nba', 'markets=h2h,totals&bookmakers=fanduel,draftkings')).filter((e) => e.id === ev.id);
  t.same(served.bookmakers.map((b) => [b.key, b.markets.map((m) => m.key)]).sort(), [['draftkings', ['h2h']], ['fanduel', ['totals']]],
    'fanduel\'s h2h gone, its totals and draftkings\' h2h kept');
  t.equal((await arbs()).length, 0, 'the arbitrage closed with it');
  const again = await app.ingest({ prices: [{ book: 'fanduel', event_id: ev.id, market: 'h2h', price: null }] });
  t.same([again.json.accepted, again.json.ignored], [1, 0], 'withdrawing again: nothing to remove, accepted');
  // an observation made before the withdrawal and arriving after it (a retried or delayed batch) does not bring the
  // pulled line back (the ingest audit: it was served again, in an arbitrage too)
  const delayed = await app.ingest({ prices: [p('fanduel', ev, 'h2h', ev.home_team, 2.2, { ts: t0 + 5_000 }), p('fanduel', ev, 'h2h', ev.away_team, 1.6, { ts: t0 + 5_000 })] });
  t.same([delayed.json.accepted, delayed.json.ignored], [0, 2], 'prices observed before the withdrawal are ignored');
  const [still] = (await odds('basketball_nba', 'markets=h2h&bookmakers=fanduel')).filter((e) => e.id === ev.id);
  t.same(still?.bookmakers ?? [], [], 'the pulled line stays out of /odds');
  t.equal((await arbs()).length, 0, 'and out of the arbitrage');
  // the book quoting it again after the withdrawal brings it back
  const back = await app.ingest({ prices: [p('fanduel', ev, 'h2h', ev.home_team, 2.0, { ts: Date.now() + 1 })] });
  t.same([back.json.accepted, back.json.ignored], [1, 0], 'a price observed after the withdrawal is applied');
  // an old withdrawal does not remove a price the book sent after it
  const late = await app.ingest({ prices: [{ book: 'fanduel', event_id: ev.id, market: 'h2h', price: null, ts: t0 + 1_000 }] });
  t.same([late.json.accepted, late.json.ignored], [0, 1], 'a withdrawal older than the quote is ignored');
  const bad = await app.ingest({ prices: [
    { book: 'fanduel', event_id: ev.id, market: 'player_points', price: null },
    { book: 'fanduel', event_id: ev.id, market: 'h2h', price: null, player: 'Someone' },
    { book: 'fanduel', event_id: 'nope', market: 'h2h', price: null },
  ] });
  t.same(bad.json.rejected.map((x: { error_code: string }) => x.error_code), ['INVALID_PLAYER', 'INVALID_PLAYER', 'EVENT_NOT_FOUND'], 'a prop needs its player, a game line takes none, the event must exist');
  // an outright: the selection named as outcome (The Odds API's form) or player; both contracts of it go
  const fut = { id: 'ing_wd_fut', sport_key: 'basketball_nba_championship_winner', commence_time: NOW + 30 * 86_400_000, kind: 'futures', title: 'NBA Championship' };
  await app.ingest({ events: [fut], prices: [
    { book: 'draftkings', event_id: fut.id, market: 'outrights', outcome: 'Boston Celtics', price: 4.5, ts: t0 },
    { book: 'draftkings', event_id: fut.id, market: 'outrights', outcome: 'Denver Nuggets', price: 6, ts: t0 },
    { book: 'polymarket', event_id: fut.id, market: 'outrights', outcome: 'Yes', player: 'Boston Celtics', price: 1 / 0.22, ts: t0 },
    { book: 'polymarket', event_id: fut.id, market: 'outrights', outcome: 'No', player: 'Boston Celtics', price: 1 / 0.8, ts: t0 },
  ] });
  const selections = async () => {
    const [doc] = (await (await app.get(`/v1/sports/basketball_nba_championship_winner/odds?markets=outrights&bookmakers=draftkings,polymarket&apiKey=${key}`)).json()) as
      { bookmakers: { key: string; markets: { outcomes: { name: string }[] }[] }[] }[];
    return doc.bookmakers.map((b) => `${b.key}:${b.markets[0].outcomes.map((o) => o.name).sort().join('+')}`).sort();
  };
  t.same(await selections(), ['draftkings:Boston Celtics+Denver Nuggets', 'polymarket:Boston Celtics'], 'both books quote the Celtics');
  const out = await app.ingest({ prices: [
    { book: 'draftkings', event_id: fut.id, market: 'outrights', outcome: 'Boston Celtics', price: null },
    { book: 'polymarket', event_id: fut.id, market: 'outrights', player: 'Boston Celtics', price: null },
    { book: 'draftkings', event_id: fut.id, market: 'outrights', price: null },
  ] });
  t.same([out.json.accepted, out.json.rejected.map((x: { error_code: string }) => x.error_code)], [2, ['INVALID_PLAYER']], 'two withdrawals; one naming no selection refused');
  t.same(await selections(), ['draftkings:Denver Nuggets'], 'the Celtics gone from both books (Yes and No), the Nuggets kept');
});
