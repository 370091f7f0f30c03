// Cluster benchmark (issue 9), against a single node measured in the same run. Needs NATS_URL (a NATS server
// with JetStream); skipped with the reason without it. Every node is `npm start`'s entry in a process of its own
// (SHARDS=1, FEED=none, an embedded database of its own); the stream and subjects are this run's own and the
// stream is deleted at the end.
// 1. Throughput: batches of 1,000 price updates POSTed to node A, 4 in flight, until 200,000 are applied:
//    updates/s applied on A alone (no cluster), and with CLUSTER=1 on A and on B (the second consuming node:
//    the time until its stream position reaches A's last publish).
// 2. Latency: 500 single-price ingests on node A at 50/s, each timed from the POST to the WebSocket frame that
//    carries it on /v1/ws/odds-fast: A alone (A's own socket), and in the cluster on A's socket and on B's.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { pack } from 'msgpackr';
import WebSocket from 'ws';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { uniform } from '../engine/prng.js';

const ADMIN = 'bench-admin-key-0123456789';
const EVENTS = 200;
const BOOKS = ['draftkings', 'fanduel', 'betmgm', 'williamhill_us', 'betrivers', 'pinnacle', 'bovada', 'betonlineag'];
const BATCH = 1000;
const TOTAL = Number(process.env.BENCH_CLUSTER_UPDATES ?? 200_000);
const IN_FLIGHT = 4;
const SAMPLES = Number(process.env.BENCH_CLUSTER_SAMPLES ?? 500);

interface Node { base: string; child: ChildProcess; dir: string; key: string }

async function startNode(env: Record<string, string>): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), 'lw-bench-cluster-'));
  const child = spawn(process.execPath, [new URL('../http/main.js', import.meta.url).pathname], {
    env: { ...process.env, FEED: 'none', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, SHARDS: '1', LOG_LEVEL: 'warn', ADMIN_KEY: ADMIN, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on [^:]+:(\d+)/.exec(out);
      if (m !== null && out.includes('Try:')) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`node exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const res = await fetch(`${base}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ tier: 'scale' }) });
  return { base, child, dir, key: ((await res.json()) as { key: string }).key };
}

async function stopNode(n: Node): Promise<void> {
  await new Promise<void>((resolve) => {
    n.child.once('exit', () => resolve());
    n.child.kill('SIGTERM');
  });
  rmSync(n.dir, { recursive: true, force: true });
}

const events = Array.from({ length: EVENTS }, (_, i) => ({
  id: `bc_${i}`, sport_key: 'basketball_nba', commence_time: Date.now() + 86_400_000, home_team: `Home ${i}`, away_team: `Away ${i}`,
}));

function batches(seed: number): Uint8Array[] {
  const r = uniform(seed);
  const out: Uint8Array[] = [];
  for (let b = 0; b < TOTAL / BATCH; b++) {
    const prices = [];
    for (let i = 0; i < BATCH; i++) {
      const e = events[Math.floor(r() * EVENTS)];
      prices.push({ book: BOOKS[Math.floor(r() * BOOKS.length)], event_id: e.id, market: 'h2h', outcome: r() < 0.5 ? e.home_team : e.away_team, price: 1.5 + Math.round(r() * 200) / 100 });
    }
    out.push(pack({ prices }));
  }
  return out;
}

function post(n: Node, body: Uint8Array | string): Promise<Response> {
  const msgpack = typeof body !== 'string';
  return fetch(`${n.base}/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': msgpack ? 'application/msgpack' : 'application/json' },
    body,
  });
}

async function metric(n: Node, name: string): Promise<number> {
  const text = await (await fetch(`${n.base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

/** all batches POSTed to `a`, IN_FLIGHT at a time; seconds until a answered the last, and until `b` applied as far */
async function throughput(a: Node, b: Node | null, list: Uint8Array[]): Promise<{ a: number; b: number | null }> {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const res = await post(a, list[next++]);
      if (res.status !== 202) throw new Error(`ingest ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const ta = (performance.now() - t0) / 1000;
  if (b === null) return { a: ta, b: null };
  const target = await metric(a, 'linewire_cluster_applied_seq');
  while (await metric(b, 'linewire_cluster_applied_seq') < target) await new Promise((r) => setTimeout(r, 5));
  return { a: ta, b: (performance.now() - t0) / 1000 };
}

/** single-price ingests on `a` at 50/s, timed to the frame that carries each on every socket of `watch` */
async function latency(a: Node, watch: Node[]): Promise<{ p50: number; p99: number }[]> {
  const hists = watch.map(() => createHistogram());
  const sent = new Map<number, number>();
  const sockets = await Promise.all(watch.map((n, i) => new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`${n.base.replace('http', 'ws')}/v1/ws/odds-fast/basketball_nba?apiKey=${n.key}&bookmakers=pinnacle`);
    ws.on('message', (data: Buffer) => {
      const now = performance.now();
      const f = JSON.parse(data.toString()) as { type: string; changes?: { price: number; book: string }[] };
      for (const c of f.changes ?? []) {
        const at = sent.get(Math.round(c.price * 1000));
        if (at !== undefined && c.book === 'pinnacle') hists[i].record(Math.max(1, Math.round((now - at) * 1e6)));
      }
    });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  })));
  const e = events[0];
  for (let i = 0; i < SAMPLES; i++) {
    const price = 1.5 + ((i % 1000) + 1) / 1000 + (i % 2 === 0 ? 0 : 1);
    sent.set(Math.round(price * 1000), performance.now());
    void post(a, JSON.stringify({ prices: [{ book: 'pinnacle', event_id: e.id, market: 'h2h', outcome: e.home_team, price }, { book: 'pinnacle', event_id: e.id, market: 'h2h', outcome: e.away_team, price: 2.2 }] })).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 1000));
  for (const ws of sockets) ws.close();
  return hists.map((h) => ({ p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6 }));
}

async function main(): Promise<void> {
  const url = process.env.NATS_URL;
  if (!url) {
    console.log('skipped: NATS_URL is not set (a NATS server with JetStream, e.g. nats://127.0.0.1:4222)');
    return;
  }
  const tag = randomBytes(4).toString('hex');
  const natsEnv = { NATS_URL: url, NATS_SUBJECT_PREFIX: `lwbench.${tag}`, NATS_STREAM: `LWBENCH_${tag}` };
  const list = batches(1);
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  const rows: Record<string, string | number>[] = [];
  const nc = await connect({ servers: url });
  try {
    // single node: NATS_URL unset, the batches applied as POSTed
    {
      const a = await startNode({});
      await post(a, JSON.stringify({ events }));
      const tp = await throughput(a, null, list);
      const [lat] = await latency(a, [a]);
      rows.push({ setup: 'single node (A)', 'updates/s on A': Math.round(TOTAL / tp.a), 'updates/s on B': '-', 'A ingest -> A frame p50 ms': lat.p50.toFixed(2), 'p99 ms': lat.p99.toFixed(2), 'A ingest -> B frame p50 ms': '-', 'B p99 ms': '-' });
      await stopNode(a);
    }
    {
      const a = await startNode({ ...natsEnv, CLUSTER: '1', NODE_ID: 'bench-a' });
      const b = await startNode({ ...natsEnv, CLUSTER: '1', NODE_ID: 'bench-b' });
      await post(a, JSON.stringify({ events }));
      const tp = await throughput(a, b, list);
      const [la, lb] = await latency(a, [a, b]);
      rows.push({ setup: 'cluster (A publishes, A and B apply)', 'updates/s on A': Math.round(TOTAL / tp.a), 'updates/s on B': Math.round(TOTAL / tp.b!), 'A ingest -> A frame p50 ms': la.p50.toFixed(2), 'p99 ms': la.p99.toFixed(2), 'A ingest -> B frame p50 ms': lb.p50.toFixed(2), 'B p99 ms': lb.p99.toFixed(2) });
      await stopNode(b);
      await stopNode(a);
    }
  } finally {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(natsEnv.NATS_STREAM).catch(() => undefined);
    await nc.close();
  }
  console.log(`\nthroughput: ${TOTAL.toLocaleString('en-US')} updates in batches of ${BATCH} (${IN_FLIGHT} in flight) over ${EVENTS} NBA events; latency: ${SAMPLES} single-price ingests at 50/s to /v1/ws/odds-fast; SHARDS=1 per node`);
  console.table(rows);
  console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average at start ${load}`);
}

await main();
