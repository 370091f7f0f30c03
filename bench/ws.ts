// WebSocket benchmarks (issue 4), clients in a child process (bench/lib/ws-clients.ts), each against a baseline
// measured in the same run:
// 1. Fan-out: 1,000 clients on /v1/ws/odds-fast/basketball_nba with the simulator at full rate: deliveries/s
//    and latency (publish to arrival, and ingest to arrival), against a plain uWebSockets.js server broadcasting
//    the same frames at the same rate.
// 2. Slow-consumer isolation: p99 of the reading clients with 10 % of the clients not reading, against none.
// 3. Connection storm: 100 clients reading while 1,000 more connect at once, against the same 100 with no storm.
// 4. Memory: server RSS per idle connection, and with 100 clients that stop reading.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import uWS from 'uWebSockets.js';
import { startApp } from '../http/app.js';

const CLIENTS = Number(process.env.BENCH_WS_CLIENTS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const script = new URL('./lib/ws-clients.js', import.meta.url).pathname;

interface Report {
  frames: number;
  bytes: number;
  seconds: number;
  publish: { p50: number | null; p99: number | null };
  ingest: { p50: number | null; p99: number | null; max?: number | null };
}

interface Storm {
  clients: number;
  /** ms from the storm's start until a client had its snapshot */
  p50: number | null;
  p99: number | null;
  last: number | null;
}

/** `count` clients connecting at once, until each has its snapshot */
function storm(url: string, count: number): Promise<Storm> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify({ url, count, slow: 0, seconds: 0, ingestClock: true, storm: true })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve((JSON.parse(out.trim().split('\n').at(-1)!) as { storm: Storm }).storm));
  });
}

/** runs the clients; `during` runs once they are all connected */
function clients(url: string, count: number, slow: number, during?: () => void, ingestClock = true): Promise<Report> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify({ url, count, slow, seconds: SECONDS, ingestClock })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buf.slice(0, nl)) as { ready?: true } & Report;
        buf = buf.slice(nl + 1);
        if (msg.ready) during?.();
        else resolve(msg);
      }
    });
    child.on('error', reject);
  });
}

const ms = (x: number | null) => (x === null ? '-' : x.toFixed(2));

/** `npm start`'s entry in a process of its own, on a free port and a fresh data directory */
async function serverProcess(feed: string): Promise<{ port: string; key: string; rss(): number; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'lw-bench-'));
  const child = spawn(process.execPath, [new URL('../http/main.js', import.meta.url).pathname], {
    // the clients share the demo key: past its tier's open streams (business, 50) they would be refused 4029
    env: { ...process.env, FEED: feed, SIM_RATE: '2000', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, SHARDS: '1', LOG_LEVEL: 'warn', WS_MAX_STREAMS: '100000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const banner = await new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Try:')) resolve(out);
    });
  });
  return {
    port: /listening on [^:]+:(\d+)/.exec(banner)![1],
    key: /demo key \(business\): (\S+)/.exec(banner)![1],
    rss: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lw-bench-'));
  const app = await startApp({ host: '127.0.0.1', port: 0, dataDir, feeds: ['sim'], simSeed: 1, simRate: 2000, shards: 1, streams: { maxStreams: 100_000 } });
  try {
    const key = app.firstStart.demoKey!;
    const url = `ws://127.0.0.1:${app.port}/v1/ws/odds-fast/basketball_nba?apiKey=${key}`;
    console.log(`WebSocket fan-out: ${CLIENTS} clients on /v1/ws/odds-fast/basketball_nba, simulator at 2,000 updates/s, ${SECONDS} s each`);
    console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);

    // capture one delta frame and the rate, for the baseline
    const sample = await new Promise<{ frame: string; rate: number }>((resolve) => {
      const probe = spawn(process.execPath, ['-e', `
        const WebSocket = require(${JSON.stringify(new URL('../../node_modules/ws/index.js', import.meta.url).pathname)});
        const ws = new WebSocket(${JSON.stringify(url)}); let n = 0, first = null; const t0 = Date.now();
        ws.on('message', (d) => { const s = d.toString(); if (s.startsWith('{"type":"delta"')) { n++; first ??= s; } });
        setTimeout(() => { process.stdout.write(JSON.stringify({ frame: first, rate: n / 3 })); process.exit(0); }, 3000);
      `], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      probe.stdout.on('data', (d: Buffer) => (out += d.toString()));
      probe.on('close', () => resolve(JSON.parse(out) as { frame: string; rate: number }));
    });

    const ours = await clients(url, CLIENTS, 0);
    const withSlow = await clients(url, CLIENTS, Math.round(CLIENTS / 10));

    // baseline: plain uWebSockets.js publishing the same frame (fresh pt) at the same rate
    const plain = uWS.App();
    plain.ws('/*', { open: (ws) => void ws.subscribe('all'), maxBackpressure: 64 * 1024 * 1024 });
    const ls = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
      plain.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen failed')))));
    const interval = Math.max(1, Math.round(1000 / Math.max(1, sample.rate)));
    let timer: NodeJS.Timeout | null = null;
    const base = await clients(`ws://127.0.0.1:${uWS.us_socket_local_port(ls)}/`, CLIENTS, 0, () => {
      timer = setInterval(() => plain.publish('all', sample.frame.replace(/"pt":\d+/, `"pt":${Date.now()}`)), interval);
    }, false);
    if (timer !== null) clearInterval(timer);
    uWS.us_listen_socket_close(ls);

    const row = (name: string, r: Report, b: Report | null) => ({
      setup: name,
      'deliveries/s': Math.round(r.frames / r.seconds).toLocaleString('en-US'),
      'MB/s': (r.bytes / r.seconds / 1e6).toFixed(1),
      'publish->arrival p50 ms': ms(r.publish.p50),
      'p99 ms': ms(r.publish.p99),
      'ingest->arrival p50 ms': ms(r.ingest.p50),
      'ingest p99 ms': ms(r.ingest.p99),
      'vs baseline': b === null ? '100 %' : `${Math.round((r.frames / b.frames) * 100)} %`,
    });
    console.log(`deltas on the channel: about ${sample.rate.toFixed(1)}/s, ${sample.frame.length.toLocaleString('en-US')} bytes each`);
    console.table([
      row('baseline: plain uWebSockets.js publish of the same frames', base, null),
      row(`linewire odds-fast, ${CLIENTS} reading clients`, ours, base),
      row(`linewire odds-fast, ${CLIENTS - Math.round(CLIENTS / 10)} reading + ${Math.round(CLIENTS / 10)} not reading`, withSlow, base),
    ]);

    // a connection storm: the deltas of 100 clients already reading, while 1,000 more connect at once
    const STORM_READERS = 100;
    const calm = await clients(url, STORM_READERS, 0);
    let stormed: Promise<Storm> | null = null;
    const during = await clients(url, STORM_READERS, 0, () => void (stormed = storm(url, CLIENTS)));
    const st = await stormed!;
    const stormRow = (name: string, r: Report, s: Storm | null) => ({
      setup: name,
      'ingest->arrival p50 ms': ms(r.ingest.p50),
      'p99 ms': ms(r.ingest.p99),
      'max ms': ms(r.ingest.max ?? null),
      'storm: snapshots p50 / p99 / last ms': s === null ? '-' : `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.last)} (${s.clients} clients)`,
    });
    console.log(`connection storm: ${STORM_READERS} reading clients on the same channel, ${SECONDS} s; ${CLIENTS} more connect at once as they start`);
    console.table([
      stormRow(`baseline: ${STORM_READERS} reading clients, no storm`, calm, null),
      stormRow(`${STORM_READERS} reading clients while ${CLIENTS} connect`, during, st),
    ]);

    // memory, each on a server process of its own, its RSS read from /proc: idle connections on a server with no
    // feed, then 100 clients that stop reading on a server running the simulator (peak over the run)
    let idleBefore = 0;
    let idleAt = 0;
    {
      const quiet = await serverProcess('none');
      try {
        idleBefore = quiet.rss();
        await clients(`ws://127.0.0.1:${quiet.port}/v1/ws/odds-fast/basketball_nba?apiKey=${quiet.key}`, CLIENTS, 0,
          () => void setTimeout(() => (idleAt = quiet.rss()), SECONDS * 500));
      } finally {
        await quiet.stop();
      }
    }
    let stuckBefore = 0;
    let stuckPeak = 0;
    {
      const busy = await serverProcess('sim');
      try {
        await new Promise((r) => setTimeout(r, 2000));
        stuckBefore = busy.rss();
        let sampler: NodeJS.Timeout | null = null;
        await clients(`ws://127.0.0.1:${busy.port}/v1/ws/odds-fast/basketball_nba?apiKey=${busy.key}`, 100, 100,
          () => void (sampler = setInterval(() => (stuckPeak = Math.max(stuckPeak, busy.rss())), 250)));
        if (sampler !== null) clearInterval(sampler);
      } finally {
        await busy.stop();
      }
    }
    console.table([
      { measure: `server RSS per idle connection (${CLIENTS} on a server process with no feed)`, value: `${(((idleAt - idleBefore) * 1024 * 1024) / CLIENTS / 1024).toFixed(1)} KiB` },
      { measure: `server RSS peak growth with 100 clients not reading for ${SECONDS} s, simulator running (bound: 8 MiB each for 10 s, then closed)`, value: `${(stuckPeak - stuckBefore).toFixed(0)} MiB` },
    ]);
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
