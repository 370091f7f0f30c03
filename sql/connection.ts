// One handle for either database: the embedded PGlite served over a unix socket, or an external PostgreSQL
// from DATABASE_URL. Both are driven by postgres.js, so the rest of sql/ speaks one dialect to one driver.

import { chmodSync, existsSync, mkdirSync, rmSync, unlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import postgres from 'postgres';
import type { EmbeddedDbData, EmbeddedDbMessage } from '../workers/embedded-db.js';

export interface Database {
  sql: postgres.Sql;
  kind: 'embedded' | 'external';
  /** schema every connection uses (search_path) */
  schema: string;
  /** times the embedded database's thread was started again after it ended on its own (0 for an external one) */
  restarts(): number;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** external PostgreSQL; unset means embedded PGlite under `dataDir` */
  databaseUrl?: string;
  dataDir: string;
  /** default 'public' */
  schema?: string;
  /** drop the schema (cascade) on close; tests use it, refused for 'public' */
  dropSchemaOnClose?: boolean;
  /** told when the embedded database's thread ended without being asked to and when it serves again */
  log?: (msg: string) => void;
  /** embedded only: ms between the maintenance runs that stand in for PostgreSQL's background processes (a
   *  checkpoint and a vacuum of the table rewritten every few seconds); default EMBEDDED_MAINTENANCE_MS */
  maintenanceMs?: number;
}

/** PGlite is one backend without PostgreSQL's background processes: no checkpointer, no autovacuum. Its write-ahead
 *  log was trimmed only by the checkpoint of a clean shutdown: the soak audit saw it grow 6.5 MB a minute under the
 *  simulator (22 segments of 16 MB in 46 minutes, about 9 GB a day, all replayed after a crash). A checkpoint every
 *  5 minutes lets its segments be recycled: checked here, 600,000 upserts of 200-byte rows with a checkpoint after
 *  every 100,000 kept it at 7 segments where without them it reached 17 and went on. */
export const EMBEDDED_MAINTENANCE_MS = 300_000;

/** the embedded database's thread is started again this long after it ended on its own, doubling per failed start */
const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;

/** internals for tests: the embedded database's current thread, and how many times it was started again */
const embeddedThreads = new WeakMap<Database, { worker(): Worker; restarts(): number }>();
export function embeddedThreadOf(db: Database): { worker(): Worker; restarts(): number } | undefined {
  return embeddedThreads.get(db);
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
// sockaddr_un.sun_path is 108 bytes including the terminating NUL.
const MAX_SOCKET_PATH = 107;
const SOCKET_NAME = '.s.PGSQL.5432';

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const schema = opts.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
  if (opts.dropSchemaOnClose && schema === 'public') throw new Error('refusing to drop schema public on close');
  return opts.databaseUrl
    ? openExternal(opts.databaseUrl, schema, opts.dropSchemaOnClose ?? false)
    : openEmbedded(opts.dataDir, schema, opts.dropSchemaOnClose ?? false, opts.log ?? (() => undefined), opts.maintenanceMs ?? EMBEDDED_MAINTENANCE_MS);
}

/** Round-trip time of `select 1` in milliseconds. */
export async function ping(db: Database): Promise<number> {
  const t0 = performance.now();
  await db.sql`select 1`;
  return performance.now() - t0;
}

async function openExternal(url: string, schema: string, dropSchema: boolean): Promise<Database> {
  const sql = postgres(url, { max: 10, onnotice: () => {}, connection: { search_path: schema } });
  try {
    await createSchema(sql, schema);
  } catch (err) {
    await sql.end({ timeout: 5 });
    throw err;
  }
  return handle(sql, 'external', schema, dropSchema, async () => {}, () => 0);
}

async function openEmbedded(dataDir: string, schema: string, dropSchema: boolean, log: (msg: string) => void,
  maintenanceMs: number): Promise<Database> {
  const root = resolve(dataDir);
  const pgDir = join(root, 'pg');
  mkdirSync(pgDir, { recursive: true });
  // the database's own directory is the owner's alone, as PostgreSQL requires of its data directory: PGlite's
  // initdb leaves catalog files mode 0666, which any local user could then rewrite (webhook secrets live there)
  chmodSync(pgDir, 0o700);

  let socketDir = root;
  let tempSocketDir: string | null = null;
  if (Buffer.byteLength(join(root, SOCKET_NAME)) > MAX_SOCKET_PATH) {
    tempSocketDir = await mkdtemp(join(tmpdir(), 'lw-'));
    socketDir = tempSocketDir;
  } else {
    await clearStaleSocket(join(root, SOCKET_NAME), root);
  }
  const removeTemp = (): void => {
    if (tempSocketDir) rmSync(tempSocketDir, { recursive: true, force: true });
  };

  let host: EmbeddedHost | null = null;
  let sql: postgres.Sql | null = null;
  try {
    host = await startHost(pgDir, join(socketDir, SOCKET_NAME), schema);
    // PGlite is one PostgreSQL session and pglite-socket serves one connection: max 1 queues every query on
    // it. max_lifetime 0 disables recycling: a replacement connection could race the old one for the slot.
    sql = postgres({
      host: socketDir,
      user: 'postgres',
      database: 'postgres',
      max: 1,
      max_lifetime: 0,
      onnotice: () => {},
    });
    await createSchema(sql, schema);
    // PGlite ignores startup parameters, so the driver's `connection.search_path` has no effect here. A SET
    // holds for the life of the single session, which outlives driver reconnects.
    await sql`set search_path to ${sql(schema)}`;
  } catch (err) {
    await sql?.end({ timeout: 5 }).catch(() => {});
    await host?.stop().catch(() => {});
    removeTemp();
    throw err;
  }
  // A thread that ends on its own (a WebAssembly abort, an uncaught error) is started again on the same files, which
  // PostgreSQL's recovery makes consistent; queries fail meanwhile (503 SERVICE_UNAVAILABLE to requests) and the
  // driver connects again at the next one. The new session's search_path is set by the thread before it serves.
  let current = host;
  let stopping = false;
  let restarts = 0;
  const socketPath = join(socketDir, SOCKET_NAME);
  const supervise = (h: EmbeddedHost): void => {
    void h.exited.then(async (code) => {
      if (stopping) return;
      log(`embedded database: its thread ended (exit code ${code}); starting it again`);
      for (let delay = RESTART_FIRST_MS; !stopping; delay = Math.min(delay * 2, RESTART_MAX_MS)) {
        await new Promise((r) => setTimeout(r, delay).unref());
        if (stopping) return;
        try {
          // the ended thread's socket file is left behind (in DATA_DIR or the temporary directory alike)
          await clearStaleSocket(socketPath, root);
          const next = await startHost(pgDir, socketPath, schema);
          if (stopping) {
            await next.stop();
            return;
          }
          current = next;
          restarts++;
          supervise(next);
          log(`embedded database: serving again (restart ${restarts})`);
          return;
        } catch (e) {
          log(`embedded database: starting its thread again failed (${e instanceof Error ? e.message : String(e)}); next try in ${Math.min(delay * 2, RESTART_MAX_MS)} ms`);
        }
      }
    });
  };
  supervise(current);
  // EMBEDDED_MAINTENANCE_MS: a checkpoint, and a vacuum of pregame_quotes (the history's pregame state, upserted every
  // 15 s: dead row versions pile up without autovacuum). Failures (the thread restarting, the table not yet migrated)
  // wait for the next run.
  const db = sql;
  const maintenance = setInterval(() => {
    void (async () => {
      try {
        await db`checkpoint`;
        await db.unsafe('vacuum pregame_quotes');
      } catch { /* the next run */ }
    })();
  }, maintenanceMs);
  maintenance.unref();
  const out = handle(sql, 'embedded', schema, dropSchema, async () => {
    stopping = true;
    clearInterval(maintenance);
    try {
      await current.stop();
    } finally {
      removeTemp();
    }
  }, () => restarts);
  embeddedThreads.set(out, { worker: () => current.worker, restarts: () => restarts });
  return out;
}

interface EmbeddedHost {
  stop(): Promise<void>;
  /** resolves with the thread's exit code when it ends, asked to or not */
  exited: Promise<number>;
  worker: Worker;
}

/** PGlite and its socket server in a thread of their own (workers/embedded-db.ts), serving once this resolves. */
async function startHost(pgDir: string, socketPath: string, schema: string): Promise<EmbeddedHost> {
  // execArgv: the thread is plain JavaScript; a parent's flags such as --input-type do not apply to it
  const worker = new Worker(new URL('../workers/embedded-db.js', import.meta.url), { workerData: { pgDir, socketPath, schema } satisfies EmbeddedDbData, execArgv: [] });
  let exited = false;
  const gone = new Promise<number>((r) => worker.once('exit', (code) => { exited = true; r(code); }));
  const first = await Promise.race([
    new Promise<EmbeddedDbMessage>((r) => worker.once('message', r)),
    new Promise<EmbeddedDbMessage>((r) => worker.once('error', (e) => r({ error: e.message }))),
    gone.then((code): EmbeddedDbMessage => ({ error: `the embedded database's thread exited (${code}) before it served` })),
  ]);
  if ('error' in first) {
    await worker.terminate();
    throw new Error(`embedded database: ${first.error}`);
  }
  return {
    exited: gone,
    worker,
    async stop() {
      if (exited) return;
      const stopped = new Promise<void>((r) => worker.on('message', (m: EmbeddedDbMessage) => { if ('stopped' in m) r(); }));
      worker.postMessage('stop');
      // a database that does not close within the bound is left to the thread's end (its last writes are durable)
      await Promise.race([stopped, gone, new Promise((r) => setTimeout(r, 30_000).unref())]);
      if (!exited) await worker.terminate();
    },
  };
}

function handle(
  sql: postgres.Sql,
  kind: Database['kind'],
  schema: string,
  dropSchema: boolean,
  stop: () => Promise<void>,
  restarts: () => number,
): Database {
  let closing: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    try {
      if (dropSchema) await sql`drop schema if exists ${sql(schema)} cascade`;
    } finally {
      try {
        await sql.end({ timeout: 5 });
      } finally {
        await stop();
      }
    }
  };
  return {
    sql,
    kind,
    schema,
    restarts,
    close: () => (closing ??= close()),
  };
}

async function createSchema(sql: postgres.Sql, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql(schema)}`;
  } catch (err) {
    // Two processes creating the same schema at once: the loser sees a unique violation on pg_namespace.
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw err;
  }
}

/**
 * A socket file left by a process that died holds the path (EADDRINUSE on listen). Remove it when nothing
 * answers on it; refuse when something does, since two processes must never open one PGlite data directory.
 */
async function clearStaleSocket(path: string, dataDir: string): Promise<void> {
  if (!existsSync(path)) return;
  const live = await new Promise<boolean>((done) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
  });
  if (live) throw new Error(`embedded database in ${dataDir} is in use by another process (${path} answers)`);
  unlinkSync(path);
}

/**
 * The SQLSTATE class (its first two characters) of an error the database sent (postgres.js' PostgresError), or
 * null for any other error (a Node error's code such as EPIPE is not a SQLSTATE).
 * Class 22 (data exception) and 23 (integrity constraint violation) refuse a statement for its data: retrying the
 * same statement fails again.
 */
export function sqlStateClass(e: unknown): string | null {
  if (!(e instanceof Error) || e.name !== 'PostgresError') return null;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code.slice(0, 2) : null;
}
