// Applies sql/migrations/NNN_name.sql in name order, each once, each in its own transaction, recorded in
// schema_migrations. An advisory lock taken inside each transaction serialises concurrent starts against one
// database: the second process waits, then sees the migration recorded and skips it.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './connection.js';

const LOCK_NAME = 'linewire:migrate';

export async function migrate(db: Database, dir: string = migrationsDir()): Promise<string[]> {
  const names = sqlFiles(dir).sort();
  const applied: string[] = [];
  for (const name of names) {
    const body = readFileSync(join(dir, name), 'utf8');
    const ran = await db.sql.begin(async (tx) => {
      // Keyed by schema so test runs in separate schemas do not wait on each other.
      await tx`select pg_advisory_xact_lock(hashtext(${LOCK_NAME} || ':' || coalesce(current_schema(), '')))`;
      await tx`create table if not exists schema_migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      )`;
      const done = await tx`select 1 from schema_migrations where name = ${name}`;
      if (done.length > 0) return false;
      await tx.unsafe(body);
      await tx`insert into schema_migrations (name) values (${name})`;
      return true;
    });
    if (ran) applied.push(name);
  }
  return applied;
}

/**
 * The migrations folder, found by walking up from this file: tsc compiles this module to dist/sql/ but does
 * not copy the .sql files, which stay in sql/migrations/ at the project root.
 */
export function migrationsDir(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    const candidate = join(dir, 'sql', 'migrations');
    if (existsSync(candidate) && sqlFiles(candidate).length > 0) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no sql/migrations directory with .sql files above ${from}`);
    dir = parent;
  }
}

function sqlFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.sql'));
}
