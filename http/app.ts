// Assembles the service: database and migrations, accounts, shards, feed, and the uWebSockets.js front.
// http/main.ts calls it with the environment; tests call it with their own config on port 0.

import { availableParallelism } from 'node:os';
import uWS from 'uWebSockets.js';
import { Simulator } from '../engine/simulator.js';
import { openDatabase, type Database } from '../sql/connection.js';
import { getSetting, hashKey, setSetting } from '../sql/keys.js';
import { migrate } from '../sql/migrate.js';
import { Hub } from '../workers/hub.js';
import { Accounts } from './accounts.js';
import { Metrics } from './metrics.js';
import { Router } from './router.js';
import { adminRoutes } from './routes/admin.js';
import { analyticsRoutes } from './routes/analytics.js';
import { discoveryRoutes } from './routes/discovery.js';
import { healthRoutes } from './routes/health.js';
import { ingestRoutes } from './routes/ingest.js';
import { metaRoutes } from './routes/meta.js';
import { oddsRoutes } from './routes/odds.js';
import { pitcherRoutes } from './routes/pitchers.js';
import { predictionRoutes } from './routes/prediction.js';
import { propsRoutes } from './routes/props.js';
import { verdictRoutes } from './routes/verdict.js';
import type { Services } from './services.js';
import { DEFAULT_LIMITS, type StreamLimits } from './ws/channel.js';
import { Streams } from './ws/server.js';

export const VERSION = '0.1.0';

export interface Config {
  host: string;
  port: number;
  databaseUrl?: string;
  dataDir: string;
  /** test isolation: a schema of its own in an external database, dropped on close */
  schema?: string;
  dropSchemaOnClose?: boolean;
  feeds: string[];
  simSeed: number;
  /** simulator observations per second */
  simRate: number;
  adminKey?: string;
  shards: number;
  now?: () => number;
  log?: (msg: string) => void;
  /** WebSocket backpressure, resume and segmentation bounds (tests shrink them) */
  streams?: Partial<StreamLimits>;
}

export function configFromEnv(env: NodeJS.ProcessEnv): Config {
  const int = (name: string, dflt: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return n;
  };
  const feeds = (env.FEED ?? 'sim').split(',').map((f) => f.trim()).filter((f) => f !== '');
  for (const f of feeds) if (f !== 'sim' && f !== 'none') throw new Error(`FEED ${JSON.stringify(f)} is not known: use sim or none`);
  return {
    host: env.HOST || '0.0.0.0',
    port: int('PORT', 8080, 0, 65535),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    feeds: feeds.filter((f) => f !== 'none'),
    simSeed: int('SIM_SEED', 1, 0, 2 ** 31 - 1),
    simRate: int('SIM_RATE', 2000, 1, 1_000_000),
    adminKey: env.ADMIN_KEY || undefined,
    shards: int('SHARDS', Math.max(1, availableParallelism() - 1), 1, 64),
  };
}

export interface RunningApp {
  port: number;
  services: Services;
  /** keys generated at this start, printed once */
  firstStart: { adminKey: string | null; demoKey: string | null };
  close(): Promise<void>;
}

/** Native uWebSockets.js answers with this header; its ws fallback does not. */
export async function assertNative(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'HEAD' }).catch((e: unknown) => e as Error);
  if (res instanceof Error || res.headers.get('uwebsockets') === null) {
    throw new Error('uWebSockets.js is not running on its native binary (its slow fallback answered). ' +
      'linewire refuses to start: reinstall with `npm ci` on Node 20, Linux x64, glibc >= 2.36.');
  }
}

async function bootstrapKeys(db: Database, accounts: Accounts, cfg: Config): Promise<{ adminKey: string | null; demoKey: string | null }> {
  let adminKey: string | null = null;
  if (cfg.adminKey !== undefined) {
    accounts.setAdminKey(cfg.adminKey);
    await setSetting(db, 'admin_key_hash', hashKey(cfg.adminKey));
  } else {
    const stored = await getSetting(db, 'admin_key_hash');
    if (stored !== null) accounts.setAdminHash(stored);
    else {
      const { generateKey } = await import('../sql/keys.js');
      adminKey = 'lwadmin_' + generateKey().slice(3);
      accounts.setAdminKey(adminKey);
      await setSetting(db, 'admin_key_hash', hashKey(adminKey));
    }
  }
  let demoKey: string | null = null;
  if ((await getSetting(db, 'demo_key_issued')) === null) {
    demoKey = (await accounts.create({ tier: 'business', email: null })).key;
    await setSetting(db, 'demo_key_issued', new Date().toISOString());
  }
  return { adminKey, demoKey };
}

export async function startApp(cfg: Config): Promise<RunningApp> {
  const now = cfg.now ?? Date.now;
  const db = await openDatabase({ databaseUrl: cfg.databaseUrl, dataDir: cfg.dataDir, schema: cfg.schema, dropSchemaOnClose: cfg.dropSchemaOnClose });
  const cleanups: (() => Promise<void>)[] = [() => db.close()];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  };
  try {
    await migrate(db);
    const accounts = new Accounts(db);
    await accounts.load();
    const firstStart = await bootstrapKeys(db, accounts, cfg);
    accounts.startFlushing(1000);
    cleanups.push(() => accounts.close());

    const hub = new Hub(cfg.shards, now);
    await hub.start();
    cleanups.push(() => hub.close());
    // quotes age without updates: once a second the shards drop newly stale quotes from the analytics
    const ticker = setInterval(() => hub.pool.tick(), 1000);
    ticker.unref();
    cleanups.push(async () => clearInterval(ticker));

    let hubRef: Hub | null = hub;
    const metrics = new Metrics(() => hubRef);
    cleanups.push(async () => { hubRef = null; });
    const simulated = cfg.feeds.includes('sim');
    const services: Services = {
      hub, accounts, db, metrics, now, simulated,
      feed: cfg.feeds.length === 0 ? 'none' : cfg.feeds.join(','),
      startedAt: now(),
      version: VERSION,
    };

    const router = new Router({
      accounts,
      now,
      headers: simulated ? [['X-Data-Source', 'simulated']] : [],
      onResponse: (route, status, ms) => metrics.observe(route, status, ms),
      onError: (err, ctx) => cfg.log?.(`request ${ctx.requestId} ${ctx.method} ${ctx.path} failed: ${err instanceof Error ? err.stack : String(err)}`),
    });
    router.add(
      ...healthRoutes(services),
      ...discoveryRoutes(services),
      ...oddsRoutes(services),
      ...analyticsRoutes(services),
      ...propsRoutes(services),
      ...pitcherRoutes(services),
      ...predictionRoutes(services),
      ...verdictRoutes(services),
      ...ingestRoutes(services),
      ...adminRoutes(services),
      ...metaRoutes(services, router),
    );
    const app = uWS.App();
    const streams = new Streams(services, { ...DEFAULT_LIMITS, ...cfg.streams });
    streams.mount(app);
    cleanups.push(async () => streams.close());
    router.mount(app);
    const listen = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      app.listen(cfg.host, cfg.port, (ls) => (ls ? resolve(ls) : reject(new Error(`cannot listen on ${cfg.host}:${cfg.port}`))));
    });
    const port = uWS.us_socket_local_port(listen);
    cleanups.push(async () => uWS.us_listen_socket_close(listen));
    await assertNative(port);

    if (simulated) cleanups.push(await startSimulator(hub, cfg, now));

    return {
      port,
      services,
      firstStart,
      close: cleanup,
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** Drives the simulator from a timer: a full snapshot first, then SIM_RATE observations per second in 10 steps. */
async function startSimulator(hub: Hub, cfg: Config, now: () => number): Promise<() => Promise<void>> {
  const sim = new Simulator({ seed: cfg.simSeed, now: now() });
  await hub.ingest(sim.snapshot(now()), now());
  const perTick = Math.max(1, Math.round(cfg.simRate / 10));
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(() => {
      if (stopped) return;
      const t = now();
      return hub.ingest(sim.step(t, perTick), t).catch((e: unknown) => cfg.log?.(`simulator batch failed: ${String(e)}`));
    });
  }, 100);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
