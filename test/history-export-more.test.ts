// An export cut by its `limit` says that more rows match (x-result-has-more: true): the default export of a busy day
// (limit 50,000 of 200,515 rows) held only the alphabetically first books, without pinnacle, and nothing said so.

import t from 'tap';
import { TestClock, startTestApp } from './helpers/app.js';

t.test('exports - x-result-has-more says whether the limit cut the export', async (t) => {
  const clock = new TestClock();
  clock.freeze(Date.UTC(2026, 10, 20, 12, 0, 0));
  const app = await startTestApp(t, { now: clock.now });
  await app.app.services.db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select '2026-11-19', 'basketball_nba', 'e' || (g / 50), '2026-11-19T20:00:00Z', 'H', 'A', 'pinnacle', 'P' || g,
      'player_points', 'Points', 10.5, 1.9, 1.95, '2026-11-19T19:59:00Z'
    from generate_series(1, 1500) g`;
  const key = await app.key('business', 1000);
  const cases: [string, string, string][] = [
    ['/v1/historical/closing-lines.json?date=2026-11-19&limit=1000', '1000', 'true'],
    ['/v1/historical/closing-lines.json?date=2026-11-19&limit=1499', '1499', 'true'],
    ['/v1/historical/closing-lines.json?date=2026-11-19&limit=1500', '1500', 'false'],
    ['/v1/historical/closing-lines.json?date=2026-11-19', '1500', 'false'],
    ['/v1/historical/closing-lines.csv?date=2026-11-19&limit=10', '10', 'true'],
    ['/v1/historical/closing-lines.csv?date=2026-11-19', '1500', 'false'],
    ['/v1/historical/closing-lines.json?date=2026-11-20', '0', 'false'],
  ];
  for (const [p, rows, more] of cases) {
    for (const source of ['database', 'cache']) {
      const res = await app.get(`${p}&apiKey=${key}`);
      await res.arrayBuffer();
      t.same([res.headers.get('x-export-rows'), res.headers.get('x-result-has-more'), res.headers.get('age') === null ? 'database' : 'cache'],
        [rows, more, source], `${p} (${source}): X-Export-Rows ${rows}, x-result-has-more: ${more}`);
    }
  }
  const window = await app.get(`/v1/sports/basketball_nba/closing-lines?daysFrom=30&limit=5&apiKey=${key}`);
  await window.arrayBuffer();
  t.same([window.headers.get('x-export-rows'), window.headers.get('x-result-has-more')], ['5', 'true'], "a sport's recent days: the same header");
});
