// Starts the whole service for a test: real uWebSockets.js on a loopback port, real shard threads, and a real
// database (embedded PGlite in a fresh directory, or the PostgreSQL of TEST_DATABASE_URL in a schema of its own).
//
//   const app = await startTestApp(t);            // embedded, FEED=none
//   const res = await app.get('/v1/sports');
//   const key = await app.key('business');

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type Config, type RunningApp } from '../../http/app.js';
import { freshDataDir, testSchemaName } from './db.js';

export const ADMIN_KEY = 'test-admin-key-0123456789';

export interface TestApp {
  app: RunningApp;
  base: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** a fresh API key of the tier (and credits) */
  key(tier: string, credits?: number): Promise<string>;
  /** POST /v1/ingest with the admin key */
  ingest(body: unknown): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

export interface TestAppOptions extends Partial<Config> {
  /** 'embedded' (default) or 'postgres' (needs TEST_DATABASE_URL) */
  database?: 'embedded' | 'postgres';
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startTestApp(t: Teardown, opts: TestAppOptions = {}): Promise<TestApp> {
  const { database = 'embedded', ...rest } = opts;
  let dataDir = rest.dataDir;
  let ownDir = false;
  const cfg: Config = {
    host: '127.0.0.1',
    port: 0,
    dataDir: '',
    feeds: [],
    simSeed: 1,
    simRate: 1000,
    adminKey: ADMIN_KEY,
    shards: 2,
    ...rest,
  };
  if (database === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set');
    cfg.databaseUrl = url;
    cfg.schema ??= testSchemaName();
    cfg.dropSchemaOnClose ??= true;
    // the app still keeps local state under DATA_DIR (the export cache): a directory of its own, removed at close,
    // not /tmp itself, where every run left an empty export-cache behind
    if (dataDir === undefined) {
      dataDir = mkdtempSync(join(tmpdir(), 'lw-app-'));
      ownDir = true;
    }
    cfg.dataDir = dataDir;
  } else {
    if (dataDir === undefined) {
      dataDir = await freshDataDir();
      ownDir = true;
    }
    cfg.dataDir = dataDir;
  }
  let app: RunningApp;
  try {
    app = await startApp(cfg);
  } catch (e) {
    // a start that fails (a port in use) leaves no data directory behind
    if (ownDir) rmSync(dataDir!, { recursive: true, force: true });
    throw e;
  }
  const base = `http://127.0.0.1:${app.port}`;
  let closed: Promise<void> | null = null;
  const close = () => (closed ??= app.close().finally(() => {
    if (ownDir) rmSync(dataDir!, { recursive: true, force: true });
  }));
  t.teardown(close);
  const ta: TestApp = {
    app,
    base,
    get: (path, headers) => fetch(base + path, { headers }),
    post: (path, body, headers) => fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    }),
    async key(tier, credits) {
      const res = await ta.post('/v1/admin/keys', { tier, credits }, { authorization: `Bearer ${ADMIN_KEY}` });
      if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { key: string }).key;
    },
    async ingest(body) {
      const res = await ta.post('/v1/ingest', body, { authorization: `Bearer ${ADMIN_KEY}` });
      return { status: res.status, json: await res.json() };
    },
    close,
  };
  return ta;
}

/** The databases app tests run on: embedded always, the real server when TEST_DATABASE_URL is set. */
export function appDatabases(): ('embedded' | 'postgres')[] {
  return process.env.TEST_DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];
}

/** A small fixed market: one NBA event and one EPL event, commence in the future relative to `now`. */
export function fixture(now: number) {
  const nba = { id: 'evt_nba_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const epl = { id: 'evt_epl_1', sport_key: 'soccer_epl', commence_time: now + 7_200_000, home_team: 'Arsenal', away_team: 'Chelsea' };
  return { nba, epl };
}

/** A large NBA board: 40 games (ids `<prefix>_0` ...) of 8 books with moneylines and totals, so that one /odds body of
 *  two regions is about 240 KB (past the router's in-thread gzip limit and a good part of a cache's bytes). */
export function largeBoard(prefix: string, now: number) {
  const books = ['draftkings', 'fanduel', 'betmgm', 'williamhill_us', 'betrivers', 'bovada', 'pinnacle', 'betonlineag'];
  const events = Array.from({ length: 40 }, (_, i) => ({
    id: `${prefix}_${i}`, sport_key: 'basketball_nba', home_team: `Home ${i}`, away_team: `Away ${i}`, commence_time: now + 3_600_000 + i * 60_000,
  }));
  const prices = events.flatMap((ev) => books.flatMap((book, b) => [
    { book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.8 + b / 100 },
    { book, event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.05 - b / 100 },
    { book, event_id: ev.id, market: 'totals', outcome: 'Over', point: 220.5, price: 1.9 },
    { book, event_id: ev.id, market: 'totals', outcome: 'Under', point: 220.5, price: 1.92 },
  ]));
  return { events, prices };
}

/** Holds the embedded database's one session with an open transaction: every later query, the webhook outbox's
 *  included, queues behind it until `release` (a database that stops answering, for real). */
export async function holdDatabase(app: TestApp): Promise<{ release(): Promise<void> }> {
  let open: () => void = () => {};
  let held: Promise<unknown> = Promise.resolve();
  await new Promise<void>((started) => {
    held = app.app.services.db.sql.begin(() => new Promise<void>((r) => { open = r; started(); }));
  });
  return { release: async () => { open(); await held; } };
}

/** A clock for `Config.now` that follows Date.now until frozen: rate windows and freshness become deterministic.
 *
 *   const clock = new TestClock();
 *   const app = await startTestApp(t, { now: clock.now });
 *   clock.freeze();  ...  clock.release();
 */
export class TestClock {
  private frozenAt: number | null = null;
  readonly now = (): number => this.frozenAt ?? Date.now();
  /** stops the clock at `at` (default: now); returns it */
  freeze(at = Date.now()): number {
    this.frozenAt = at;
    return at;
  }
  release(): void {
    this.frozenAt = null;
  }
}
