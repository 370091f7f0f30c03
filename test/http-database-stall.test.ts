// A database that stops answering (connections open, nothing comes back) held every request that needed it for ever:
// no 503, no log line (the embedded-database audit, with DATA_DIR/pg made immutable). Now such a request is answered
// 503 SERVICE_UNAVAILABLE with Retry-After once DATABASE_TIMEOUT_MS has passed, a key known in memory keeps working,
// one line says the database stopped answering and one that it answers again. The stall is real: the embedded
// database's one session held by an open transaction (every later query queues behind it), and a PostgreSQL table
// locked by another connection.

import t, { type Test } from 'tap';
import postgres from 'postgres';
import { ADMIN_KEY, startTestApp, type TestApp } from './helpers/app.js';
import { testSchemaName } from './helpers/db.js';

const BOUND_MS = 500;
/** generous: the requests are answered after BOUND_MS; without the bound they were never answered */
const ANSWER_WITHIN_MS = 8000;
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

async function timed(app: TestApp, method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}) {
  const started = Date.now();
  const res = await fetch(app.base + path, {
    method, headers: { 'content-type': 'application/json', ...headers },
    body: method === 'POST' ? JSON.stringify({ tier: 'pro' }) : undefined,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  }).catch((e: unknown) => e as Error);
  return { res, ms: Date.now() - started };
}

/** Requests while the database is stuck, then after it is released. */
async function stalledThenReleased(t: Test, app: TestApp, lines: string[], stall: Stall, healthWhileStuck: number) {
  const key = await app.key('business', 1000);
  const stoppedBefore = lines.filter((l) => /database stopped answering/.test(l)).length;
  await stall.hold();
  const [a, b] = await Promise.all([timed(app, 'POST', '/v1/admin/keys', admin), timed(app, 'POST', '/v1/admin/keys', admin)]);
  for (const { res, ms } of [a, b]) {
    if (res instanceof Error) {
      t.fail(`a request that needs the database was not answered within ${ANSWER_WITHIN_MS} ms (${res.message})`);
      continue;
    }
    const body = (await res.json()) as { error_code: string; message: string };
    t.equal(res.status, 503, `503 after ${ms} ms while the database does not answer (${body.message})`);
    t.equal(body.error_code, 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE');
    t.equal(res.headers.get('retry-after'), '5', 'Retry-After: 5');
  }
  const odds = await timed(app, 'GET', `/v1/sports/basketball_nba/odds?regions=us&apiKey=${key}`);
  t.equal(odds.res instanceof Error ? odds.res.message : odds.res.status, 200, 'a key known in memory is served while the database is stuck');
  const health = await timed(app, 'GET', '/health');
  t.equal(health.res instanceof Error ? health.res.message : health.res.status, healthWhileStuck, `/health answers ${healthWhileStuck} within its own bound`);
  t.equal(lines.filter((l) => /database stopped answering/.test(l)).length - stoppedBefore, 1, 'one line says the database stopped answering, not one per request');
  t.notOk(lines.some((l) => /^request .* failed/.test(l) && /did not answer/.test(l)), 'no error line per request');
  await stall.release();
  let status = 0;
  for (let i = 0; i < 50 && status !== 201; i++) {
    const r = await timed(app, 'POST', '/v1/admin/keys', admin);
    status = r.res instanceof Error ? 0 : r.res.status;
    if (status !== 201) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(status, 201, 'served again once the database answers');
  for (let i = 0; i < 50 && !lines.some((l) => /database answers again/.test(l)); i++) await new Promise((r) => setTimeout(r, 100));
  t.equal(lines.filter((l) => /database answers again/.test(l)).length, 1, 'one line says it answers again');
}

interface Stall {
  hold(): Promise<void>;
  release(): Promise<void>;
}

t.test('database stall - embedded: its one session held, requests answered 503 within DATABASE_TIMEOUT_MS, then served again', async (t) => {
  const lines: string[] = [];
  const app = await startTestApp(t, { databaseTimeoutMs: BOUND_MS, log: (m) => lines.push(m) });
  let open: () => void = () => {};
  let held: Promise<unknown> = Promise.resolve();
  const stall: Stall = {
    // the driver's one connection to PGlite taken by a transaction: every other query queues behind it, as behind a
    // query the database never answers
    hold: () => new Promise<void>((started) => {
      held = app.app.services.db.sql.begin(() => new Promise<void>((r) => { open = r; started(); }));
    }),
    release: async () => { open(); await held; },
  };
  t.teardown(() => stall.release());
  await stalledThenReleased(t, app, lines, stall, 503);
});

t.test('database stall - /metrics answers without the outbox backlog count the database does not give', async (t) => {
  // a bound above the scrape's own (2 s), as DATABASE_TIMEOUT_MS's default is
  const app = await startTestApp(t, { databaseTimeoutMs: 6000 });
  let open: () => void = () => {};
  await new Promise<void>((started) => {
    const held = app.app.services.db.sql.begin(() => new Promise<void>((r) => { open = r; started(); }));
    t.teardown(async () => { open(); await held; });
  });
  const { res, ms } = await timed(app, 'GET', '/metrics');
  t.equal(res instanceof Error ? res.message : res.status, 200, `/metrics answered 200 after ${ms} ms while the database is stuck (it waited for the count)`);
  if (!(res instanceof Error)) t.match(await res.text(), /linewire_webhook_outbox_backlog/, 'the gauge keeps its last value');
});

const url = process.env.TEST_DATABASE_URL;

t.test('database stall - PostgreSQL: a table locked by another connection, requests answered 503 within DATABASE_TIMEOUT_MS, then served again',
  { skip: url ? false : 'TEST_DATABASE_URL is not set' }, async (t) => {
    const lines: string[] = [];
    const schema = testSchemaName();
    const app = await startTestApp(t, { database: 'postgres', schema, databaseTimeoutMs: BOUND_MS, log: (m) => lines.push(m) });
    const other = postgres(url!, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    t.teardown(() => other.end({ timeout: 5 }));
    let open: () => void = () => {};
    let held: Promise<unknown> = Promise.resolve();
    const stall: Stall = {
      hold: () => new Promise<void>((locked, failed) => {
        held = other.begin(async (tx) => {
          await tx`lock table api_keys in access exclusive mode`;
          locked();
          await new Promise<void>((r) => { open = r; });
        }).catch(failed);
      }),
      release: async () => { open(); await held; },
    };
    t.teardown(() => stall.release());
    // select 1 does not touch the table: the database answers /health, not the requests that need api_keys
    await stalledThenReleased(t, app, lines, stall, 200);
  });
