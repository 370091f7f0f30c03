// The service as a child process (node dist/http/main.js) for kill-and-restart tests, on either database:
// embedded (a DATA_DIR of its own) or the real PostgreSQL of TEST_DATABASE_URL (DATABASE_URL plus a
// DATABASE_SCHEMA of its own). Each database keeps its data across kills and restarts until disposed.
//
//   for (const d of serviceDatabases()) { const svc = await startService(t, d, { FEED: 'none' }); ... await kill9(svc.child); }

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../../sql/connection.js';
import { freshDataDir, testSchemaName } from './db.js';
import type { Receiver } from './webhook-receiver.js';

const main = fileURLToPath(new URL('../../http/main.js', import.meta.url));

export const SERVICE_ADMIN_KEY = 'restart-admin-key-0123456789';

export interface ServiceDatabase {
  name: 'embedded' | 'postgres';
  /** the environment that points the service at it */
  env(): Promise<Record<string, string>>;
  /** postgres only: a connection of the test's own to the service's schema (closed by dispose) */
  direct(): Promise<Database>;
  dispose(): Promise<void>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The databases a restart test runs on (or those of `only`), removed at teardown. */
export function serviceDatabases(t: Teardown, only: ServiceDatabase['name'][] = ['embedded', 'postgres']): ServiceDatabase[] {
  const list: ServiceDatabase[] = [];
  if (only.includes('embedded')) {
    const dir = freshDataDir();
    list.push({
      name: 'embedded',
      env: async () => ({ DATA_DIR: await dir, DATABASE_URL: '', DATABASE_SCHEMA: '' }),
      direct: () => Promise.reject(new Error('the embedded database is held by the service process')),
      dispose: async () => rmSync(await dir, { recursive: true, force: true }),
    });
  }
  const url = process.env.TEST_DATABASE_URL;
  if (url && only.includes('postgres')) {
    const schema = testSchemaName();
    // the data directory still takes the first-start key file
    const dataDir = mkdtempSync(join(tmpdir(), 'lw-svc-'));
    let conn: Database | null = null;
    list.push({
      name: 'postgres',
      env: async () => ({ DATA_DIR: dataDir, DATABASE_URL: url, DATABASE_SCHEMA: schema }),
      direct: async () => (conn ??= await openDatabase({ databaseUrl: url, dataDir: tmpdir(), schema })),
      dispose: async () => {
        rmSync(dataDir, { recursive: true, force: true });
        await conn?.close();
        const db = await openDatabase({ databaseUrl: url, dataDir: tmpdir(), schema, dropSchemaOnClose: true });
        await db.close();
      },
    });
  }
  for (const d of list) t.teardown(() => d.dispose());
  return list;
}

export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  /** stdout so far (the start banner) */
  out(): string;
}

/** Starts the service on the database and waits for its listening line; killed at teardown if still running. */
export async function startService(t: Teardown, db: ServiceDatabase, env: Record<string, string> = {}): Promise<ServiceProcess> {
  // with the test process's V8 flags (scripts/test.mjs runs PGlite's WebAssembly on the baseline compiler)
  const child = spawn(process.execPath, [...process.execArgv, main], {
    env: {
      ...process.env, HOST: '127.0.0.1', PORT: '0', FEED: 'none', ADMIN_KEY: SERVICE_ADMIN_KEY, SHARDS: '1', LOG_LEVEL: 'error',
      ...(await db.env()), ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => { err += c.toString(); });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${out} ${err}`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on [^:]+:(\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}: ${err}`));
    });
  });
  return { child, base: `http://127.0.0.1:${port}`, out: () => out };
}

/** SIGKILL: no shutdown code runs. */
export function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** JSON requests to a running service with a key (or the admin key). */
export function client(svc: () => ServiceProcess) {
  return {
    post: (path: string, key: string, body: unknown) => fetch(svc().base + path, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body),
    }),
    get: (path: string, key: string) => fetch(svc().base + path, { headers: { 'x-api-key': key } }),
  };
}

/** the book of the check tests: a fast book, ok up to 15 s after its newest write, degraded to 60 s, breach to 180 s */
export const BOOK = 'draftkings';

/** A service on the database (private destinations allowed) with a Variant B subscription to source_quality.* on a
 *  path of its own; `ingest` writes one BOOK price at `ts`. */
export async function checkService(t: Teardown, db: ServiceDatabase, rx: Receiver) {
  let svc: ServiceProcess = await startService(t, db, { WEBHOOK_ALLOW_PRIVATE: '1' });
  const c = client(() => svc);
  const key = ((await (await c.post('/v1/admin/keys', SERVICE_ADMIN_KEY, { tier: 'business' })).json()) as { key: string }).key;
  const path = `?sq-${db.name}`;
  const hook = (await (await c.post('/v1/webhooks', key, { destination_url: rx.url + path, events: ['source_quality.breach', 'source_quality.recovery'] })).json()) as { id: string };
  const got = (type: string) => rx.requests.filter((r) => r.path.endsWith(path) && r.headers['x-service-event'] === type);
  const ingest = (ts: number, id: string) => c.post('/v1/ingest', SERVICE_ADMIN_KEY, {
    events: [{ id, sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' }],
    prices: [{ book: BOOK, event_id: id, market: 'h2h', outcome: 'Boston Celtics', price: 1.9, ts }],
  });
  return {
    svc: () => svc,
    restart: async () => { svc = await startService(t, db, { WEBHOOK_ALLOW_PRIVATE: '1' }); },
    key, hook, path, got, ingest,
  };
}
