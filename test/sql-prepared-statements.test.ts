// postgres.js prepares each distinct statement text once per connection and keeps it for the connection's life. The
// embedded database is one session for the life of the process, so a write whose text changes with its number of
// rows (a VALUES list per row) made a new prepared statement at nearly every call: the soak audit saw the embedded
// database grow by about 1 MB every 15 s, in step with the pregame saves. Every multi-row write now passes its rows
// as one parameter: the number of statements the session holds stays put however many rows the writes carry.

import t from 'tap';
import type { ClosingRow, EventMeta, PregameQuote } from '../engine/closing.js';
import { captureClosing, upsertHistoryEvents, upsertPregame } from '../sql/history.js';
import { insertSamples } from '../sql/status.js';
import { insertTrackedEvents } from '../sql/webhooks.js';
import { testDatabases } from './helpers/db.js';

const embedded = testDatabases().find((d) => d.kind === 'embedded')!;

t.test('sql - writes of any number of rows prepare one statement each, not one per row count (embedded session)', async (t) => {
  const db = await embedded.open();
  t.teardown(() => db.close());
  const now = Date.UTC(2026, 10, 20, 17, 0, 0);
  let round = 0;
  /** every multi-row writer once, with n rows each */
  const writeAll = async (n: number) => {
    round++;
    const metas: EventMeta[] = Array.from({ length: n }, (_, i) => ({ id: `ps_${round}_${i}`, sport: 'basketball_nba', commence: now + 3_600_000, home: 'H', away: 'A' }));
    await upsertHistoryEvents(db, metas);
    const quotes: { eventId: string; q: PregameQuote }[] = Array.from({ length: n }, (_, i) => ({
      eventId: metas[0].id, q: { market: 0, player: '', book: i % 20, outcome: i % 2, point: i % 2 === 0 ? Number.NaN : 2.5, price: 1.9 + i / 100, ts: now },
    }));
    await upsertPregame(db, quotes);
    const rows: ClosingRow[] = Array.from({ length: n }, (_, i) => ({
      source: `book_${i}`, market_key: 'h2h', market_label: 'Moneyline', player_name: '', line: null, over_price: 1.9, under_price: i % 2 === 0 ? null : 1.95, snapshot_time: now,
    }));
    t.ok(await captureClosing(db, metas[0], rows, now + 3_600_000), `round ${round}: a capture of ${n} rows`);
    await insertSamples(db, now + round * 30_000, Array.from({ length: n }, (_, i) => ({ source: `src_${i}`, state: 'ok', age: i === 0 ? null : i })));
    await insertTrackedEvents(db, metas.map((m) => m.id), now);
  };
  const prepared = async () => Number((await db.sql`select count(*)::int as n from pg_prepared_statements`)[0].n);
  await writeAll(1);
  const after1 = await prepared();
  for (let n = 2; n <= 12; n++) await writeAll(n);
  t.equal(await prepared(), after1, `the same ${after1} prepared statements after writes of 2 to 12 rows as after writes of 1`);

  // and the rows are what was written
  const closing = await db.sql`select source, under_price from closing_lines where event_id = ${'ps_12_0'} order by source`;
  t.equal(closing.length, 12, 'every closing row of the last capture');
  t.same(closing.find((r) => r.source === 'book_1'), { source: 'book_1', under_price: 1.95 }, 'a price');
  t.same(closing.find((r) => r.source === 'book_0'), { source: 'book_0', under_price: null }, 'a missing side is null');
  const pregame = await db.sql`select count(*)::int as n from pregame_quotes`;
  t.equal(pregame[0].n, 0, 'each capture dropped its event\'s pregame state');
  const samples = await db.sql`select source, age_s from status_samples where sampled_at = ${new Date(now + 12 * 30_000)} order by source`;
  t.same(samples.slice(0, 2), [{ source: 'src_0', age_s: null }, { source: 'src_1', age_s: 1 }], 'status samples with their ages');
  const tracked = await db.sql`select count(*)::int as n from webhook_tracked_events`;
  t.equal(tracked[0].n, 78, 'every tracked event (1 + 2 + ... + 12)');
  const events = await db.sql`select event_id, home_team, commence_time from history_events where event_id = ${'ps_3_2'}`;
  t.same(events.map((e) => [e.event_id, e.home_team, (e.commence_time as Date).getTime()]), [['ps_3_2', 'H', now + 3_600_000]], 'history events');
});

t.test('sql - a pregame upsert keeps points, prices and the newer write', async (t) => {
  const db = await embedded.open();
  t.teardown(() => db.close());
  const now = Date.UTC(2026, 10, 20, 17, 0, 0);
  await upsertHistoryEvents(db, [{ id: 'pg_1', sport: 'basketball_nba', commence: now + 3_600_000, home: 'H', away: 'A' }]);
  const q = (price: number, ts: number, point: number) => ({ eventId: 'pg_1', q: { market: 1, player: 'Jayson Tatum', book: 3, outcome: 0, point, price, ts } });
  await upsertPregame(db, [q(1.91, now, 27.5)]);
  await upsertPregame(db, [q(1.85, now - 1000, 26.5)]);
  const [row] = await db.sql`select player, point, price, written_at from pregame_quotes`;
  t.same([row.player, row.point, row.price, (row.written_at as Date).getTime()], ['Jayson Tatum', 27.5, 1.91, now], 'an older write does not replace a newer one');
  await upsertPregame(db, [q(1.8759123456789, now + 1000, Number.NaN)]);
  const [again] = await db.sql`select point, price from pregame_quotes`;
  t.same([again.point, again.price], [null, 1.8759123456789], 'a newer write replaces it; no point is null; a price keeps its every digit');
});
