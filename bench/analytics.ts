// Analytics benchmarks (issue 3), each against a baseline measured in the same run:
// 1. One price update with every view kept current (store + incremental analytics + end of batch), against
//    recomputing the affected sport from scratch (engine/analytics.ts scratch()), at 10,000 events x 20 books x
//    3 markets, all one sport. Target: at least 100 times cheaper.
// 2. Ingest throughput through a shard to the read model with the analytics on, against the same with them off:
//    (a) random prices around a 4 % margin over 20 books of which 3 are sharps (about half of all quotes +EV:
//    a worst case for the EV bookkeeping), (b) the simulator's market through hub.ingest.
//    Target: the analytics cost at most 30 % of throughput. Off and on run in turn, BENCH_ROUNDS times each
//    (default 5): the table gives each one's best run, and the median and range of the ratios of runs paired in time.
//    (c) the simulator's market end to end through POST /v1/ingest (msgpack), the client in a process of its own.
//    And the shard's work alone: (a)'s workload applied in one thread with the analytics on or off (no main thread,
//    no messages), each run a process of its own; (d) the same for middles-heavy markets (each game's totals spread
//    over about 14 lines, one per book or a few books each: a price move changes several middles).
// 3. From a price update entering POST /v1/ingest to the arbitrage row it opens being visible over REST, p50/p99,
//    against a GET of the same endpoint alone.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { Analytics, scratch } from '../engine/analytics.js';
import { Simulator } from '../engine/simulator.js';
import type { IngestBatch } from '../engine/types.js';
import { sportByKey } from '../engine/catalogue.js';
import { PriceStore } from '../engine/price-store.js';
import { CHG, OBS, RecordBuffer } from '../engine/records.js';
import { startApp } from '../http/app.js';
import { Hub, shardOf } from '../workers/hub.js';
import { ROUNDS, alternate, describe } from './lib/alternate.js';
import { ANALYTICS_BOOKS, analyticsWorkload, wideTotalsWorkload } from './lib/workload.js';

const EVENTS = 10_000;
const BATCH = 1000;
const UPDATES = Number(process.env.BENCH_UPDATES ?? 1_000_000);
const SIM_BATCHES = 600;
function workload(prefill: boolean, t0: number, owner: (e: number) => number, shards: number): Float64Array[][] {
  return analyticsWorkload(EVENTS, UPDATES, BATCH, prefill, t0, owner, shards);
}

function machine(): string {
  return `machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

function incrementalVersusScratch(): void {
  const t0 = 1_800_000_000_000;
  const store = new PriceStore(1 << 20);
  const analytics = new Analytics(store);
  const out = new RecordBuffer(CHG.STRIDE, 4096);
  for (const b of workload(true, t0, () => 0, 1)[0]) {
    analytics.begin(t0 + 1000);
    store.apply(b, b.length / OBS.STRIDE, out);
    analytics.flush();
    out.length = 0;
  }
  const updates = workload(false, t0 + 2000, () => 0, 1)[0].slice(0, 50);
  const now = t0 + 5000;
  // one update at a time: apply it and bring every view up to date
  const single = new Float64Array(OBS.STRIDE);
  const h = createHistogram();
  let n = 0;
  const start = process.hrtime.bigint();
  for (const b of updates) {
    for (let i = 0; i < b.length; i += OBS.STRIDE) {
      single.set(b.subarray(i, i + OBS.STRIDE));
      const s = process.hrtime.bigint();
      analytics.begin(now);
      store.apply(single, 1, out);
      analytics.flush();
      out.length = 0;
      h.record(Number(process.hrtime.bigint() - s) || 1);
      n++;
    }
  }
  const perUpdate = Number(process.hrtime.bigint() - start) / n;
  const hs = createHistogram();
  const rounds = 5;
  const s0 = process.hrtime.bigint();
  let rows = 0;
  for (let i = 0; i < rounds; i++) {
    const s = process.hrtime.bigint();
    const sets = scratch(store, now);
    rows = sets.cons.size + sets.arb.size + sets.ev.size + sets.mid.size;
    hs.record(Number(process.hrtime.bigint() - s));
  }
  const perScratch = Number(process.hrtime.bigint() - s0) / rounds;
  console.log(`\n1. one update with all views current vs recomputing the sport: ${store.quoteCount.toLocaleString('en-US')} quotes, ${rows.toLocaleString('en-US')} analytics rows`);
  console.log(machine());
  console.table([
    { method: 'baseline: recompute the sport from scratch', 'mean us': (perScratch / 1000).toFixed(1), 'p50 us': (hs.percentile(50) / 1000).toFixed(1), 'p99 us': (hs.percentile(99) / 1000).toFixed(1), 'vs baseline': '1x' },
    { method: 'incremental: one update, all views current', 'mean us': (perUpdate / 1000).toFixed(2), 'p50 us': (h.percentile(50) / 1000).toFixed(2), 'p99 us': (h.percentile(99) / 1000).toFixed(2), 'vs baseline': `${Math.round(perScratch / perUpdate).toLocaleString('en-US')}x cheaper` },
  ]);
}

/** The shard's own work alone, in this thread: the random workload applied to a store with the analytics on or
 *  off (no main thread, no messages), ns per update over `UPDATES` updates after the prefill. Each run is a child
 *  process of its own, so neither case runs on code the other one's type feedback shaped. */
function shardWork(analytics: boolean): number {
  const t0 = 1_800_000_000_000;
  const store = new PriceStore(1 << 20);
  const a = analytics ? new Analytics(store) : null;
  const out = new RecordBuffer(CHG.STRIDE, 4096);
  for (const b of workload(true, t0, () => 0, 1)[0]) {
    a?.begin(t0);
    store.apply(b, b.length / OBS.STRIDE, out);
    a?.flush(false);
    out.length = 0;
  }
  const updates = workload(false, t0 + 1000, () => 0, 1)[0];
  const start = process.hrtime.bigint();
  for (const b of updates) {
    a?.begin(t0 + 1000);
    store.apply(b, b.length / OBS.STRIDE, out);
    a?.flush(false);
    out.length = 0;
  }
  return Number(process.hrtime.bigint() - start) / UPDATES;
}

const WIDE_EVENTS = 2_000;
const WIDE_UPDATES = 300_000;

/** The shard's own work on the middles-heavy workload (bench/lib/workload.ts wideTotalsWorkload), as shardWork. */
function wideWork(analytics: boolean): number {
  const t0 = 1_800_000_000_000;
  const store = new PriceStore(1 << 16);
  const a = analytics ? new Analytics(store) : null;
  const out = new RecordBuffer(CHG.STRIDE, 4096);
  const w = wideTotalsWorkload(WIDE_EVENTS, WIDE_UPDATES, t0);
  for (const b of w.prefill) {
    a?.begin(t0);
    store.apply(b, b.length / OBS.STRIDE, out);
    a?.flush(false);
    out.length = 0;
  }
  const start = process.hrtime.bigint();
  for (const b of w.updates) {
    a?.begin(t0 + 1000);
    store.apply(b, b.length / OBS.STRIDE, out);
    a?.flush(false);
    out.length = 0;
  }
  return Number(process.hrtime.bigint() - start) / WIDE_UPDATES;
}

function shardWorkIn(analytics: boolean, mode = 'shard-work'): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [new URL(import.meta.url).pathname, mode, analytics ? 'on' : 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => { buf += d.toString(); });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(buf)) : reject(new Error(`shard-work exited with ${code}`))));
  });
}

/** per configuration, the least CPU time (both threads: process.cpuUsage) one update took in a run of throughput() */
const cpuPerUpdate = { off: Infinity, on: Infinity };
/** per configuration, in the run with the least CPU time: each thread's busy time (its event loop active) per update */
const busyPerUpdate = { off: { shard: 0, main: 0 }, on: { shard: 0, main: 0 } };

async function throughput(analytics: boolean): Promise<number> {
  const hub = new Hub(1, Date.now, { analytics });
  await hub.start();
  const sport = sportByKey('basketball_nba')!;
  for (let e = 0; e < EVENTS; e++) {
    hub.upsertEvent({ id: `bench_${e}`, sport, commence: Date.now() + 86_400_000, home: 'H', away: 'A', status: 'upcoming', pitchers: null });
  }
  const owner = (e: number) => shardOf(`bench_${e}`, 1);
  const t0 = Date.now();
  for (const b of workload(true, t0 - 60_000, owner, 1)[0]) await hub.applyEncoded(0, b, b.length / OBS.STRIDE);
  const batches = workload(false, t0, owner, 1)[0];
  let next = 0;
  const start = process.hrtime.bigint();
  const lane = async () => {
    while (next < batches.length) {
      const b = batches[next++];
      await hub.applyEncoded(0, b, b.length / OBS.STRIDE);
    }
  };
  const cpu0 = process.cpuUsage();
  const main0 = performance.eventLoopUtilization();
  const shard0 = hub.pool.busyMs()[0];
  await Promise.all(Array.from({ length: 8 }, lane));
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const k = analytics ? 'on' : 'off';
  const perUpdate = (cpu.user + cpu.system) / UPDATES;
  if (perUpdate < cpuPerUpdate[k]) {
    cpuPerUpdate[k] = perUpdate;
    busyPerUpdate[k] = { shard: ((hub.pool.busyMs()[0] - shard0) * 1000) / UPDATES, main: (performance.eventLoopUtilization(main0).active * 1000) / UPDATES };
  }
  await hub.close();
  return UPDATES / secs;
}

/** The simulator's market (about 20 books an event, realistic margins, props) through hub.ingest, with `inFlight`
 *  batches outstanding: 1 is one feed waiting for each answer (every step of the pipeline in series), more is
 *  several feeds at once (the main thread parses the next batch while the shard applies this one). */
async function simulated(analytics: boolean, batches: IngestBatch[], snapshot: IngestBatch, t0: number, inFlight: number): Promise<number> {
  let clock = t0;
  const hub = new Hub(1, () => clock, { analytics });
  await hub.start();
  await hub.ingest(snapshot, clock);
  let n = 0;
  let next = 0;
  const start = process.hrtime.bigint();
  const lane = async () => {
    while (next < batches.length) {
      const b = batches[next++];
      clock += 100;
      await hub.ingest(b, clock);
      n += b.prices.length;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  await hub.close();
  return n / secs;
}

/** The simulator's market through the service's own front: POST /v1/ingest with msgpack bodies of 2,000
 *  observations, `inFlight` requests outstanding, from a client process (bench/lib/ingest-client.ts), into an app
 *  with one shard and the analytics on or off. */
async function overHttp(analytics: boolean, inFlight: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lw-bench-'));
  const app = await startApp({ host: '127.0.0.1', port: 0, dataDir, feeds: [], simSeed: 1, simRate: 1, shards: 1, adminKey: 'bench-admin', analytics });
  try {
    const script = new URL('./lib/ingest-client.js', import.meta.url).pathname;
    const args = JSON.stringify({ url: `http://127.0.0.1:${app.port}/v1/ingest`, admin: 'bench-admin', t0: Date.now(), batches: 200, inFlight });
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [script, args], { stdio: ['ignore', 'pipe', 'inherit'] });
      let buf = '';
      child.stdout.on('data', (d: Buffer) => { buf += d.toString(); });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(buf) : reject(new Error(`ingest client exited with ${code}`))));
    });
    const r = JSON.parse(out) as { observations: number; seconds: number };
    return r.observations / r.seconds;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function ingestToRest(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lw-bench-'));
  const app = await startApp({ host: '127.0.0.1', port: 0, dataDir, feeds: [], simSeed: 1, simRate: 1, shards: 1, adminKey: 'bench-admin' });
  try {
    const base = `http://127.0.0.1:${app.port}`;
    const key = app.firstStart.demoKey!;
    const admin = { 'content-type': 'application/json', authorization: 'Bearer bench-admin' };
    const commence = Date.now() + 86_400_000;
    const events = Array.from({ length: 50 }, (_, i) => ({ id: `lat_${i}`, sport_key: 'basketball_nba', commence_time: commence, home_team: `H${i}`, away_team: `A${i}` }));
    await fetch(`${base}/v1/ingest`, { method: 'POST', headers: admin, body: JSON.stringify({ events }) });
    const arbUrl = `${base}/v1/sports/basketball_nba/arbitrage?apiKey=${key}`;
    const hIngest = createHistogram();
    const hGet = createHistogram();
    for (let i = 0; i < 300; i++) {
      const ev = events[i % events.length];
      // open: the two books cross (2.10 / 2.10); the next round on this event closes it again (1.80 / 1.80)
      const open = Math.floor(i / events.length) % 2 === 0;
      const p = open ? 2.1 : 1.8;
      const body = JSON.stringify({ prices: [
        { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: p },
        { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: p },
      ] });
      const s = process.hrtime.bigint();
      await fetch(`${base}/v1/ingest`, { method: 'POST', headers: admin, body });
      for (;;) {
        const rows = (await (await fetch(arbUrl)).json()) as { event_id: string }[];
        if (rows.some((r) => r.event_id === ev.id) === open) break;
      }
      hIngest.record(Number(process.hrtime.bigint() - s));
      const g = process.hrtime.bigint();
      await (await fetch(arbUrl)).arrayBuffer();
      hGet.record(Number(process.hrtime.bigint() - g));
    }
    console.log('\n3. price update entering POST /v1/ingest until the arbitrage row it opens (or closes) is seen over REST');
    console.log(machine());
    const ms = (h: ReturnType<typeof createHistogram>, q: number) => (h.percentile(q) / 1e6).toFixed(3);
    console.table([
      { path: 'baseline: GET /arbitrage alone', 'p50 ms': ms(hGet, 50), 'p99 ms': ms(hGet, 99) },
      { path: 'ingest -> shard -> analytics -> read model -> GET /arbitrage', 'p50 ms': ms(hIngest, 50), 'p99 ms': ms(hIngest, 99) },
    ]);
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'shard-work' || process.argv[2] === 'wide-work') {
  const on = process.argv[3] === 'on';
  process.stdout.write(String(process.argv[2] === 'wide-work' ? wideWork(on) : shardWork(on)));
  process.exit(0);
}
incrementalVersusScratch();
// off and on in turn, ROUNDS times each (bench/lib/alternate.ts)
const rand = await alternate(throughput);
console.log(`\n2. ingest to read model, SHARDS=1: ${UPDATES.toLocaleString('en-US')} random updates over ${(EVENTS * 6 * ANALYTICS_BOOKS.length).toLocaleString('en-US')} quotes, batch ${BATCH}, 8 in flight; best of ${ROUNDS} runs each, off and on in turn`);
console.log(machine());
console.table([
  { analytics: 'baseline: off (store and read model only)', 'updates/s': Math.round(rand.off).toLocaleString('en-US'), 'vs baseline': '100 %', 'CPU us/update': cpuPerUpdate.off.toFixed(2) },
  { analytics: 'on (consensus, arbitrage, EV x 6 de-vig methods, middles)', 'updates/s': Math.round(rand.on).toLocaleString('en-US'), 'vs baseline': describe(rand), 'CPU us/update': cpuPerUpdate.on.toFixed(2) },
]);
// CPU time is what the analytics cost wherever it is spent (the shard's evaluation, the main thread's applying of
// their records): with every core busy, a rate above cores / (CPU time per update) is out of reach.
{
  const bound = (cpus().length / cpuPerUpdate.on) * 1e6;
  console.log(`CPU time per update, both threads (least of ${ROUNDS} runs each): off ${cpuPerUpdate.off.toFixed(2)} us, on ${cpuPerUpdate.on.toFixed(2)} us; `
    + `with the analytics on, ${cpus().length} cores can apply at most ${Math.round(bound).toLocaleString('en-US')} updates/s (${Math.round((bound / rand.off) * 100)} % of off's best)`);
  // the thread whose busy time per update is the wall time per update is the one that bounds the rate
  const b = busyPerUpdate;
  console.log(`Busy time per update in those runs (event loop active): shard off ${b.off.shard.toFixed(2)} us, on ${b.on.shard.toFixed(2)} us; `
    + `main thread off ${b.off.main.toFixed(2)} us, on ${b.on.main.toFixed(2)} us`);
}
{
  // as rates (updates/s), so that the best run is the fastest
  const alone = await alternate(async (on) => 1e9 / (await shardWorkIn(on)));
  console.log(`\n2, the shard alone. The shard's work in one thread (no main thread, no messages): the random workload of 2, ns per update, a process per run, best of ${ROUNDS} runs each, off and on in turn`);
  console.log(machine());
  console.table([
    { work: 'baseline: the store alone', 'ns/update': (1e9 / alone.off).toFixed(0), 'updates/s': Math.round(alone.off).toLocaleString('en-US'), 'vs baseline': '100 %' },
    { work: 'store + every analytics view', 'ns/update': (1e9 / alone.on).toFixed(0), 'updates/s': Math.round(alone.on).toLocaleString('en-US'), 'vs baseline': describe(alone) },
  ]);
}
{
  const wide = await alternate(async (on) => 1e9 / (await shardWorkIn(on, 'wide-work')));
  console.log(`\n2d. middles-heavy markets, the shard alone: ${WIDE_EVENTS.toLocaleString('en-US')} games' totals, 20 books each on one of 24 lines (about 14 lines a game), ${WIDE_UPDATES.toLocaleString('en-US')} updates repricing one side of a book, one in ten moving the book to another line; ns per update, a process per run, best of ${ROUNDS} runs each, off and on in turn`);
  console.log(machine());
  console.table([
    { work: 'baseline: the store alone', 'ns/update': (1e9 / wide.off).toFixed(0), 'updates/s': Math.round(wide.off).toLocaleString('en-US'), 'vs baseline': '100 %' },
    { work: 'store + every analytics view', 'ns/update': (1e9 / wide.on).toFixed(0), 'updates/s': Math.round(wide.on).toLocaleString('en-US'), 'vs baseline': describe(wide) },
  ]);
}
{
  const t0 = Date.now();
  const sim = new Simulator({ seed: 1, now: t0 });
  const snapshot = sim.snapshot(t0);
  const batches: IngestBatch[] = [];
  // 1,200,000 observations: runs of about a second each, long enough for this shared machine's noise to average out
  for (let i = 1; i <= SIM_BATCHES; i++) batches.push(sim.step(t0 + i * 100, 2000));
  const rows = [];
  for (const inFlight of [1, 4]) {
    const a = await alternate((on) => simulated(on, batches, snapshot, t0, inFlight));
    rows.push(
      { 'in flight': inFlight, analytics: 'baseline: off', 'updates/s': Math.round(a.off).toLocaleString('en-US'), 'vs baseline': '100 %' },
      { 'in flight': inFlight, analytics: 'on', 'updates/s': Math.round(a.on).toLocaleString('en-US'), 'vs baseline': describe(a) },
    );
  }
  console.log(`\n2b. the simulator's market through POST-equivalent hub.ingest (validation included), SHARDS=1: ${(SIM_BATCHES * 2000).toLocaleString('en-US')} observations over ${snapshot.prices.length.toLocaleString('en-US')} quotes; 1 batch in flight (one feed, in series) and 4 (feeds at once); best of ${ROUNDS} runs each, off and on in turn`);
  console.log(machine());
  console.table(rows);
}
{
  const rows = [];
  for (const inFlight of [1, 4]) {
    const a = await alternate((on) => overHttp(on, inFlight));
    rows.push(
      { 'in flight': inFlight, analytics: 'baseline: off', 'updates/s': Math.round(a.off).toLocaleString('en-US'), 'vs baseline': '100 %' },
      { 'in flight': inFlight, analytics: 'on', 'updates/s': Math.round(a.on).toLocaleString('en-US'), 'vs baseline': describe(a) },
    );
  }
  console.log(`\n2c. the same market end to end: POST /v1/ingest, msgpack bodies of 2,000 observations, from a client process, SHARDS=1; best of ${ROUNDS} runs each, off and on in turn`);
  console.log(machine());
  console.table(rows);
}
await ingestToRest();
