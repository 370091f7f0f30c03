// Process entry: `npm start`. Reads the environment (DESIGN.md section 4), starts the service, prints the
// banner (with the keys made at the first start), and shuts down cleanly on SIGINT/SIGTERM.

import { join } from 'node:path';
import pino from 'pino';
import { configFromEnv, defaultNodeId, startApp } from './app.js';
import { envInt } from './env.js';
import { feedBanner } from './feeds.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const level = process.env.LOG_LEVEL || 'info';
if (!LEVELS.includes(level)) {
  process.stderr.write(`LOG_LEVEL must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(level)}\n`);
  process.exit(1);
}
const log = pino({ level });

async function main(): Promise<void> {
  // a shutdown that does not finish (a database that stopped answering: the last writes wait on it for ever) ends
  // the process anyway, with a line saying so, rather than leave it half stopped and never exiting
  const bound = envInt(process.env, 'SHUTDOWN_TIMEOUT_MS', 60_000, 1000, 600_000);
  const cfg = configFromEnv(process.env);
  cfg.log = (msg) => log.error(msg);
  const app = await startApp(cfg);
  const s = app.services;
  const base = `http://127.0.0.1:${app.port}`;
  const lines = [
    `linewire ${s.version} listening on ${cfg.host}:${app.port}`,
    `  feed: ${feedBanner(cfg.feeds)}`,
    `  database: ${s.db.kind === 'embedded' ? `embedded PGlite in ${join(cfg.dataDir, 'pg')}` : `PostgreSQL (DATABASE_URL)${s.db.schema !== 'public' ? `, schema ${s.db.schema}` : ''}`}`,
    `  shards: ${cfg.shards}`,
    `  node: ${cfg.nats?.nodeId ?? cfg.nodeId ?? defaultNodeId(cfg.dataDir)}`,
  ];
  if (cfg.nats) {
    lines.push(`  nats: ingest on ${cfg.nats.prefix}.ingest.<sport_key>${cfg.nats.cluster ? `; cluster node ${cfg.nats.nodeId} on stream ${cfg.nats.stream} (caught up: ${s.cluster?.counters.replayed ?? 0} messages replayed)` : ''}`);
  }
  if (cfg.webhooks?.allowPrivate) lines.push('  WEBHOOK_ALLOW_PRIVATE=1: webhooks may target loopback and private addresses over http (local testing only)');
  const { adminKey, demoKey } = app.firstStart;
  if (adminKey !== null || demoKey !== null) {
    lines.push('', '  First start: these keys are shown once (also written to DATA_DIR/first-start-keys.txt, mode 600).');
    if (adminKey !== null) lines.push(`  admin key:          ${adminKey}`);
    if (demoKey !== null) lines.push(`  demo key (business): ${demoKey}`);
  }
  const key = demoKey ?? '<your key>';
  lines.push('', '  Try:', `  curl '${base}/v1/sports'`, `  curl '${base}/v1/sports/basketball_nba/odds?regions=us&markets=h2h,spreads&apiKey=${key}'`, '');
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error({ bound_ms: bound }, `shutdown did not finish within ${bound} ms (a database not answering?): exiting without it`);
      process.exit(1);
    }, bound).unref();
    app.close().then(() => process.exit(0), (e: unknown) => {
      log.error({ err: e }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: unknown) => {
  log.fatal({ err: e }, e instanceof Error ? e.message : String(e));
  process.exit(1);
});
