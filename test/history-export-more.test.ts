// An export cut by its `limit` says that more rows match (x-result-has-more: true): the default export of a busy day
// (limit 50,000 of 200,515 rows) held only the alphabetically first books, without pinnacle, and nothing said so.

import t from 'tap';
import { TestClock, startTestApp } from './helpers/app.js';
import { seedClosingDay } from './helpers/db.js';

t.test('exports - x-result-has-more says whether the limit cut the export', async (t) => {
  const clock = new TestClock();
  clock.freeze(Date.UTC(2026, 10, 20, 12, 0, 0));
  const app = await startTestApp(t, { now: clock.now });
  await seedClosingDay(app.app.services.db, 1500);
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
