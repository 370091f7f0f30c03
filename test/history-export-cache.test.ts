// The closing-line export cache (SPEC: server cache 6 hours): an identical request within 6 hours is served from
// the cache with the same headers and credits; past 6 hours, after a capture of an event it covers, or when the
// first body was cut short, the database answers again; the cache's byte bound evicts the least recently used.

import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ENTRY_OVERHEAD, ExportCache, type CachedMeta } from '../http/export-cache.js';
import { TestClock, appDatabases, holdDatabase, startTestApp, type TestApp } from './helpers/app.js';

const clock = new TestClock();
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const HOUR = 3_600_000;

async function seed(app: TestApp, day: string, n: number, tag: string): Promise<void> {
  await app.app.services.db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select ${day}, 'basketball_nba', 'e' || (g / 50), ${day + 'T20:00:00Z'}, 'H', 'A', 'pinnacle', ${tag} || g,
      'player_points', 'Points', 10.5, 1.9, 1.95, ${day + 'T19:59:00Z'}
    from generate_series(1, ${n}) g`;
}

/** polls a condition that follows an asynchronous file removal, for at most 10 s */
async function until(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  return cond();
}

/** the headers of an answer but the per-request ones */
function stable(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!['x-request-id', 'x-response-time', 'x-ratelimit-remaining', 'x-requests-remaining', 'x-requests-used', 'date', 'age'].includes(k)) out[k] = v;
  });
  return out;
}

for (const database of appDatabases()) t.test(`export cache: identical requests within 6 hours (${database})`, async (t) => {
  clock.freeze(T0);
  const app = await startTestApp(t, { now: clock.now, database });
  await seed(app, '2026-11-19', 2500, 'P');
  const key = await app.key('business', 1000);
  const path = `/v1/historical/closing-lines.json?date=2026-11-19&apiKey=${key}`;
  const first = await app.get(path);
  const body1 = await first.text();
  t.equal(first.headers.get('age'), null, 'a body read from the database has no Age');
  t.equal(first.headers.get('x-requests-last'), '3', 'the first export costs 3 credits');
  // the rows are gone from the database: only the cache can answer with them now
  await app.app.services.db.sql`delete from closing_lines`;
  clock.freeze(T0 + 6 * HOUR - 1000);
  const again = await app.get(path);
  t.equal(again.status, 200, '200 from the cache');
  t.equal(await again.text(), body1, 'the same body, byte for byte (as_of of the first answer)');
  t.same(stable(again), stable(first), 'the same headers (X-Export-*, Cache-Control, Content-Type)');
  t.equal(again.headers.get('age'), String(6 * 3600 - 1), 'Age says how old the cached body is');
  t.equal(again.headers.get('x-requests-last'), '3', 'a cached export costs what SPEC says: 1 per 1,000 rows delivered');
  t.equal(again.headers.get('x-ratelimit-remaining'), '994', 'the balance went down by 3 twice');
  const head = await fetch(app.base + path, { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD on a cached export');
  t.equal(head.headers.get('x-export-rows'), '2500', 'HEAD carries the export headers');
  t.equal(head.headers.get('x-requests-last'), '0', 'HEAD costs nothing');

  const other = await app.get(`/v1/historical/closing-lines.json?date=2026-11-19&limit=10&apiKey=${key}`);
  t.equal(((await other.json()) as { row_count: number }).row_count, 0, 'a different limit is another request: read from the database');
  const csv = await app.get(`/v1/historical/closing-lines.csv?date=2026-11-19&apiKey=${key}`);
  t.equal((await csv.text()).split('\r\n').length, 2, 'the CSV of the same day is another request: header only');

  clock.freeze(T0 + 6 * HOUR);
  const expired = await app.get(path);
  t.equal(((await expired.json()) as { row_count: number }).row_count, 0, 'at 6 hours the entry has expired');
  t.equal(expired.headers.get('age'), null, 'read from the database again');
});

t.test('export cache: a capture drops what it makes out of date; a cut body is not kept; LRU byte bound', async (t) => {
  clock.freeze(T0);
  const app = await startTestApp(t, { now: clock.now, exportCache: { maxBytes: 300_000 } });
  await seed(app, '2026-11-19', 300, 'A');
  await seed(app, '2026-11-18', 300, 'B');
  const key = await app.key('business', 1000);
  const cache = app.app.services.exports!.cache;
  const day = (d: string, q = '') => app.get(`/v1/historical/closing-lines.json?date=${d}&apiKey=${key}${q}`);
  const rows = async (res: Response) => ((await res.json()) as { row_count: number }).row_count;
  t.equal(await rows(await day('2026-11-19')), 300, 'first read');
  t.equal(cache.size.entries, 1, 'one entry');
  await seed(app, '2026-11-19', 5, 'C');
  t.equal(await rows(await day('2026-11-19')), 300, 'served from the cache');
  // an event of that day starts and is captured: the day's entry goes, another day's stays
  t.equal(await rows(await day('2026-11-18')), 300, 'another day cached');
  cache.invalidate('basketball_nba', Date.UTC(2026, 10, 19, 23, 0, 0));
  t.equal(await rows(await day('2026-11-18')), 300, 'the other day still served');
  t.equal(await rows(await day('2026-11-19')), 305, 'the captured day is read again, with the new rows');
  cache.invalidate('basketball_nba', Date.UTC(2026, 10, 15, 23, 0, 0));
  t.equal(cache.size.entries, 2, 'a capture of a day not held leaves the entries');
  t.equal(await rows(await day('2026-11-18', '&sport_key=icehockey_nhl')), 0, 'an NHL-only export of a day');
  cache.invalidate('basketball_nba', Date.UTC(2026, 10, 18, 23, 0, 0));
  t.equal(cache.size.entries, 2, 'an NBA capture that day drops the all-sports entry, not the NHL-only one');
  await seed(app, '2026-11-18', 0, 'X');
  t.equal(await rows(await day('2026-11-18')), 300, 'the all-sports export of that day read again');

  // a client that leaves after the first chunk: nothing cached from that body
  const held = cache.size.entries;
  await seed(app, '2026-11-17', 3000, 'D');
  const ac = new AbortController();
  const partial = await fetch(`${app.base}/v1/historical/closing-lines.json?date=2026-11-17&apiKey=${key}`, { signal: ac.signal });
  await partial.body!.getReader().read();
  ac.abort();
  const dir = app.app.services.exports!.cache.dir;
  t.ok(await until(() => readdirSync(dir).length === held), 'the file of a body cut short is removed');
  t.equal(cache.size.entries, held, 'and it is not an entry');

  // 3,000 rows are about 400 KB: above the 300,000-byte bound, streamed but not kept
  const big = await day('2026-11-17');
  t.equal(await rows(big), 3000, 'a body above the bound is served');
  t.equal(cache.size.entries, held, 'but not kept');
  t.ok(cache.size.bytes <= 300_000, `the cache holds ${cache.size.bytes} bytes, within its bound`);
  // a third body of about 120 KB: the least recently used (2026-11-19) goes
  await (await day('2026-11-18')).arrayBuffer();
  await seed(app, '2026-11-16', 300, 'E');
  await (await day('2026-11-16')).arrayBuffer();
  t.equal(cache.size.entries, held, 'one in, one out');
  t.ok(cache.size.bytes <= 300_000, `${cache.size.bytes} bytes held, within the bound`);
  await seed(app, '2026-11-18', 1, 'F');
  t.equal(await rows(await day('2026-11-18')), 300, 'the entry used last stayed');
  await seed(app, '2026-11-19', 1, 'G');
  t.equal(await rows(await day('2026-11-19')), 306, 'the least recently used was evicted');
  t.ok(await until(() => readdirSync(dir).length === cache.size.entries), 'one file per entry: evicted files removed');
});

// A writer was made once the rows were counted, and only the end of the body released it: a HEAD, a call refused
// for credits or answered 503 past the database bound never start the body, and each left its writer for good
// (40,000 HEADs: 80 MB, free of charge)
t.test('export cache: HEADs, refused and timed-out exports leave no writer behind', async (t) => {
  const app = await startTestApp(t, { databaseTimeoutMs: 1000 });
  await seed(app, '2026-11-19', 300, 'A');
  const key = await app.key('business', 1000);
  const broke = await app.key('business', 0);
  const cache = app.app.services.exports!.cache;
  const path = (k: string, limit: number, fmt = 'json') => `${app.base}/v1/historical/closing-lines.${fmt}?date=2026-11-19&limit=${limit}&apiKey=${k}`;
  const heads: number[] = [];
  for (let i = 1; i <= 40; i++) heads.push((await fetch(path(key, i, i % 2 === 0 ? 'json' : 'csv'), { method: 'HEAD' })).status);
  t.same([...new Set(heads)], [200], '40 HEADs of distinct exports answered 200');
  t.equal(cache.size.writers, 0, 'no writer left by the HEADs');
  const refused: string[] = [];
  for (let i = 1; i <= 20; i++) refused.push(((await (await fetch(path(broke, i))).json()) as { error_code: string }).error_code);
  t.same([...new Set(refused)], ['OUT_OF_USAGE_CREDITS'], '20 exports refused for credits after their count');
  t.equal(cache.size.writers, 0, 'no writer left by the refused exports');

  // the count waits past the bound: 503 at once, and the reply the handler makes later is settled unsent
  const stall = await holdDatabase(app);
  const late = await fetch(path(key, 777));
  t.equal(late.status, 503, 'an export whose count waits past DATABASE_TIMEOUT_MS is answered 503');
  await stall.release();
  // the one session serves in order: once this export is out, the timed-out count has come back
  const next = await fetch(path(key, 778));
  t.equal(((await next.json()) as { row_count: number }).row_count, 300, 'the next export is served');
  t.equal(cache.size.writers, 0, 'no writer left by the timed-out export');
  t.equal(cache.size.entries, 1, 'the body delivered is the one entry');
  t.ok(await until(() => readdirSync(cache.dir).length === 1), 'one file in the cache directory');
});

// The bound counted body bytes only: 40,000 empty days (187-byte bodies) took 205 MB of disk under a 100 MB bound,
// one 4 KiB block, one inode and about 2 KB of index each
t.test('export cache: many tiny entries count as the disk and the index pay them', async (t) => {
  const maxBytes = 64 * 1024;
  const app = await startTestApp(t, { exportCache: { maxBytes } });
  const key = await app.key('business', 1000);
  const cache = app.app.services.exports!.cache;
  for (let i = 1; i <= 30; i++) {
    const res = await app.get(`/v1/historical/closing-lines.${i % 2 === 0 ? 'json' : 'csv'}?date=2020-01-01&limit=${i}&apiKey=${key}`);
    await res.arrayBuffer();
  }
  // one block and ENTRY_OVERHEAD each
  const most = maxBytes / (4096 + ENTRY_OVERHEAD);
  t.ok(cache.size.entries > 0 && cache.size.entries <= most, `${cache.size.entries} tiny entries held, at most ${most} under ${maxBytes} bytes`);
  t.ok(cache.size.bytes <= maxBytes, `${cache.size.bytes} bytes counted, within the bound`);
  t.ok(await until(() => readdirSync(cache.dir).length === cache.size.entries), 'one file per entry: the evicted ones removed');
});

/** a cache of its own in a fresh directory */
function standalone(t: Test, maxBytes: number, maxEntries?: number): ExportCache {
  const cache = new ExportCache({ dir: join(mkdtempSync(join(tmpdir(), 'lw-cache-')), 'c'), ttlMs: HOUR, maxBytes, maxEntries, now: () => Date.now() });
  t.teardown(() => cache.close());
  return cache;
}

function meta(rows: number): CachedMeta {
  return { contentType: 'application/json', headers: [], rows, scope: { date: '2026-11-19', limit: 50_000 } };
}

/** the bytes of the files in the cache's directory (one removed meanwhile counts nothing) */
function onDisk(cache: ExportCache): number {
  let n = 0;
  for (const f of readdirSync(cache.dir)) {
    try {
      n += statSync(join(cache.dir, f)).size;
    } catch { /* removed since the listing */ }
  }
  return n;
}

// Each body was checked against the bound alone and counted once committed: six concurrent 41 MB exports put
// 207 MB in a cache bounded at 100 MB
t.test('export cache: bodies being written count against the bound, with the entries', async (t) => {
  const cache = standalone(t, 100_000);
  const page = new Uint8Array(20_000).fill(0x78);
  // two bodies of three 20 KB pages, each under the bound alone, written page by page in turn
  const a = cache.writer('a', meta(3));
  const b = cache.writer('b', meta(3));
  let peak = 0;
  for (let i = 0; i < 3; i++) {
    for (const w of [a, b]) {
      await w.write(page, 1);
      peak = Math.max(peak, onDisk(cache));
      t.ok(cache.size.bytes <= 100_000, `page ${i + 1}: ${cache.size.bytes} bytes counted, within the bound`);
    }
  }
  await a.commit();
  await b.commit();
  t.ok(peak <= 100_000, `at most ${peak} bytes on disk while both were written (bound 100,000)`);
  t.equal(cache.size.entries, 1, 'the body the bound had no room for was let go; the other is an entry');
  t.equal(cache.size.writers, 0, 'no writer left');

  // a new body makes room as it is written, least recently used first; an entry being read is not evicted
  const hit = cache.get('b');
  t.ok(hit !== null, 'b is served (pinned while read)');
  const c = cache.writer('c', meta(3));
  for (let i = 0; i < 3; i++) await c.write(page, 1);
  await c.commit();
  t.equal(cache.get('c'), null, 'c found no room: the one entry is being read');
  const again = cache.get('b');
  t.ok(again !== null, 'b stayed');
  again?.release();
  hit!.release();
  const d = cache.writer('d', meta(3));
  for (let i = 0; i < 3; i++) await d.write(page, 1);
  await d.commit();
  t.ok(cache.get('d') !== null, 'once b is no longer read, d takes its room');
  t.ok(cache.size.bytes <= 100_000 && onDisk(cache) <= 100_000, `${cache.size.bytes} bytes counted, ${onDisk(cache)} on disk`);
});

t.test('export cache: at most maxEntries entries, whatever room the bytes leave', async (t) => {
  const cache = standalone(t, 1 << 30, 3);
  for (const k of ['a', 'b', 'c', 'd', 'e']) {
    const w = cache.writer(k, meta(0));
    await w.write('{"rows":[]}', 0);
    await w.commit();
  }
  t.equal(cache.size.entries, 3, 'three entries');
  t.same(['a', 'b', 'c', 'd', 'e'].map((k) => { const h = cache.get(k); h?.release(); return h !== null; }), [false, false, true, true, true], 'the least recently used went');
  t.ok(await until(() => readdirSync(cache.dir).length === 3), 'their files removed');
});
