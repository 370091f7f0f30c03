// Webhook benchmarks (issue 6), each against a baseline measured in the same run:
// 1. Deliveries per second to a loopback receiver at 1,000 subscriptions (Variant A arb_flagged): arbitrages
//    opened by one ingest fan out to every subscription through the durable outbox (one INSERT per batch of
//    events), the delivery worker (signing, address check, HTTP) and the batched outcome writes. Baseline: the
//    same number of signed POSTs made by the delivery worker's own HTTP code (workers/webhook-sender.ts attempt())
//    straight from memory at the same concurrency, with no outbox.
// 2. Delay from the price update that opens an arbitrage (POST /v1/ingest) to the receiver holding its
//    arb_flagged, p50/p99, one subscription. Baseline: the POST /v1/ingest round trip of a price update that
//    opens nothing (answered once the update is in the read model; an update that makes webhook events is
//    answered once they are in the outbox too, also shown).
// The receiver runs in a worker thread of its own, so the service's main thread does not also serve it; times on
// both sides are performance.timeOrigin + performance.now().

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startApp } from '../http/app.js';
import { attempt } from '../workers/webhook-sender.js';

const SUBS = Number(process.env.BENCH_SUBS ?? 1000);
const ARBS = Number(process.env.BENCH_ARBS ?? 20);
const LAT = Number(process.env.BENCH_LAT ?? 200);
const ADMIN = 'bench-admin-key-0123456789';

const RECEIVER = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
let count = 0, target = Infinity, last = 0;
const arrivals = new Map();
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    res.writeHead(200); res.end();
    count++; last = at;
    const tag = req.headers['x-bench-tag'];
    const body = Buffer.concat(chunks).toString();
    const m = /"match_id":"([^"]+)"/.exec(body);
    if (m && !arrivals.has(m[1])) { arrivals.set(m[1], at); parentPort.postMessage({ t: 'arrival', id: m[1], at }); }
    if (count >= target) { target = Infinity; parentPort.postMessage({ t: 'done', count, last }); }
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ t: 'port', port: server.address().port }));
parentPort.on('message', (m) => {
  if (m.t === 'expect') { target = count + m.n; if (count >= target) { target = Infinity; parentPort.postMessage({ t: 'done', count, last }); } }
  if (m.t === 'close') server.close(() => process.exit(0));
});
`;

interface Rx {
  url: string;
  expect(n: number): Promise<number>;
  arrival(id: string): Promise<number>;
  close(): void;
}

async function receiver(): Promise<Rx> {
  const w = new Worker(RECEIVER, { eval: true });
  const arrivals = new Map<string, (at: number) => void>();
  const early = new Map<string, number>();
  let done: ((last: number) => void) | null = null;
  const port = await new Promise<number>((resolve) => {
    w.on('message', (m: { t: string; port?: number; id?: string; at?: number; last?: number }) => {
      if (m.t === 'port') resolve(m.port!);
      if (m.t === 'arrival') {
        const f = arrivals.get(m.id!);
        if (f !== undefined) f(m.at!);
        else early.set(m.id!, m.at!);
      }
      if (m.t === 'done') done?.(m.last!);
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    expect: (n) => new Promise((resolve) => {
      done = resolve;
      w.postMessage({ t: 'expect', n });
    }),
    arrival: (id) => new Promise((resolve) => {
      const at = early.get(id);
      if (at !== undefined) resolve(at);
      else arrivals.set(id, resolve);
    }),
    close: () => w.postMessage({ t: 'close' }),
  };
}

const clock = () => performance.timeOrigin + performance.now();

function machine(): string {
  return `machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lw-bench-wh-'));
  const rx = await receiver();
  const app = await startApp({
    host: '127.0.0.1', port: 0, dataDir: dir, feeds: [], simSeed: 1, simRate: 1, adminKey: ADMIN, shards: 1,
    databaseUrl: process.env.BENCH_DATABASE_URL, schema: process.env.BENCH_DATABASE_URL ? `bench_wh_${process.pid}` : undefined,
    dropSchemaOnClose: process.env.BENCH_DATABASE_URL ? true : undefined,
    webhooks: { allowPrivate: true },
  });
  const base = `http://127.0.0.1:${app.port}`;
  const post = async (path: string, key: string, body: unknown) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  let n = 0;
  const arbBatch = (count: number) => {
    const now = Date.now();
    const events = [];
    const prices = [];
    for (let i = 0; i < count; i++) {
      const id = `bw_${++n}`;
      events.push({ id, sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: `Home ${n}`, away_team: `Away ${n}` });
      prices.push({ book: 'draftkings', event_id: id, market: 'h2h', outcome: `Home ${n}`, price: 2.2 });
      prices.push({ book: 'draftkings', event_id: id, market: 'h2h', outcome: `Away ${n}`, price: 1.6 });
      prices.push({ book: 'fanduel', event_id: id, market: 'h2h', outcome: `Home ${n}`, price: 1.6 });
      prices.push({ book: 'fanduel', event_id: id, market: 'h2h', outcome: `Away ${n}`, price: 2.2 });
    }
    return { events, prices, ids: events.map((e) => e.id) };
  };

  // 2. latency, one subscription
  const k0 = (await post('/v1/admin/keys', ADMIN, { tier: 'enterprise' })).key as string;
  await post('/v1/webhooks', k0, { url: rx.url, events: ['arb_flagged'] });
  const hIngest = createHistogram();
  const hArb = createHistogram();
  const hAck = createHistogram();
  for (let i = 0; i < LAT; i++) {
    const b = arbBatch(1);
    // the event first, its arbitrage-opening prices as the measured update
    await post('/v1/ingest', ADMIN, { events: b.events, prices: b.prices.slice(0, 3) });
    // baseline: an update of the same size that opens nothing (a repeated price: a verification)
    const tb = clock();
    await post('/v1/ingest', ADMIN, { prices: b.prices.slice(0, 1) });
    hIngest.record(Math.max(1, Math.round((clock() - tb) * 1000)));
    const arrival = rx.arrival(b.ids[0]);
    const t0 = clock();
    await post('/v1/ingest', ADMIN, { prices: b.prices.slice(3) });
    hAck.record(Math.max(1, Math.round((clock() - t0) * 1000)));
    const at = await arrival;
    hArb.record(Math.max(1, Math.round((at - t0) * 1000)));
  }
  for (const w of app.services.webhooks!.subs.values()) {
    await fetch(`${base}/v1/webhooks/${w.row.pk}`, { method: 'DELETE', headers: { 'x-api-key': k0 } });
  }

  // 1. throughput at SUBS subscriptions
  const keys: string[] = [];
  for (let i = 0; i < Math.ceil(SUBS / 100); i++) keys.push((await post('/v1/admin/keys', ADMIN, { tier: 'enterprise' })).key);
  for (let i = 0; i < SUBS; i++) await post('/v1/webhooks', keys[Math.floor(i / 100)], { url: rx.url, events: ['arb_flagged'] });
  const total = SUBS * ARBS;
  const got = rx.expect(total);
  const t1 = clock();
  await post('/v1/ingest', ADMIN, arbBatch(ARBS));
  const last = await got;
  const serviceRate = total / ((last - t1) / 1000);
  // wait until every outcome is recorded
  const sql = app.services.db.sql;
  for (;;) {
    const [{ n: done }] = await sql<{ n: string }[]>`select count(*) as n from webhook_deliveries where status = 'delivered'`;
    if (Number(done) >= total) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const recorded = clock();
  const recordedRate = total / ((recorded - t1) / 1000);

  // baseline: the worker's HTTP code alone, same concurrency (512 in flight), same bodies
  const body = JSON.stringify({ id: 'evt_x', event_type: 'arb_flagged', timestamp_ms: Date.now(), data: { sport_key: 'basketball_nba', match_id: 'x', home_team: 'H', away_team: 'A', market: 'h2h', edge_pct: 10, legs: [] } });
  const gotB = rx.expect(total);
  const t2 = clock();
  let next = 0;
  const lane = async () => {
    while (next < total) {
      next++;
      await attempt({ id: next, url: rx.url, body, secret: 'whsec_x', variant: 'A', eventType: 'arb_flagged', webhookId: '1', deliveryId: 'dlv_x', attempt: 1, replay: 0, timeoutMs: 10_000, allowPrivate: true });
    }
  };
  await Promise.all(Array.from({ length: 512 }, lane));
  const lastB = await gotB;
  const baseRate = total / ((lastB - t2) / 1000);

  await app.close();
  rx.close();
  rmSync(dir, { recursive: true, force: true });

  const ms = (h: ReturnType<typeof createHistogram>, p: number) => (h.percentile(p) / 1000).toFixed(2);
  process.stdout.write(`${machine()}; database: ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}\n`);
  console.table([
    {
      benchmark: `deliveries/s, ${SUBS} subscriptions x ${ARBS} arbitrages`,
      baseline: `sender's HTTP alone, no outbox: ${baseRate.toFixed(0)}/s`,
      linewire: `${serviceRate.toFixed(0)}/s to the receiver (${((serviceRate / baseRate) * 100).toFixed(0)} %); ${recordedRate.toFixed(0)}/s with every outcome recorded`,
    },
    {
      benchmark: `price update to arb_flagged at the receiver, 1 subscription, ${LAT} runs`,
      baseline: `POST /v1/ingest of a price that opens nothing: p50 ${ms(hIngest, 50)} / p99 ${ms(hIngest, 99)} ms`,
      linewire: `at the receiver p50 ${ms(hArb, 50)} / p99 ${ms(hArb, 99)} ms (the ingest's 202, after the outbox commit: p50 ${ms(hAck, 50)} / p99 ${ms(hAck, 99)} ms)`,
    },
  ]);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
