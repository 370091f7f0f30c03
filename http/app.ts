// Assembles the service: database and migrations, accounts, shards, feed, and the uWebSockets.js front.
// http/main.ts calls it with the environment; tests call it with their own config on port 0.

import { availableParallelism, hostname } from 'node:os';
import { createHash } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import uWS from 'uWebSockets.js';
import { Simulator } from '../engine/simulator.js';
import type { IngestBatch } from '../engine/types.js';
import { openDatabase, type Database } from '../sql/connection.js';
import { getSetting, hashKey, setSetting } from '../sql/keys.js';
import { migrate } from '../sql/migrate.js';
import { DatabaseWatch } from '../sql/watch.js';
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
import { calcRoutes } from './routes/calc.js';
import { webhookRoutes } from './routes/webhooks.js';
import { EXPORT_CACHE_TTL_MS, historicalRoutes } from './routes/historical.js';
import { ExportCache } from './export-cache.js';
import { Admission, DEFAULT_ADMISSION, type AdmissionLimits } from './admission.js';
import { lockDataDir } from './data-dir-lock.js';
import { WorkPool } from '../workers/work-pool.js';
import { join } from 'node:path';
import { DEFAULT_HISTORY_CONFIG, HistoryService, type HistoryConfig } from '../workers/history-service.js';
import { DEFAULT_STATUS_CONFIG, StatusService, type StatusConfig } from '../workers/status-service.js';
import { statusRoutes } from './routes/status.js';
import { coverageRoutes } from './routes/coverage.js';
import { statusPageRoutes } from './routes/status-page.js';
import { agentRoutes } from './routes/agent.js';
import { keyRoutes } from './routes/keys.js';
import { usageRoutes } from './routes/usage.js';
import { TrustedProxies } from './client-ip.js';
import { bookByKey } from '../engine/catalogue.js';
import { SIM_BOOKS } from '../engine/simulator.js';
import { DEFAULT_WEBHOOK_CONFIG, WebhookService, type WebhookConfig } from '../workers/webhook-service.js';
import type { Services } from './services.js';
import { DEFAULT_LIMITS, type StreamLimits } from './ws/channel.js';
import { Streams } from './ws/server.js';
import { envInt, httpUrl } from './env.js';
import { dataSourceHeader, parseFeeds, theOddsApiConfigFromEnv } from './feeds.js';
import { TheOddsApiFeed, type TheOddsApiConfig } from '../workers/theoddsapi-feed.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { Cluster } from '../workers/cluster.js';
import { NatsLink, connectNats, natsConfigFromEnv, type NatsConfig } from '../workers/nats.js';
import { NatsIngest } from '../workers/nats-ingest.js';
import { KeySync } from './key-sync.js';

export const VERSION = '0.1.0';

/** how long a request waits on the database before it is answered 503 (DATABASE_TIMEOUT_MS) */
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000;

/** the shards' clock tick (Hub.tick) */
const TICK_MS = 250;

export interface Config {
  host: string;
  port: number;
  databaseUrl?: string;
  dataDir: string;
  /** DATABASE_TIMEOUT_MS: a request waits this long on the database, then is answered 503 (default 10 s) */
  databaseTimeoutMs?: number;
  /** test isolation: a schema of its own in an external database, dropped on close */
  schema?: string;
  dropSchemaOnClose?: boolean;
  /** FEED: the feeds that run ('sim', 'theoddsapi'); empty for none */
  feeds: string[];
  /** false keeps the shards' analytics off (benchmarks only: bench/analytics.ts measures what they cost) */
  analytics?: boolean;
  /** THE_ODDS_API_*: required when feeds include 'theoddsapi' */
  theOddsApi?: TheOddsApiConfig;
  simSeed: number;
  /** simulator observations per second */
  simRate: number;
  adminKey?: string;
  shards: number;
  now?: () => number;
  log?: (msg: string) => void;
  /** WebSocket backpressure, resume and segmentation bounds (tests shrink them) */
  streams?: Partial<StreamLimits>;
  /** outbound webhooks (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_RETRY_DELAYS_MS, SMTP_URL; tests shorten the timings) */
  webhooks?: Partial<WebhookConfig>;
  /** NODE_ID: this node's name in the claims of a cluster (README "Cluster: what is claimed how"); default the host
   *  name and a hash of the data directory, the same across restarts */
  nodeId?: string;
  /** the engine's clock tick (quotes going stale, games starting: Hub.tick), ms; default 1000 (a test that must see
   *  what a request serves before the tick lengthens it) */
  tickMs?: number;
  /** closing-line history writer timings (tests shorten them) */
  history?: Partial<HistoryConfig>;
  /** status cache and sampling timings (tests shorten them) */
  status?: Partial<StatusConfig>;
  /** SIM_STALL: book keys the simulator does not quote */
  simStall?: string[];
  /** TRUSTED_PROXIES: addresses or CIDR blocks whose X-Forwarded-For names the client */
  trustedProxies?: string;
  /** CHECKOUT_URL_TEMPLATE: upgrade URL with {tier} and {email}; unset, a local page says billing is not configured */
  checkoutUrlTemplate?: string;
  /** PUBLIC_URL: the base of links in answers and mails (claim, login, billing); default http://HOST:PORT */
  publicUrl?: string;
  /** EXPORT_CACHE_MB: bytes the export cache may hold on disk under dataDir (0 turns it off); tests shorten the TTL
   *  and lower the number of entries (default export-cache.ts MAX_ENTRIES) */
  exportCache?: { maxBytes?: number; ttlMs?: number; maxEntries?: number };
  /** bounds of the heavy historical requests (http/admission.ts; default DEFAULT_ADMISSION, 2 queries on PostgreSQL) */
  historical?: Partial<AdmissionLimits>;
  /** NATS_URL and the cluster settings (workers/nats.ts); null or absent: no NATS */
  nats?: NatsConfig | null;
}

/** DATABASE_URL: a postgres:// or postgresql:// URL (the driver reads any scheme as PostgreSQL, so http://... started
 *  against it and mysql://... failed on a role); empty is unset. The password is never repeated in the error. */
function databaseUrlFromEnv(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // reported below
  }
  if (url === null || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    const shown = url === null ? 'a value that is not a URL' : `${url.protocol}//${url.host}${url.pathname}`;
    throw new Error(`DATABASE_URL must be a postgres:// or postgresql:// URL (postgres://user[:password]@host[:port]/database), got ${shown}`);
  }
  return raw;
}

export function configFromEnv(env: NodeJS.ProcessEnv): Config {
  const int = (name: string, dflt: number, min: number, max: number): number => envInt(env, name, dflt, min, max);
  // an empty FEED= is unset, as every other empty variable (the default, sim), not "no feed"
  const feeds = parseFeeds(env.FEED || undefined);
  return {
    host: env.HOST || '0.0.0.0',
    port: int('PORT', 8080, 0, 65535),
    databaseUrl: databaseUrlFromEnv(env.DATABASE_URL),
    // DATABASE_SCHEMA: the schema of DATABASE_URL (or of the embedded database) the service keeps its tables in
    schema: env.DATABASE_SCHEMA || undefined,
    databaseTimeoutMs: int('DATABASE_TIMEOUT_MS', DEFAULT_DATABASE_TIMEOUT_MS, 100, 600_000),
    dataDir: env.DATA_DIR || './data',
    feeds,
    theOddsApi: feeds.includes('theoddsapi') ? theOddsApiConfigFromEnv(env) : undefined,
    simSeed: int('SIM_SEED', 1, 0, 2 ** 31 - 1),
    simRate: int('SIM_RATE', 2000, 1, 1_000_000),
    adminKey: env.ADMIN_KEY || undefined,
    shards: int('SHARDS', Math.max(1, availableParallelism() - 1), 1, 64),
    webhooks: { ...webhookConfigFromEnv(env), ...(env.WEBHOOK_LEASE_MS ? { leaseMs: int('WEBHOOK_LEASE_MS', 30_000, 200, 3_600_000) } : {}) },
    nodeId: nodeIdFromEnv(env.NODE_ID),
    simStall: simStallFromEnv(env.SIM_STALL),
    trustedProxies: env.TRUSTED_PROXIES || undefined,
    checkoutUrlTemplate: checkoutTemplateFromEnv(env.CHECKOUT_URL_TEMPLATE),
    publicUrl: publicUrlFromEnv(env.PUBLIC_URL),
    exportCache: { maxBytes: int('EXPORT_CACHE_MB', 1024, 0, 1_048_576) * 1048576 },
    // WS_MAX_STREAMS: open streams per account on this node, for every tier alike; unset or 0, each tier's own
    ...(env.WS_MAX_STREAMS ? { streams: { maxStreams: int('WS_MAX_STREAMS', 0, 0, 1_000_000) } } : {}),
    // one NODE_ID for the webhook claims and the NATS messages; unset, both take the host and data directory's name
    nats: ((n) => (n === null || env.NODE_ID ? n : { ...n, nodeId: defaultNodeId(env.DATA_DIR || './data') }))(natsConfigFromEnv(env, int)),
  };
}

function checkoutTemplateFromEnv(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  httpUrl('CHECKOUT_URL_TEMPLATE', raw, raw.replaceAll('{tier}', 'starter').replaceAll('{email}', 'a%40example.com'),
    ' (with {tier} and {email} placeholders)');
  return raw;
}

function publicUrlFromEnv(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  httpUrl('PUBLIC_URL', raw);
  return raw.replace(/\/+$/, '');
}

function nodeIdFromEnv(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(raw)) throw new Error(`NODE_ID must be 1 to 64 letters, digits, '.', '_', ':' or '-', got ${JSON.stringify(raw)}`);
  return raw;
}

/** The default NODE_ID: the host and its data directory, so a node restarted takes its own claims back at once. */
export function defaultNodeId(dataDir: string): string {
  return `${hostname()}:${createHash('sha256').update(resolvePath(dataDir)).digest('hex').slice(0, 8)}`;
}

function simStallFromEnv(raw: string | undefined): string[] {
  const books = (raw ?? '').split(',').map((b) => b.trim()).filter((b) => b !== '');
  const bad = books.filter((b) => bookByKey(b) === undefined);
  if (bad.length > 0) throw new Error(`SIM_STALL names unknown book key(s) ${bad.join(', ')}`);
  return books;
}

function webhookConfigFromEnv(env: NodeJS.ProcessEnv): Partial<WebhookConfig> {
  const out: Partial<WebhookConfig> = { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE === '1' || env.WEBHOOK_ALLOW_PRIVATE === 'true' };
  const delays = env.WEBHOOK_RETRY_DELAYS_MS;
  if (delays !== undefined && delays !== '') {
    const list = delays.split(',').map((x) => Number(x.trim()));
    if (list.length > 9 || list.some((n) => !Number.isInteger(n) || n < 0 || n > 86_400_000)) {
      throw new Error(`WEBHOOK_RETRY_DELAYS_MS must be a comma-separated list of up to 9 delays in ms, got ${JSON.stringify(delays)}`);
    }
    out.retryDelaysMs = list;
  }
  if (env.SMTP_URL) {
    if (!/^smtps?:\/\/[^/\s]+/.test(env.SMTP_URL)) throw new Error(`SMTP_URL must be smtp://host[:port] or smtps://host[:port], got ${JSON.stringify(env.SMTP_URL.replace(/\/\/[^@/]*@/, '//'))}`);
    out.smtpUrl = env.SMTP_URL;
  }
  if (env.SMTP_FROM) out.mailFrom = env.SMTP_FROM;
  if (env.WEBHOOK_RETENTION_DAYS) out.retentionMs = envInt(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650) * 86_400_000;
  return out;
}

export interface RunningApp {
  port: number;
  services: Services;
  /** keys generated at this start, printed once */
  firstStart: { adminKey: string | null; demoKey: string | null };
  /** the connector of FEED=theoddsapi, null when it does not run */
  theOddsApi: TheOddsApiFeed | null;
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

/** The admin key (unless ADMIN_KEY gives it) and a demo key, made at the first start. They are written to
 *  DATA_DIR/first-start-keys.txt (mode 600) before the database marks them issued: a start that fails after this
 *  point (a port in use) leaves them in the file, and one that fails before it makes them again next time; either
 *  way they are never issued without a copy the owner can read. */
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
    }
  }
  let demoKey: string | null = null;
  if ((await getSetting(db, 'demo_key_issued')) === null) demoKey = (await accounts.create({ tier: 'business', email: null })).key;
  if (adminKey === null && demoKey === null) return { adminKey, demoKey };
  mkdirSync(cfg.dataDir, { recursive: true });
  writeFileSync(join(cfg.dataDir, 'first-start-keys.txt'),
    `${adminKey !== null ? `admin key: ${adminKey}\n` : ''}${demoKey !== null ? `demo key (business): ${demoKey}\n` : ''}`, { mode: 0o600 });
  if (adminKey !== null) {
    accounts.setAdminKey(adminKey);
    await setSetting(db, 'admin_key_hash', hashKey(adminKey));
  }
  if (demoKey !== null) await setSetting(db, 'demo_key_issued', new Date().toISOString());
  return { adminKey, demoKey };
}

export async function startApp(cfg: Config): Promise<RunningApp> {
  const now = cfg.now ?? Date.now;
  const unlock = lockDataDir(cfg.dataDir);
  let db: Database;
  try {
    db = await openDatabase({ databaseUrl: cfg.databaseUrl, dataDir: cfg.dataDir, schema: cfg.schema, dropSchemaOnClose: cfg.dropSchemaOnClose, log: cfg.log });
  } catch (e) {
    unlock();
    throw e;
  }
  const cleanups: (() => Promise<void>)[] = [async () => unlock(), () => db.close()];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  };
  try {
    const trusted = new TrustedProxies(cfg.trustedProxies ?? '');
    await migrate(db);
    const watch = new DatabaseWatch(db, cfg.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS, cfg.log);
    watch.start();
    cleanups.push(async () => watch.close());
    const accounts = new Accounts(db, now);
    await accounts.load();
    const firstStart = await bootstrapKeys(db, accounts, cfg);
    accounts.startFlushing(1000);
    cleanups.push(() => accounts.close());

    const hub = new Hub(cfg.shards, now, { analytics: cfg.analytics !== false });
    await hub.start();
    cleanups.push(() => hub.close());
    // quotes age without updates, and games start: once a second (Hub.tick)
    // every 250 ms: quotes past their stale threshold leave consensus and middles, and a started game's pregame quotes
    // every view, at most that long after (the other views check per request); about 1 % of a core more than once a
    // second with the simulator running
    const ticker = setInterval(() => hub.tick(), cfg.tickMs ?? TICK_MS);
    ticker.unref();
    cleanups.push(async () => clearInterval(ticker));

    let hubRef: Hub | null = hub;
    const metrics = new Metrics(() => hubRef);
    metrics.watchDatabase(() => db.restarts());
    cleanups.push(async () => { hubRef = null; });

    // NATS: one connection. With CLUSTER=1 the node replays the stream before anything else subscribes to the
    // hub (webhooks, history, status see only what is applied live: a late node does not announce old changes)
    const simulated = cfg.feeds.includes('sim');
    // headers of every response; a cluster node that applies another node's simulator batches adds the label
    // simulated, real upstream (theoddsapi), or both: the label of every response while those feeds run
    const dataSource = dataSourceHeader(cfg.feeds);
    const commonHeaders: [string, string][] = dataSource === null ? [] : [['X-Data-Source', dataSource]];
    const label: { simulated: boolean; services: Services | null } = { simulated, services: null };
    let nc: NatsConnection | null = null;
    let cluster: Cluster | null = null;
    let natsLink: NatsLink | undefined;
    if (cfg.nats) {
      const conn = nc = await connectNats(cfg.nats);
      cleanups.push(() => conn.close());
      natsLink = new NatsLink(conn, now, metrics.registry);
      if (cfg.nats.cluster) {
        const c = cluster = new Cluster(conn, {
          hub, log: cfg.log, registry: metrics.registry,
          onSimulated: () => {
            if (label.simulated) return;
            label.simulated = true;
            if (label.services !== null) label.services.simulated = true;
            const h = commonHeaders.find((x) => x[0] === 'X-Data-Source');
            if (h === undefined) commonHeaders.push(['X-Data-Source', 'simulated']);
            else if (!h[1].includes('simulated')) h[1] = `simulated, ${h[1]}`;
          },
        }, cfg.nats);
        cleanups.push(() => c.close());
        await c.start();
        const keys = new KeySync(conn, accounts, `${cfg.nats.prefix}.keys`, cfg.nats.nodeId, cfg.log);
        keys.start();
        // announcements published while the connection was down are lost: read the keys again once it is back
        natsLink.onReconnect = () => {
          void accounts.resync().catch((e: unknown) => cfg.log?.(`key sync: reading the keys again after a NATS outage failed: ${String(e)}`));
        };
        cleanups.push(() => keys.close());
      }
    }

    const services: Services = {
      hub, accounts, db, metrics, now, simulated: label.simulated,
      ingest: cluster !== null ? (b, t, opts) => cluster.submit(b, t, opts) : (b, t, opts) => hub.ingest(b, t, opts?.source),
      cluster: cluster ?? undefined,
      natsLink,
      feed: cfg.feeds.length === 0 ? 'none' : cfg.feeds.join(','),
      startedAt: now(),
      version: VERSION,
    };
    label.services = services;

    // a cluster node cut off from NATS no longer follows the stream: what it would judge of the books' freshness (the
    // webhook checks, the status samples) is its own stale view
    const following = (): boolean => cluster === null || natsLink === undefined || natsLink.connected;
    const webhooks = new WebhookService({ hub, accounts, db, now, feed: services.feed, log: cfg.log, registry: metrics.registry, simulated: () => services.simulated, following },
      { ...DEFAULT_WEBHOOK_CONFIG, nodeId: cfg.nodeId ?? defaultNodeId(cfg.dataDir), closeArbsAtShutdown: cfg.nats?.cluster !== true, ...cfg.webhooks });
    await webhooks.start();
    cleanups.push(() => webhooks.close());
    services.webhooks = webhooks;

    const history = new HistoryService({
      hub, db, now, log: cfg.log,
      onCapture: (meta) => services.exports?.cache.invalidate(meta.sport, meta.commence),
    }, { ...DEFAULT_HISTORY_CONFIG, ...cfg.history });
    await history.start();
    cleanups.push(() => history.close());
    services.history = history;

    const status = new StatusService({ hub, db, now, log: cfg.log, following }, { ...DEFAULT_STATUS_CONFIG, ...cfg.status });
    status.start();
    cleanups.push(() => status.close());
    services.status = status;
    if (simulated) status.expected = SIM_BOOKS.map((b) => b.key);
    status.simulated = () => services.simulated;
    for (const b of cfg.simStall ?? []) status.stalled.add(b);

    let listenPort = cfg.port;
    const pool = new WorkPool();
    cleanups.push(() => pool.close());
    // one directory per database schema: test apps sharing a DATA_DIR keep apart
    const cache = new ExportCache({
      dir: join(cfg.dataDir, 'export-cache', cfg.schema ?? 'public'),
      ttlMs: cfg.exportCache?.ttlMs ?? EXPORT_CACHE_TTL_MS,
      maxBytes: cfg.exportCache?.maxBytes ?? 1024 * 1048576,
      maxEntries: cfg.exportCache?.maxEntries,
      now,
    });
    cleanups.push(async () => cache.close());
    const admission = new Admission({ ...DEFAULT_ADMISSION, queries: db.kind === 'embedded' ? 1 : 2, ...cfg.historical });
    services.exports = { pool, cache, admission };

    const router = new Router({
      accounts,
      now,
      trustedProxies: trusted,
      watch,
      headers: commonHeaders,
      onResponse: (route, code, ms) => {
        metrics.observe(route, code, ms);
        status.rate.record(now());
      },
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
      ...calcRoutes(),
      // an ingest is acknowledged once the webhook events its batch produced are in the outbox
      ...ingestRoutes(services).map((r) => (r.path !== '/v1/ingest' ? r : {
        ...r,
        // CLUSTER=1: the stream's own bound on applying the batch (its 503 says so) is not the database's
        extraWaitMs: cluster !== null ? cfg.nats?.applyTimeoutMs : undefined,
        handle: async (ctx: Parameters<typeof r.handle>[0]) => {
          const reply = await r.handle(ctx);
          await webhooks.settled();
          return reply;
        },
      })),
      ...adminRoutes(services),
      ...webhookRoutes(services, webhooks),
      ...metaRoutes(services, router),
      ...statusRoutes(services, status),
      ...coverageRoutes(services, admission),
      ...statusPageRoutes(),
      ...usageRoutes(() => router.routes),
      ...keyRoutes(services),
      ...agentRoutes(services, {
        publicUrl: () => cfg.publicUrl ?? `http://${cfg.host === '0.0.0.0' || cfg.host === '::' ? '127.0.0.1' : cfg.host}:${listenPort}`,
        checkoutUrlTemplate: cfg.checkoutUrlTemplate ?? null,
        smtpUrl: cfg.webhooks?.smtpUrl ?? null,
        mailFrom: cfg.webhooks?.mailFrom ?? DEFAULT_WEBHOOK_CONFIG.mailFrom,
        log: cfg.log,
      }),
      ...historicalRoutes(services, services.exports),
    );
    const app = uWS.App();
    const streams = new Streams(services, { ...DEFAULT_LIMITS, ...cfg.streams }, cfg.log);
    metrics.watchStreams(() => streams.closes, () => streams.snapshotReuse, () => streams.channelCount);
    streams.mount(app);
    cleanups.push(async () => streams.close());
    router.mount(app);
    const listen = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      listenExclusive(app, cfg.host, cfg.port, (ls) => (ls ? resolve(ls) : reject(new Error(`cannot listen on ${cfg.host}:${cfg.port} (is another process on it?)`))));
    });
    const port = uWS.us_socket_local_port(listen);
    listenPort = port;
    let listening = true;
    const stopListening = () => {
      if (listening) uWS.us_listen_socket_close(listen);
      listening = false;
    };
    cleanups.push(async () => stopListening());
    await assertNative(port);

    let theOddsApi: TheOddsApiFeed | null = null;
    if (cfg.feeds.includes('theoddsapi')) {
      if (cfg.theOddsApi === undefined) throw new Error('FEED=theoddsapi needs its settings (THE_ODDS_API_KEY, THE_ODDS_API_SPORTS, ...)');
      const feed = theOddsApi = new TheOddsApiFeed(cfg.theOddsApi, {
        // the ingest path of POST /v1/ingest: applied, then the batch's parser.degraded judged (settled() does it at
        // once) and its webhook events committed in the background: nobody waits for an acknowledgement here, and a
        // database that stops answering must not stop the feed's next polls, and their prices, with it
        ingest: async (batch, t) => {
          const r = await services.ingest(batch, t, { source: 'theoddsapi' });
          webhooks.settled().catch((e: unknown) => cfg.log?.(`theoddsapi: webhook events not committed: ${String(e)}`));
          return r;
        },
        poller: status.poller('theoddsapi'),
        now,
        log: cfg.log,
      });
      feed.start();
      cleanups.push(() => feed.stop());
    }
    if (nc !== null && cfg.nats) {
      // in a cluster the nodes share the subscription as a queue group: one node takes a batch, the stream gives it to all
      const ni = new NatsIngest(nc, {
        hub, now, log: cfg.log, registry: metrics.registry,
        ingest: services.ingest,
        settled: () => webhooks.settled(),
      }, `${cfg.nats.prefix}.ingest.*`, cfg.nats.cluster ? `${cfg.nats.prefix}.ingest` : null);
      ni.start();
      cleanups.push(() => ni.close());
      services.natsIngest = ni;
    }
    if (cfg.nats) {
      const n = cfg.nats;
      status.nats = () => ({
        url: n.url.replace(/\/\/[^@/]*@/, '//'), node_id: n.nodeId,
        connection: natsLink?.snapshot() ?? null,
        ingest: services.natsIngest?.snapshot() ?? null,
        cluster: services.cluster?.snapshot() ?? null,
      });
    }

    if (simulated) cleanups.push(await startSimulator(services, cfg, now, status));

    return {
      port,
      services,
      firstStart,
      theOddsApi,
      // new connections are refused, requests on kept-alive ones answered 503, and those already taken answered,
      // before any service behind them closes
      close: async () => {
        stopListening();
        await router.drain(DRAIN_MS);
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** Drives the simulator from a timer: a full snapshot first, then SIM_RATE observations per second in 10 steps. */
/** how long a shutdown waits for the requests already taken to be answered */
const DRAIN_MS = 10_000;

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT. Without it the listen socket takes SO_REUSEPORT, so a second instance
 *  started on a port in use listens beside the first and the kernel splits connections between them: half of a
 *  client's requests reach a process that does not know its key (INVALID_KEY). With it the second start fails. */
const LISTEN_EXCLUSIVE_PORT = 1;

/** app.listen(host, port, options, cb): the native binding takes the options after the port; its type declarations
 *  list the options only without a host. */
function listenExclusive(app: uWS.TemplatedApp, host: string, port: number, cb: (ls: uWS.us_listen_socket | false) => void): void {
  (app.listen as unknown as (h: string, p: number, o: number, f: typeof cb) => void).call(app, host, port, LISTEN_EXCLUSIVE_PORT, cb);
}

async function startSimulator(s: Services, cfg: Config, now: () => number, status: StatusService): Promise<() => Promise<void>> {
  const sim = new Simulator({ seed: cfg.simSeed, now: now() });
  // the feed reports through the poller interface; stalled books are left out of what it sends and of its pulses
  const poller = status.poller('sim');
  const send = async (batch: IngestBatch, t: number) => {
    if (status.stalled.size > 0) batch = { ...batch, prices: batch.prices.filter((p) => !status.stalled.has(p.book)) };
    try {
      await s.ingest(batch, t, { simulated: true, source: 'sim' });
      poller.pulse(t, SIM_BOOKS.filter((b) => !status.stalled.has(b.key)).map((b) => b.key));
    } catch (e) {
      poller.failure(t, e instanceof Error ? e.message : String(e));
      throw e;
    }
  };
  await send(sim.snapshot(now()), now());
  const perTick = Math.max(1, Math.round(cfg.simRate / 10));
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(() => {
      if (stopped) return;
      const t = now();
      if (!poller.canPoll(t)) return;
      return send(sim.step(t, perTick), t).catch((e: unknown) => cfg.log?.(`simulator batch failed: ${String(e)}`));
    });
  }, 100);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
