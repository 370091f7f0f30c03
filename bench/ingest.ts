// Ingest throughput and latency: price updates through the shard threads until their change records are in
// the main thread's read model, with SHARDS=1 and SHARDS=2, against a baseline measured in the same run: the
// same store and read model applied on one thread with no hand-off at all.
//
// Workload (fixed seed): 10k events x 3 markets x 20 books, random outcome and price updates, batches of 1,000,
// 8 batches in flight per shard for throughput, then 1 in flight for unloaded latency. Latency is per batch,
// from hand-off to the shard until its change records are applied to the read model, in a histogram.

import { cpus } from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import { sportByKey } from '../engine/catalogue.js';
import { PriceStore } from '../engine/price-store.js';
import { ReadModel } from '../engine/read-model.js';
import { CHG, OBS, RecordBuffer } from '../engine/records.js';
import { Hub, shardOf } from '../workers/hub.js';
import { batches, type Workload } from './lib/workload.js';

const EVENTS = 10_000;
const BOOKS = 20;
const BATCH = 1000;
const UPDATES = Number(process.env.BENCH_UPDATES ?? 2_000_000);
const IN_FLIGHT = 8;


const WORKLOAD: Workload = {
  events: EVENTS,
  books: Array.from({ length: BOOKS }, (_, i) => i),
  updates: UPDATES,
  batch: BATCH,
  price: (r) => 1.7 + Math.floor(r() * 60) / 100,
  ts: (i, prefill) => 1_700_000_000_000 + (prefill ? 0 : 1e9) + i,
};

function workload(shards: number, eventShard: (e: number) => number, prefill: boolean): Float64Array[][] {
  return batches(WORKLOAD, prefill, shards, eventShard);
}

interface Row {
  setup: string;
  'updates/s': string;
  'p50 ms': string;
  'p99 ms': string;
  'p99.9 ms': string;
  'vs baseline': string;
}

function row(setup: string, ups: number, h: ReturnType<typeof createHistogram>, base: number): Row {
  const ms = (q: number) => (h.percentile(q) / 1e6).toFixed(3);
  return {
    setup,
    'updates/s': Math.round(ups).toLocaleString('en-US'),
    'p50 ms': ms(50),
    'p99 ms': ms(99),
    'p99.9 ms': ms(99.9),
    'vs baseline': base > 0 ? `${(ups / base).toFixed(2)}x` : '1.00x',
  };
}

function baseline(): { ups: number; h: ReturnType<typeof createHistogram> } {
  const store = new PriceStore(1 << 16);
  const rm = new ReadModel();
  const sport = sportByKey('basketball_nba')!;
  for (let e = 0; e < EVENTS; e++) rm.upsertEvent(e, `e${e}`, sport.key, 0, 'H', 'A', 'upcoming', 0);
  const out = new RecordBuffer(CHG.STRIDE, 4096);
  for (const b of workload(1, () => 0, true)[0]) {
    store.apply(b, b.length / OBS.STRIDE, out);
    rm.apply(out.data, out.length);
    out.length = 0;
  }
  const batches = workload(1, () => 0, false)[0];
  const h = createHistogram();
  const t0 = process.hrtime.bigint();
  for (const b of batches) {
    const s = process.hrtime.bigint();
    store.apply(b, b.length / OBS.STRIDE, out);
    const n = out.length;
    rm.apply(out.data, n);
    out.length = 0;
    h.record(Number(process.hrtime.bigint() - s) || 1);
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return { ups: UPDATES / secs, h };
}

async function sharded(shards: number, inFlight: number): Promise<{ ups: number; h: ReturnType<typeof createHistogram> }> {
  const hub = new Hub(shards);
  await hub.start();
  const sport = sportByKey('basketball_nba')!;
  const owner: number[] = [];
  for (let e = 0; e < EVENTS; e++) {
    const id = `bench_evt_${e}`;
    hub.upsertEvent({ id, sport, commence: 2_000_000_000_000, home: 'H', away: 'A', status: 'upcoming', pitchers: null });
    owner.push(shardOf(id, shards));
  }
  // interned ids are 0..EVENTS-1 in insertion order
  const fill = workload(shards, (e) => owner[e], true);
  await Promise.all(fill.map(async (batches, s) => {
    for (const b of batches) await hub.applyEncoded(s, b, b.length / OBS.STRIDE);
  }));
  const per = workload(shards, (e) => owner[e], false);
  const h = createHistogram();
  const t0 = process.hrtime.bigint();
  await Promise.all(per.map(async (batches, s) => {
    let next = 0;
    const lane = async () => {
      while (next < batches.length) {
        const b = batches[next++];
        const start = process.hrtime.bigint();
        await hub.applyEncoded(s, b, b.length / OBS.STRIDE);
        h.record(Number(process.hrtime.bigint() - start) || 1);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
  }));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  await hub.close();
  return { ups: UPDATES / secs, h };
}

async function main(): Promise<void> {
  console.log(`ingest to read model: ${UPDATES.toLocaleString('en-US')} random updates over ${(EVENTS * 6 * BOOKS).toLocaleString('en-US')} quotes (${EVENTS} events x 3 markets x 2 outcomes x ${BOOKS} books), batch ${BATCH}, ${IN_FLIGHT} in flight per shard`);
  console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
  const base = baseline();
  const rows = [row('baseline: one thread, no hand-off', base.ups, base.h, 0)];
  for (const shards of [1, 2]) {
    const r = await sharded(shards, IN_FLIGHT);
    rows.push(row(`SHARDS=${shards}, ${IN_FLIGHT} batches in flight per shard`, r.ups, r.h, base.ups));
  }
  for (const shards of [1, 2]) {
    const r = await sharded(shards, 1);
    rows.push(row(`SHARDS=${shards}, 1 batch in flight per shard (latency)`, r.ups, r.h, base.ups));
  }
  console.table(rows);
}

await main();
