import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase, ping, sqlStateClass } from '../sql/connection.js';
import { freshDataDir, testDatabases, testSchemaName } from './helpers/db.js';

const SOCKET = '.s.PGSQL.5432';

for (const d of testDatabases()) {
  t.test(d.name, async (t) => {
    t.test('ping - round trip of select 1 in ms', async (t) => {
      const db = await d.open({ migrate: false });
      t.teardown(() => db.close());
      const ms = await ping(db);
      t.ok(Number.isFinite(ms) && ms >= 0, `finite, non-negative (${ms.toFixed(3)} ms)`);
    });

    t.test('sqlStateClass - the class of a real server error, null for others', async (t) => {
      const db = await d.open({ migrate: false });
      t.teardown(() => db.close());
      const err = await db.sql`select 'x'::int`.catch((e: unknown) => e);
      t.equal(sqlStateClass(err), '22', 'invalid integer text is a data exception (22P02)');
      const dup = await db.sql`select 1/0`.catch((e: unknown) => e);
      t.equal(sqlStateClass(dup), '22', 'division by zero (22012)');
      const missing = await db.sql`select * from no_such_table_here`.catch((e: unknown) => e);
      t.equal(sqlStateClass(missing), '42', 'undefined table (42P01)');
      t.equal(sqlStateClass(new Error('socket hang up')), null, 'no code');
      t.equal(sqlStateClass(Object.assign(new Error('x'), { code: 'EPIPE' })), null, 'a Node error code is not a SQLSTATE');
      t.equal(sqlStateClass(null), null, 'null');
    });

    t.test('close - twice is harmless', async (t) => {
      const db = await d.open({ migrate: false });
      await db.close();
      await t.resolves(db.close(), 'second close resolves');
    });

    t.test('queries - many concurrent queries all see the schema', async (t) => {
      const db = await d.open({ migrate: false });
      t.teardown(() => db.close());
      const rows = await Promise.all(
        Array.from({ length: 20 }, (_, i) => db.sql`select current_schema() as s, ${i}::int as i, pg_sleep(0.01)`),
      );
      t.same(rows.map((r) => r[0]!.i), Array.from({ length: 20 }, (_, i) => i), 'every query answered, in order');
      t.ok(rows.every((r) => r[0]!.s === db.schema), `every connection uses schema ${db.schema}`);
    });
  });
}

t.test('openDatabase - refuses bad schema options', async (t) => {
  await t.rejects(openDatabase({ dataDir: tmpdir(), schema: 'x; drop table y' }), /invalid schema name/, 'unsafe name');
  await t.rejects(openDatabase({ dataDir: tmpdir(), dropSchemaOnClose: true }), /public/, 'never drops public');
});

t.test('embedded - named schema is used and dropped on close', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const schema = testSchemaName();
  const db = await openDatabase({ dataDir: dir, schema, dropSchemaOnClose: true });
  t.equal(db.kind, 'embedded', 'embedded without a url');
  await db.sql`create table here (id int)`;
  const [row] = await db.sql`select table_schema from information_schema.tables where table_name = 'here'`;
  t.equal(row?.table_schema, schema, 'unqualified tables go to the schema');
  await db.close();

  const again = await openDatabase({ dataDir: dir });
  t.teardown(() => again.close());
  const left = await again.sql`select nspname from pg_namespace where nspname = ${schema}`;
  t.same(left, [], 'schema dropped on close');
  t.equal((await again.sql`select current_schema() as s`)[0]!.s, 'public', 'default schema is public');
});

t.test('embedded - maintenance checkpoints and vacuums, as PostgreSQL\'s background processes would (regression: its WAL only grew)', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = await openDatabase({ dataDir: dir, maintenanceMs: 300 });
  t.teardown(() => db.close());
  // (the copied template may hold the migrated table already)
  await db.sql`create table if not exists pregame_quotes (id int)`;
  await db.sql`create table maintenance_probe (id int)`;
  await db.sql`insert into maintenance_probe select g from generate_series(1, 1000) g`;
  const checkpointAt = async () => (await db.sql<{ t: Date }[]>`select checkpoint_time as t from pg_control_checkpoint()`)[0]!.t.getTime();
  const vacuumAt = async () => (await db.sql<{ t: Date | null }[]>`select last_vacuum as t from pg_stat_user_tables where relname = 'pregame_quotes'`)[0]?.t ?? null;
  const before = await checkpointAt();
  let after = before;
  let vacuumed: Date | null = null;
  for (let i = 0; i < 50 && (after === before || vacuumed === null); i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await checkpointAt();
    vacuumed = await vacuumAt();
  }
  t.ok(after > before, 'a checkpoint ran (its WAL segments can be recycled)');
  t.not(vacuumed, null, 'pregame_quotes was vacuumed');
});

t.test('embedded - the database directory is the owner\'s alone (initdb left catalog files 0666)', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'pg'), { recursive: true, mode: 0o777 });
  chmodSync(join(dir, 'pg'), 0o777);
  const db = await openDatabase({ dataDir: dir });
  t.teardown(() => db.close());
  t.equal(statSync(join(dir, 'pg')).mode & 0o777, 0o700, 'DATA_DIR/pg is 0700, also when it existed wider');
});

t.test('embedded - a long query leaves the main thread free (PGlite runs in a thread of its own)', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = await openDatabase({ dataDir: dir });
  t.teardown(() => db.close());
  // PGlite executes a query synchronously in the thread that holds it: on the main thread a timer here fired only
  // before and after the query (an export held every request and stream for seconds, the main-thread audit)
  let turns = 0;
  const timer = setInterval(() => turns++, 1);
  const started = Date.now();
  await db.sql`select count(*) from generate_series(1, 3000000)`;
  const ms = Date.now() - started;
  clearInterval(timer);
  t.ok(ms > 100, `the query took a while (${ms} ms)`);
  t.ok(turns > ms / 20, `the main thread's timers ran during it (${turns} turns in ${ms} ms)`);
});

t.test('embedded - a stale socket file left by a crash is cleared', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A process killed while listening leaves its socket file behind, and nobody answers on it.
  const listenAndDie = `require('net').createServer().listen(${JSON.stringify(join(dir, SOCKET))}, () => process.kill(process.pid, 'SIGKILL'))`;
  spawnSync(process.execPath, ['-e', listenAndDie]);
  t.ok(existsSync(join(dir, SOCKET)), 'stale socket file present');
  const db = await openDatabase({ dataDir: dir });
  t.teardown(() => db.close());
  t.ok((await ping(db)) >= 0, 'opened and answering');
});

t.test('embedded - a data directory in use by another process is refused', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await openDatabase({ dataDir: dir });
  t.teardown(() => first.close());
  await t.rejects(openDatabase({ dataDir: dir }), /in use by another process/, 'second open refused');
  t.ok((await ping(first)) >= 0, 'the first one still answers');
});

t.test('embedded - a data directory too long for a socket path uses a temp socket', async (t) => {
  const base = await freshDataDir();
  const dir = join(base, 'x'.repeat(100));
  mkdirSync(dir);
  renameSync(join(base, 'pg'), join(dir, 'pg'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const before = new Set(readdirSync(tmpdir()));
  const db = await openDatabase({ dataDir: dir });
  t.ok((await ping(db)) >= 0, 'opened and answering');
  t.notOk(existsSync(join(dir, SOCKET)), 'no socket inside the data directory');
  await db.close();
  const added = readdirSync(tmpdir()).filter((n) => !before.has(n) && /^lw-[A-Za-z0-9]{6}$/.test(n));
  t.same(added, [], 'temp socket directory removed on close');
});
