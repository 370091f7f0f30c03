// The embedded database's thread (workers/embedded-db.ts) ending on its own, as a WebAssembly abort or an uncaught
// error would end it, is started again on the same files: the data written before is there, the session's schema
// is set again, and an app answers 503 SERVICE_UNAVAILABLE meanwhile and serves again after. The thread is ended
// with Worker.terminate(), the way a crash ends it: no clean shutdown of PGlite.

import { rmSync } from 'node:fs';
import t from 'tap';
import { embeddedThreadOf, openDatabase, type Database } from '../sql/connection.js';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';
import { freshDataDir, testSchemaName } from './helpers/db.js';

/** the result of `query` once it stops failing, within `ms`; the errors seen before */
async function once<T>(query: () => Promise<T>, ms: number): Promise<{ value: T | undefined; errors: string[] }> {
  const errors: string[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      return { value: await query(), errors };
    } catch (e) {
      errors.push((e as { code?: string }).code ?? (e as Error).message);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { value: undefined, errors };
}

t.test('embedded restart - a thread that ends on its own is started again on the same files, its schema set again', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const logs: string[] = [];
  const db: Database = await openDatabase({ dataDir: dir, schema: testSchemaName(), dropSchemaOnClose: true, log: (m) => logs.push(m) });
  t.teardown(() => db.close());
  await db.sql`create table kept (id int)`;
  await db.sql`insert into kept values (1), (2)`;
  const thread = embeddedThreadOf(db)!;
  const first = thread.worker();
  t.equal(thread.restarts(), 0, 'not restarted yet');
  await first.terminate();
  const down = await db.sql`select 1`.then(() => 'answered', (e: { code?: string }) => e.code ?? 'error');
  t.not(down, 'answered', `a query while the thread is gone fails (${down})`);
  const { value, errors } = await once(() => db.sql`select count(*)::int as n from kept`, 15_000);
  t.same(value?.[0], { n: 2 }, `the rows written before are read again, unqualified (the schema set on the new session; failed meanwhile: ${[...new Set(errors)].join(', ')})`);
  t.equal(thread.restarts(), 1, 'started again once');
  t.not(thread.worker(), first, 'a new thread');
  t.match(logs.join('\n'), /ended \(exit code 1\); starting it again[\s\S]*serving again \(restart 1\)/, 'logged: ended, serving again');
  await db.sql`insert into kept values (3)`;
  t.equal((await db.sql`select count(*)::int as n from kept`)[0]!.n, 3, 'and written to');
});

t.test('embedded restart - the app answers 503 while the thread is gone and serves again after', async (t) => {
  const app = await startTestApp(t);
  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  t.equal((await app.post('/v1/admin/keys', { tier: 'pro' }, admin)).status, 201, 'a key is made');
  await embeddedThreadOf(app.app.services.db)!.worker().terminate();
  const res = await app.post('/v1/admin/keys', { tier: 'pro' }, admin);
  t.equal(res.status, 503, 'SERVICE_UNAVAILABLE while the thread is gone');
  let status = 0;
  for (let i = 0; i < 150 && status !== 201; i++) {
    status = (await app.post('/v1/admin/keys', { tier: 'pro' }, admin)).status;
    if (status !== 201) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(status, 201, 'keys are made again');
  t.match(await (await app.get('/metrics')).text(), /^linewire_embedded_db_restarts_total 1$/m, 'counted in /metrics');
});
