// The databases every SQL test runs against: the embedded PGlite always, and the real PostgreSQL named by
// TEST_DATABASE_URL when it is set. Each open() is isolated (its own temp data directory, or its own schema
// t_<pid>_<random>) and leaves nothing behind once closed.
//
//   for (const d of testDatabases()) t.test(d.name, async (t) => {
//     const db = await d.open();           // migrated; d.open({ migrate: false }) for an empty one
//     t.teardown(() => db.close());
//     ...
//   });

import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase, type Database } from '../../sql/connection.js';
import { migrate } from '../../sql/migrate.js';

export interface OpenTestOptions {
  /** run sql/migrations first (default true) */
  migrate?: boolean;
}

export interface TestDatabase {
  /** 'embedded' or 'postgres': use it as the subtest name */
  name: string;
  kind: Database['kind'];
  /** A fresh database, removed when closed. */
  open(opts?: OpenTestOptions): Promise<Database>;
  /** A database that keeps its data across close and open (restart tests); dispose() removes it. */
  durable(): DurableTestDatabase;
}

export interface DurableTestDatabase {
  open(opts?: OpenTestOptions): Promise<Database>;
  dispose(): Promise<void>;
}

export function testDatabases(): TestDatabase[] {
  const list: TestDatabase[] = [embedded()];
  const url = process.env.TEST_DATABASE_URL;
  if (url) list.push(external(url));
  return list;
}

/** A unique schema name for one test database: t_<pid>_<random>. */
export function testSchemaName(): string {
  return `t_${process.pid}_${randomBytes(4).toString('hex')}`;
}

function embedded(): TestDatabase {
  return {
    name: 'embedded',
    kind: 'embedded',
    async open(opts) {
      const dir = await freshDataDir(opts?.migrate !== false);
      let db: Database;
      try {
        db = await prepare(await openDatabase({ dataDir: dir }), opts);
      } catch (err) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      return onClose(db, () => rmSync(dir, { recursive: true, force: true }));
    },
    durable() {
      const dirP = freshDataDir();
      return {
        async open(opts) {
          return prepare(await openDatabase({ dataDir: await dirP }), opts);
        },
        async dispose() {
          rmSync(await dirP, { recursive: true, force: true });
        },
      };
    },
  };
}

function external(url: string): TestDatabase {
  return {
    name: 'postgres',
    kind: 'external',
    async open(opts) {
      const db = await openDatabase({ databaseUrl: url, dataDir: tmpdir(), schema: testSchemaName(), dropSchemaOnClose: true });
      return prepare(db, opts);
    },
    durable() {
      const schema = testSchemaName();
      return {
        async open(opts) {
          return prepare(await openDatabase({ databaseUrl: url, dataDir: tmpdir(), schema }), opts);
        },
        async dispose() {
          const db = await openDatabase({ databaseUrl: url, dataDir: tmpdir(), schema, dropSchemaOnClose: true });
          await db.close();
        },
      };
    },
  };
}

async function prepare(db: Database, opts: OpenTestOptions | undefined): Promise<Database> {
  if (opts?.migrate === false) return db;
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

function onClose(db: Database, after: () => void): Database {
  const close = db.close;
  let closing: Promise<void> | null = null;
  return {
    ...db,
    close: () => (closing ??= close().finally(after)),
  };
}

// The first PGlite.create of a directory runs initdb (about 4 s and 6 s of CPU); copying an initialised, cleanly
// closed data directory takes a fraction of that. `npm test` makes the templates once for the whole run and names
// them in LW_PG_TEMPLATE and LW_PG_TEMPLATE_MIGRATED (scripts/test.mjs: the second with every migration applied,
// which saves each database that migrates at start about 0.4 s of CPU); a test file run on its own makes the empty
// one, removed when it exits, and migrates as it opens.
let template: Promise<string> | null = null;

function pgTemplate(migrated: boolean): Promise<string> {
  const shared = migrated ? process.env.LW_PG_TEMPLATE_MIGRATED ?? process.env.LW_PG_TEMPLATE : process.env.LW_PG_TEMPLATE;
  if (shared) return Promise.resolve(shared);
  return (template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lw-tpl-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'pg'));
    const pg = await PGlite.create(join(dir, 'pg'));
    await pg.close();
    return dir;
  })());
}

/** A new temp DATA_DIR holding an initialised PGlite database, the caller removes it: with the migrations applied
 *  when `migrated` (the default) and the run provides such a template, for a database or service that migrates as it
 *  opens (they then find nothing to do), else empty. */
export async function freshDataDir(migrated = true): Promise<string> {
  const tpl = await pgTemplate(migrated);
  const dir = mkdtempSync(join(tmpdir(), 'lw-db-'));
  cpSync(join(tpl, 'pg'), join(dir, 'pg'), { recursive: true });
  return dir;
}

/** `n` closing rows of one NBA day (2026-11-19), pinnacle player points of players P1..Pn, 50 a game: the exports'
 *  tests' common day */
export async function seedClosingDay(db: Database, n: number): Promise<void> {
  await db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select '2026-11-19', 'basketball_nba', 'e' || (g / 50), '2026-11-19T20:00:00Z', 'H', 'A', 'pinnacle', 'P' || g,
      'player_points', 'Points', 10.5, 1.9, 1.95, '2026-11-19T19:59:00Z'
    from generate_series(1, ${n}::int) g`;
}
