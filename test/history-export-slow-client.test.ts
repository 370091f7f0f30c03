// An export waiting for a slow client holds no database connection: its pages are separate queries (keyset), so in
// embedded mode (one PostgreSQL session) the rest of the process keeps querying; and no row is repeated or lost
// across the queries.

import t from 'tap';
import { startTestApp } from './helpers/app.js';

t.test('a client reading an export slowly does not hold the database (embedded: one session)', async (t) => {
  const app = await startTestApp(t);
  const db = app.app.services.db;
  await db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select '2026-11-19', 'basketball_nba', 'e' || (g / 200), '2026-11-19T20:00:00Z', 'H', 'A', 'pinnacle', 'P' || g,
      'player_points', 'Points', 20.5, 1.9, 1.95, '2026-11-19T19:59:00Z'
    from generate_series(1, 60000) g`;
  const key = await app.key('business', 1000);
  const res = await fetch(`${app.base}/v1/historical/closing-lines.json?date=2026-11-19&limit=60000&apiKey=${key}`);
  const reader = res.body!.getReader();
  const first = Buffer.from((await reader.read()).value!).toString();
  // the client stops reading: the server fills the socket and waits for it to drain
  await new Promise((r) => setTimeout(r, 1000));
  const started = Date.now();
  const answered = await Promise.race([db.sql`select 1 as one`.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 10_000))]);
  t.ok(answered, `another query ran while the export waited for its client (${Date.now() - started} ms; a cursor would hold the session)`);
  const parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
  }
  const body = JSON.parse(first + Buffer.concat(parts).toString()) as { row_count: number; rows: { player_name: string }[] };
  const rows = body.rows.length;
  t.equal(new Set(body.rows.map((r) => r.player_name)).size, 60_000, 'no row repeated or lost across six queries of 10,000 rows (keyset pages)');
  t.equal(rows, 60_000, 'the export then completes');
});
