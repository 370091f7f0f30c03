// The heavy historical requests (closing-line exports, HEADs of them included, coverage and matches) are admitted
// within bounds: an account's (429 CONCURRENCY_LIMIT) and the node's (503 SERVICE_UNAVAILABLE), both with
// Retry-After and free of charge, and their queries take turns. Before, one key's 40 concurrent exports (or 40
// loops of free HEADs) queued 40 queries in the embedded database's one session and /health answered 503.

import t from 'tap';
import { appDatabases, startTestApp, type TestApp } from './helpers/app.js';
import { seedClosingDay } from './helpers/db.js';

/** Holds an exclusive lock on closing_lines in an open transaction: every query of the closing lines waits on it
 *  (on the embedded database every query does: its one session is held), until `release`. */
async function lockClosingLines(app: TestApp): Promise<{ release(): Promise<void> }> {
  let open: () => void = () => {};
  let held: Promise<unknown> = Promise.resolve();
  await new Promise<void>((locked) => {
    held = app.app.services.db.sql.begin(async (tx) => {
      await tx`lock table closing_lines in access exclusive mode`;
      await new Promise<void>((r) => { open = r; locked(); });
    });
  });
  return { release: async () => { open(); await held; } };
}

/** polls a condition on the server's state, for at most 10 s */
async function until(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  return cond();
}

for (const database of appDatabases()) t.test(`historical admission: per account, per node, queries in turn (${database})`, async (t) => {
  const app = await startTestApp(t, { database, databaseTimeoutMs: 60_000, historical: { perAccount: 2, total: 3 } });
  await seedClosingDay(app.app.services.db, 300);
  const [a, b, c] = [await app.key('business', 1000), await app.key('business', 1000), await app.key('business', 1000)];
  const admission = app.app.services.exports!.admission;
  const queries = admission.limits.queries;
  const day = (k: string, limit: number) => `${app.base}/v1/historical/closing-lines.json?date=2026-11-19&limit=${limit}&apiKey=${k}`;
  const matches = (k: string) => `${app.base}/v1/historical/sports/basketball_nba/matches?dateFrom=2026-11-19&dateTo=2026-11-19&apiKey=${k}`;
  const coverage = (k: string) => `${app.base}/v1/historical/sports/basketball_nba/coverage?apiKey=${k}`;

  const lock = await lockClosingLines(app);
  // two exports of account a are admitted; their counts wait on the lock
  const admitted = [fetch(day(a, 1)), fetch(day(a, 2))];
  t.ok(await until(() => admission.counts.admitted === 2), 'two exports of one account in flight');
  const refused = await Promise.all([fetch(day(a, 3)), fetch(`${app.base}/v1/historical/closing-lines.csv?date=2026-11-19&apiKey=${a}`),
    fetch(day(a, 4), { method: 'HEAD' }), fetch(matches(a)), fetch(coverage(a))]);
  t.same(refused.map((r) => r.status), [429, 429, 429, 429, 429], 'a third export, a CSV, a HEAD, matches and coverage of that account: 429');
  t.same(refused.map((r) => r.headers.get('retry-after')), ['2', '2', '2', '2', '2'], 'each with Retry-After');
  t.same(refused.map((r) => r.headers.get('x-requests-last')), ['0', '0', '0', '0', '0'], 'and free');
  const body = (await refused[0].json()) as { error_code: string };
  t.equal(body.error_code, 'CONCURRENCY_LIMIT', 'error_code CONCURRENCY_LIMIT');

  // another account takes the node's last place; a third account finds the node full
  admitted.push(fetch(day(b, 5)));
  t.ok(await until(() => admission.counts.admitted === 3), 'three requests in flight');
  const full = await Promise.all([fetch(day(c, 6)), fetch(matches(c))]);
  t.same(full.map((r) => r.status), [503, 503], 'the node at its bound: 503 for an export and for matches');
  t.same(full.map((r) => r.headers.get('retry-after')), ['2', '2'], 'with Retry-After');
  t.equal(((await full[0].json()) as { error_code: string }).error_code, 'SERVICE_UNAVAILABLE', 'error_code SERVICE_UNAVAILABLE');

  // the three counts: `queries` of them run in the database, the others wait their turn in the process
  t.ok(await until(() => admission.counts.running === queries && admission.counts.waiting === 3 - queries),
    `${queries} heavy quer${queries === 1 ? 'y' : 'ies'} running, ${3 - queries} waiting (${JSON.stringify(admission.counts)})`);
  await lock.release();
  const served = await Promise.all(admitted);
  t.same(served.map((r) => r.status), [200, 200, 200], 'the admitted exports are served once the database answers');
  const rows = await Promise.all(served.map(async (r) => ((await r.json()) as { row_count: number }).row_count));
  t.same(rows, [1, 2, 5], 'with their rows');
  t.same(admission.counts, { admitted: 0, running: 0, waiting: 0 }, 'every place given back');
  t.ok(admission.peakQueries <= queries, `at most ${queries} heavy queries ran at once (${admission.peakQueries})`);

  const again = await fetch(matches(a));
  t.equal(again.status, 200, 'the account is served again once its requests ended');
  t.equal(again.headers.get('x-ratelimit-remaining'), String(1000 - 3), 'the refused calls cost nothing: 2 exports and matches charged');
});
