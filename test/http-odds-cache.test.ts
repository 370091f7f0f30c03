// The /odds caches are bounded in what they hold. The body cache: one body per distinct query, each up to a few
// hundred KB, so 5,000 entries alone let it hold about a gigabyte; past 64 MiB the bodies built longest ago go (the
// first body is then built again although nothing changed), and a body's key (every parameter as sent) counts as
// well as its bytes. The event documents: kept per query shape, at most 512 shapes, none for a sport with no event.

import t from 'tap';
import { BOOKMAKERS } from '../engine/catalogue.js';
import { largeBoard, startTestApp, type TestApp } from './helpers/app.js';

/** the /odds caches' gauges in /metrics */
async function held(app: TestApp): Promise<{ bodies: number; bodyBytes: number; shapes: number; docBytes: number }> {
  const text = await (await app.get('/metrics')).text();
  const n = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    bodies: n('linewire_odds_body_cache_entries'), bodyBytes: n('linewire_odds_body_cache_bytes'),
    shapes: n('linewire_odds_event_doc_shapes'), docBytes: n('linewire_odds_event_doc_bytes'),
  };
}

t.test('odds - the body cache holds at most 64 MiB of bodies', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('scale');
  const now = Date.now();
  await app.ingest(largeBoard('oc', now));
  const hits = async () => Number(/^linewire_body_cache_total\{result="hit"\} (\d+)/m.exec(await (await app.get('/metrics')).text())?.[1] ?? 0);
  // distinct queries, the same large body: commenceTimeTo one second apart, every event inside
  const query = (i: number) => `/v1/sports/basketball_nba/odds?regions=us,eu&markets=h2h,totals&commenceTimeTo=${new Date(now + 86_400_000 + i * 1000).toISOString()}`;
  const first = await app.get(query(0), { 'x-api-key': key, 'accept-encoding': 'identity' });
  const size = (await first.arrayBuffer()).byteLength;
  t.ok(size > 200_000, `a body of ${size} bytes`);
  const before = await hits();
  await (await app.get(query(0), { 'x-api-key': key, 'accept-encoding': 'identity' })).arrayBuffer();
  t.equal(await hits(), before + 1, 'asked again at once: from the cache');
  const fill = Math.ceil((64 * 1024 * 1024) / size) + 1;
  for (let i = 1; i <= fill; i++) await (await app.get(query(i), { 'x-api-key': key, 'accept-encoding': 'identity' })).arrayBuffer();
  const mid = await hits();
  await (await app.get(query(0), { 'x-api-key': key, 'accept-encoding': 'identity' })).arrayBuffer();
  t.equal(await hits(), mid, `after ${fill} other bodies (past 64 MiB, far below 5,000 entries) the first was let go: built again`);
});

t.test('odds - regression: the body cache counts its keys (64 KB eventIds lists with bodies of [] filled 320 MB)', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('scale');
  // 500 distinct ids of 127 characters a request, on a sport with no event: a body of 2 bytes under a 64 KB key
  const ids = (i: number) => Array.from({ length: 500 }, (_, j) => `${i}-${j}-`.padEnd(127, 'x')).join(',');
  const sent = 600;
  const answers = new Set<string>();
  for (let i = 0; i < sent; i++) answers.add(await (await app.get(`/v1/sports/cricket_ipl/odds?eventIds=${ids(i)}`, { 'x-api-key': key })).text());
  t.same([...answers], ['[]'], `${sent} requests, each answered []`);
  const h = await held(app);
  t.ok(h.bodyBytes <= 64 * 1024 * 1024, `${h.bodyBytes} bytes counted: within 64 MiB`);
  t.ok(h.bodyBytes >= h.bodies * 2 * 64_000, `${h.bodies} bodies kept, each counted with its 64 KB key (${h.bodyBytes} bytes)`);
  t.ok(h.bodies < sent, `so the ones built first went: ${h.bodies} of ${sent} kept`);
});

t.test('odds - regression: event documents are kept for at most 512 query shapes, and for none of a sport with no event', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('scale');
  const now = Date.now();
  const ev = (id: string, start: number) => ({ id, sport_key: 'icehockey_nhl', commence_time: now + start, home_team: `${id} Home`, away_team: `${id} Away` });
  const a = ev('shape_a', 3_600_000);
  const b = ev('shape_b', 7_200_000);
  const h2h = (e: typeof a, home: number) => [
    { book: 'draftkings', event_id: e.id, market: 'h2h', outcome: e.home_team, price: home },
    { book: 'draftkings', event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1.95 },
  ];
  t.equal((await app.ingest({ events: [a, b], prices: [...h2h(a, 1.9), ...h2h(b, 1.9)] })).json.accepted, 4, 'ingested');
  const docs = async () => {
    const text = await (await app.get('/metrics')).text();
    const n = (r: string) => Number(new RegExp(`^linewire_odds_event_docs_total\\{result="${r}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { built: n('built'), kept: n('kept') };
  };
  // one shape per bookmakers pair: draftkings and another active book
  const others = BOOKMAKERS.filter((x) => x.status === 'active' && x.key !== 'draftkings').map((x) => x.key);
  const pairs = others.flatMap((x, i) => others.slice(i + 1).map((y) => `draftkings,${x},${y}`)).slice(0, 600);
  t.equal(pairs.length, 600, '600 distinct shapes');
  const get = async (sport: string, books: string) => (await (await app.get(`/v1/sports/${sport}/odds?bookmakers=${books}`, { 'x-api-key': key })).json()) as { id: string }[];

  const before = await held(app);
  for (const books of pairs.slice(0, 300)) await get('cricket_ipl', books);
  t.equal((await held(app)).shapes, before.shapes, 'a sport with no event: no shape kept for 300 distinct queries');

  const first = await get('icehockey_nhl', pairs[0]);
  t.same(first.map((e) => e.id), ['shape_a', 'shape_b'], 'both events');
  for (const books of pairs.slice(1)) await get('icehockey_nhl', books);
  const h = await held(app);
  t.equal(h.shapes, 512, `600 shapes asked for: 512 kept`);
  t.ok(h.docBytes <= 32 * 1024 * 1024, `${h.docBytes} bytes counted: within 32 MiB`);
  t.ok(h.docBytes >= h.shapes * 2 * (256 + 100), 'each shape counted with its two documents and their overhead');

  // b moves: the newest shape rebuilds b and keeps a; the first shape, dropped, builds both again
  await app.ingest({ prices: h2h(b, 1.85) });
  const d0 = await docs();
  await get('icehockey_nhl', pairs[599]);
  const d1 = await docs();
  t.same([d1.built - d0.built, d1.kept - d0.kept], [1, 1], 'the shape built for last: its document of a kept');
  await get('icehockey_nhl', pairs[0]);
  const d2 = await docs();
  t.same([d2.built - d1.built, d2.kept - d1.kept], [2, 0], 'the shape built for first (least recently): dropped, both built again');
});
