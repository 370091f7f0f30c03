// gzip (http/compress.ts): which Accept-Encoding headers admit it, and over a real socket (node:http, which does
// not decompress, where fetch would): a large 200 to a GET goes gzipped to a client that asks, the same bytes as the
// identity body once gunzipped, a kept body's gzip reused, a body above the in-thread limit compressed off the main
// thread, ETags weakened, everything else as it was.

import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { Gzip, acceptsGzip } from '../http/compress.js';
import { largeBoard, startTestApp } from './helpers/app.js';

t.test('gzip - Accept-Encoding headers that admit it and those that do not', async (t) => {
  const cases: [string, boolean][] = [
    ['', false],
    ['gzip', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['gzip, deflate, br', true],
    ['br, gzip;q=0.5', true],
    ['deflate', false],
    ['identity', false],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['*', true],
    ['*;q=0', false],
    ['br, *;q=0.1', true],
    ['*, gzip;q=0', false],
    ['gzip;q=0, *', false],
    ['gzip;q=2', false],
  ];
  for (const [header, want] of cases) t.equal(acceptsGzip(header), want, JSON.stringify(header));
});

t.test('gzip - requests for one large body share one compression, and its later ones are served kept', async (t) => {
  const gz = new Gzip();
  const body = Buffer.from(JSON.stringify(Array.from({ length: 4000 }, (_, i) => ({ id: `ev_${i}`, price: 1.5 + (i % 97) / 100 }))));
  t.ok(body.length > 64 * 1024, 'above the in-thread limit');
  const got: (Buffer | null)[] = [];
  const all = new Promise<void>((resolve) => {
    for (let i = 0; i < 3; i++) t.equal(gz.compress(body, (b) => { got.push(b); if (got.length === 3) resolve(); }), null, `request ${i + 1}: compressed off the thread`);
  });
  await all;
  t.ok(got[0] !== null && got.every((b) => b === got[0]), 'the three got the one compressed Buffer');
  t.same(gunzipSync(got[0]!), body, 'which gunzips to the body');
  t.equal(gz.compress(body, () => t.fail('not called: kept')), got[0], 'a later request: the kept bytes at once');
});

const app = await startTestApp(t);
const key = await app.key('business', 1_000_000);
// enough events and books that one /odds body passes the in-thread limit (64 KiB)
await app.ingest(largeBoard('gz', Date.now()));

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

function raw(path: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  const url = new URL(path, app.base);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const odds = `/v1/sports/basketball_nba/odds?regions=us,eu&markets=h2h,totals&apiKey=${key}`;

t.test('gzip - a large body goes gzipped to a client that asks, the identity body to one that does not', async (t) => {
  const plain = await raw(odds, {});
  t.equal(plain.status, 200, '200');
  t.equal(plain.headers['content-encoding'], undefined, 'no Content-Encoding without Accept-Encoding');
  t.equal(plain.headers.vary, 'Accept-Encoding', 'Vary: Accept-Encoding on the identity body too');
  t.ok(plain.body.length > 64 * 1024, `a body above the in-thread limit (${plain.body.length} bytes)`);
  const docs = JSON.parse(plain.body.toString()) as { id: string }[];
  t.equal(docs.length, 40, 'every event');

  const gz = await raw(odds, { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(gz.status, 200, '200');
  t.equal(gz.headers['content-encoding'], 'gzip', 'Content-Encoding: gzip');
  t.equal(gz.headers.vary, 'Accept-Encoding', 'Vary');
  t.equal(Number(gz.headers['content-length']), gz.body.length, 'Content-Length of the compressed bytes');
  t.ok(gz.body.length * 4 < plain.body.length, `smaller (${gz.body.length} against ${plain.body.length} bytes)`);
  t.same(gunzipSync(gz.body), plain.body, 'gunzipped, the identity body byte for byte');
  t.equal(gz.headers['x-requests-last'], plain.headers['x-requests-last'], 'charged as the identity body');

  const again = await raw(odds, { 'accept-encoding': 'gzip' });
  t.same(again.body, gz.body, 'the same kept body: the same compressed bytes');
});

t.test('gzip - a body below the in-thread limit is compressed in place, and the credits are the same', async (t) => {
  const one = `/v1/sports/basketball_nba/odds?bookmakers=draftkings&markets=h2h&eventIds=gz_1,gz_2,gz_3,gz_4,gz_5,gz_6,gz_7&apiKey=${key}`;
  const plain = await raw(one, {});
  t.ok(plain.body.length >= 1024 && plain.body.length < 64 * 1024, `a body of ${plain.body.length} bytes`);
  const gz = await raw(one, { 'accept-encoding': 'gzip' });
  t.equal(gz.headers['content-encoding'], 'gzip', 'gzipped');
  t.same(gunzipSync(gz.body), plain.body, 'the identity body once gunzipped');
});

t.test('gzip - small bodies, errors and refusals of gzip go as they are; a HEAD as its GET', async (t) => {
  const small = await raw(`/v1/sports/basketball_nba/odds?eventIds=none&apiKey=${key}`, { 'accept-encoding': 'gzip' });
  t.same([small.status, small.body.toString()], [200, '[]'], 'an empty list');
  t.equal(small.headers['content-encoding'], undefined, 'below 1 KiB: not compressed');
  const bad = await raw(`/v1/sports/basketball_nba/odds?markets=nope&apiKey=${key}`, { 'accept-encoding': 'gzip' });
  t.equal(bad.status, 422, '422');
  t.equal(bad.headers['content-encoding'], undefined, 'an error body is not compressed');
  t.equal(JSON.parse(bad.body.toString()).error_code, 'VALIDATION_ERROR', 'readable as it is');
  const refused = await raw(odds, { 'accept-encoding': 'gzip;q=0, identity' });
  t.equal(refused.headers['content-encoding'], undefined, 'gzip;q=0: identity');
  const head = await raw(odds, { 'accept-encoding': 'gzip' }, 'HEAD');
  const get = await raw(odds, { 'accept-encoding': 'gzip' });
  t.equal(head.status, 200, 'HEAD 200');
  t.same([head.headers['content-encoding'], head.headers.vary, head.headers['content-length']],
    [get.headers['content-encoding'], get.headers.vary, String(get.body.length)], 'HEAD: the headers of its GET, the compressed length');
  t.equal(head.body.length, 0, 'and no body');
});

t.test('gzip - a gzipped body with an ETag carries it weak, and If-None-Match with it is answered 304', async (t) => {
  const plain = await raw('/v1/sports', {});
  const strong = plain.headers.etag as string;
  t.match(strong, /^"/, 'the identity body: a strong ETag');
  const gz = await raw('/v1/sports', { 'accept-encoding': 'gzip' });
  t.equal(gz.headers['content-encoding'], 'gzip', 'gzipped');
  t.equal(gz.headers.etag, `W/${strong}`, 'the gzipped body: the same tag, weak');
  const cond = await raw('/v1/sports', { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string });
  t.equal(cond.status, 304, 'If-None-Match with the weak tag: 304');
  t.equal(cond.body.length, 0, 'no body');
  // (a keyless /v1/sports varies on the key headers too)
  const vary = (h: string | string[] | undefined) => String(h).split(/,\s*/).includes('Accept-Encoding');
  t.same([cond.headers.etag, vary(cond.headers.vary)], [gz.headers.etag, true], 'the 304 names the gzipped representation');
  const plain304 = await raw('/v1/sports', { 'if-none-match': strong });
  t.same([plain304.status, plain304.headers.etag, vary(plain304.headers.vary)], [304, strong, true], 'a client without gzip: its 304 with the strong tag, and Vary as its 200 has (regression: none)');
});

t.test('gzip - an export streams gzipped to a client that asks, and charges as the identity body', async (t) => {
  // regression: streamed bodies (the closing-line exports, up to about 190 MB) went uncompressed, whatever was asked
  await app.app.services.db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select '2026-11-19', 'basketball_nba', 'gz_e' || (g / 50), '2026-11-19T20:00:00Z', 'Boston Celtics', 'Miami Heat',
      'pinnacle', 'Player number ' || g, 'player_points', 'Points', 20.5, 1.9, 1.95, '2026-11-19T19:59:00Z'
    from generate_series(1, 3000) g`;
  for (const ext of ['json', 'csv']) {
    // limit differs per request: a request identical to an earlier one would be served from the export cache
    const path = `/v1/historical/closing-lines.${ext}?date=2026-11-19&apiKey=${key}`;
    const plain = await raw(`${path}&limit=3000`, {});
    t.equal(plain.status, 200, `${ext}: 200`);
    t.same([plain.headers['content-encoding'], plain.headers.vary], [undefined, 'Accept-Encoding'], `${ext}: identity without Accept-Encoding, Vary`);
    const gz = await raw(`${path}&limit=2999`, { 'accept-encoding': 'gzip' });
    t.same([gz.status, gz.headers['content-encoding'], gz.headers.vary], [200, 'gzip', 'Accept-Encoding'], `${ext}: gzipped, Vary`);
    const body = gunzipSync(gz.body).toString();
    t.ok(gz.body.length * 4 < body.length, `${ext}: smaller (${gz.body.length} against ${body.length} bytes)`);
    t.equal(gz.headers['x-export-rows'], '2999', `${ext}: X-Export-Rows`);
    if (ext === 'json') t.equal((JSON.parse(body) as { rows: unknown[] }).rows.length, 2999, 'json: every row, once gunzipped');
    else t.equal(body.trimEnd().split('\n').length, 3000, 'csv: header and every row, once gunzipped');
    t.equal(gz.headers['x-requests-last'], plain.headers['x-requests-last'], `${ext}: charged as the identity body`);
    const cached = await raw(`${path}&limit=2999`, { 'accept-encoding': 'gzip' });
    t.same([cached.headers['content-encoding'], gunzipSync(cached.body).toString() === body, cached.headers.age !== undefined], ['gzip', true, true],
      `${ext}: the cached body gzipped too`);
  }
});
