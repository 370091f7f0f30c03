// The /odds body cache is bounded in bytes as well as in entries: one body per distinct query, each up to a few
// hundred KB, so 5,000 entries alone let it hold about a gigabyte. Past 64 MiB it is emptied (the first body is then
// built again although nothing changed).

import t from 'tap';
import { largeBoard, startTestApp } from './helpers/app.js';

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
