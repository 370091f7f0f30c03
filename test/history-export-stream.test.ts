// A 500,000-row closing-line export is streamed from the database to the socket with backpressure: the server's
// JavaScript heap never holds the body (about 190 MB of JSON), measured while a slow client reads it.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';

// a collection before each sample measures what is retained, not garbage not yet collected
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
import { startTestApp } from './helpers/app.js';

t.test('500,000-row export streamed with bounded memory', async (t) => {
  // on the real PostgreSQL when there is one: the embedded database would spend most of the suite's CPU writing and
  // reading the 500,000 rows in WASM on this process's thread, and the memory measured is this process's either way
  const app = await startTestApp(t, { database: process.env.TEST_DATABASE_URL ? 'postgres' : 'embedded' });
  const t0 = Date.now();
  await app.app.services.db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select '2026-11-19', 'basketball_nba', 'e' || (g / 200), '2026-11-19T20:00:00Z', 'Boston Celtics', 'Miami Heat',
      'pinnacle', 'Player number ' || g, 'player_points', 'Points', 20.5, 1.9, 1.95, '2026-11-19T19:59:00Z'
    from generate_series(1, 500000) g`;
  const key = await app.key('business', 1000);
  t.comment(`500,000 rows inserted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sampler = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 500);
  const started = Date.now();
  const res = await fetch(`${app.base}/v1/historical/closing-lines.json?date=2026-11-19&limit=500000&apiKey=${key}`);
  t.equal(res.status, 200, '200');
  t.equal(res.headers.get('x-export-rows'), '500000', 'X-Export-Rows');
  t.equal(res.headers.get('x-export-credits'), '500', '500 credits');
  const reader = res.body!.getReader();
  // rows counted on the raw bytes (each row opens with {"game_date"), carrying a partial match across chunks
  const mark = Buffer.from('{"game_date"');
  let bytes = 0;
  let rows = 0;
  let carry = Buffer.alloc(0);
  let paused = false;
  let rssGrowMb = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    const buf = carry.length > 0 ? Buffer.concat([carry, value]) : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    let at = buf.indexOf(mark);
    let end = 0;
    while (at >= 0) {
      rows++;
      end = at + mark.length;
      at = buf.indexOf(mark, end);
    }
    carry = Buffer.from(buf.subarray(Math.max(end, buf.length - mark.length + 1)));
    if (!paused && bytes > 8 * 1048576) {
      // a slow client: the server must stop reading pages, not queue the rest of the body in memory
      paused = true;
      const rss0 = process.memoryUsage().rss;
      await new Promise((r) => setTimeout(r, 1500));
      rssGrowMb = (process.memoryUsage().rss - rss0) / 1048576;
    }
  }
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  const grewMb = (peak - base) / 1048576;
  t.equal(rows, 500000, 'every row delivered');
  t.ok(bytes > 150 * 1048576, `the body is large (${(bytes / 1048576).toFixed(0)} MB)`);
  t.ok(grewMb < 64, `the heap grew ${grewMb.toFixed(1)} MB at most while streaming ${(bytes / 1048576).toFixed(0)} MB (bound 64 MB, retained after collection)`);
  t.ok(rssGrowMb < 48, `while the client paused 1.5 s the process grew ${rssGrowMb.toFixed(1)} MB (bound 48 MB)`);
  t.ok(seconds < 90, `streamed in ${seconds.toFixed(1)} s (bound 90 s)`);
  const after = await app.get(`/v1/historical/closing-lines.json?date=2026-11-19&limit=1&apiKey=${key}`);
  t.equal(after.headers.get('x-ratelimit-remaining'), '499', '500 credits charged for the big export, then 1');

  // a client that leaves early pays for the rows it was sent, and the database connection is not left stuck
  const key2 = await app.key('business', 1000);
  const ac = new AbortController();
  const partial = await fetch(`${app.base}/v1/historical/closing-lines.json?date=2026-11-19&limit=500000&apiKey=${key2}`, { signal: ac.signal });
  await partial.body!.getReader().read();
  ac.abort();
  await new Promise((r) => setTimeout(r, 500));
  const next = await app.get(`/v1/historical/closing-lines.json?date=2026-11-19&limit=1&apiKey=${key2}`);
  t.equal(next.status, 200, 'the next export is served after an abort');
  const left = Number(next.headers.get('x-ratelimit-remaining'));
  t.ok(left > 1000 - 1 - 100 && left < 999, `an export abandoned after its first chunk charged ${999 - left} credits (rows sent), not 500`);
});
