// `node scripts/branchcmp.mjs [rev] [random|sim|wide|both]`: the shard's engine (price store, with and without the
// analytics) in this checkout against git revision `rev` (default HEAD), the way fastify's branchcmp compares a
// branch with main. Builds `rev` in a temporary worktree, then feeds the same observation batches to four stores in
// one process (rev and this checkout, analytics off and on), a batch to each in turn with the order rotating, and
// prints the ns per update of each. On this shared virtual machine the same build's timings swing by tens of
// percent between runs minutes apart, so separate runs cannot tell a few percent apart; batches interleaved in one
// process see the same noise. Four stores share the caches, so every figure is higher than a store's alone
// (bench/analytics.ts gives those): read the ratios.
//   random: bench/analytics.ts's worst case (10,000 events x 3 markets x 20 books, three sharps), BRANCHCMP_UPDATES
//           random updates (default 600,000) after the prefill;
//   sim:    the simulator's market (seed 1) as the hub encodes it, 200 steps of 2,000 observations;
//   wide:   middles-heavy markets (bench/lib/workload.ts wideTotalsWorkload): 2,000 events' totals, each of 20
//           books on one of 24 lines, 300,000 updates of which one in ten moves a book to another line.
// `both` runs random and sim.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const tsc = join(root, 'node_modules/typescript/bin/tsc');

if (process.argv[2] === '--run') {
  await run(process.argv[3], process.argv[4], process.argv[5]);
  process.exit(0);
}

const rev = process.argv[2] ?? 'HEAD';
const which = process.argv[3] ?? 'both';
if (!['random', 'sim', 'wide', 'both'].includes(which)) throw new Error(`workload ${which}: random, sim, wide or both`);
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
const dir = mkdtempSync(join(tmpdir(), 'lw-branchcmp-'));
const base = join(dir, 'base');
try {
  execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', base, rev], { stdio: ['ignore', 'ignore', 'inherit'] });
  symlinkSync(join(root, 'node_modules'), join(base, 'node_modules'));
  execFileSync(process.execPath, [tsc, '-p', join(base, 'tsconfig.json')], { stdio: 'inherit' });
  const sha = execFileSync('git', ['-C', base, 'rev-parse', '--short', 'HEAD']).toString().trim();
  for (const w of which === 'both' ? ['random', 'sim'] : [which]) {
    // a process per workload: neither runs on code the other one's type feedback shaped
    execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--run', join(base, 'dist'), join(root, 'dist'), `${w}:${sha.startsWith(rev) ? sha : `${rev} (${sha})`}`],
      { stdio: 'inherit' });
  }
} finally {
  // the worktree may not exist (an unknown revision): that error is the one to report
  try {
    execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', base], { stdio: 'ignore' });
  } catch {
    execFileSync('git', ['-C', root, 'worktree', 'prune'], { stdio: 'ignore' });
  }
  rmSync(dir, { recursive: true, force: true });
}

async function run(baseDist, newDist, label) {
  const [workload, revLabel] = label.split(/:(.*)/s);
  const builds = {
    [revLabel]: { store: await import(join(baseDist, 'engine/price-store.js')), analytics: await import(join(baseDist, 'engine/analytics.js')) },
    'this checkout': { store: await import(join(newDist, 'engine/price-store.js')), analytics: await import(join(newDist, 'engine/analytics.js')) },
  };
  const { CHG, OBS, RecordBuffer } = await import(join(newDist, 'engine/records.js'));
  const { prefill, updates } = workload === 'random' ? await randomBatches(newDist, OBS)
    : workload === 'wide' ? await wideBatches(newDist, OBS) : await simBatches(newDist, OBS);
  const configs = [];
  for (const analytics of [false, true]) {
    for (const [name, b] of Object.entries(builds)) {
      const store = new b.store.PriceStore(1 << 16);
      configs.push({ name, analytics, store, a: analytics ? new b.analytics.Analytics(store) : null, out: new RecordBuffer(CHG.STRIDE, 4096), ns: 0 });
    }
  }
  const feed = (c, batch, timed) => {
    const s = process.hrtime.bigint();
    c.a?.begin(batch.now);
    c.store.apply(batch.obs, batch.n, c.out);
    c.a?.flush(false);
    c.out.length = 0;
    if (timed) c.ns += Number(process.hrtime.bigint() - s);
  };
  for (const batch of prefill) for (const c of configs) feed(c, batch, false);
  let n = 0;
  for (let i = 0; i < updates.length; i++) {
    for (let k = 0; k < configs.length; k++) feed(configs[(i + k) % configs.length], updates[i], true);
    n += updates[i].n;
  }
  const per = (name, analytics) => configs.find((c) => c.name === name && c.analytics === analytics).ns / n;
  const [b, t] = Object.keys(builds);
  console.log(`\n${workload}: ${n.toLocaleString('en-US')} updates, ${revLabel} against this checkout, batches interleaved in one process`);
  console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  console.table([false, true].map((analytics) => ({
    analytics: analytics ? 'on' : 'off',
    [`${b} ns/update`]: per(b, analytics).toFixed(0),
    'this checkout ns/update': per(t, analytics).toFixed(0),
    'this checkout vs rev': pct(per(t, analytics) / per(b, analytics)),
  })));
  console.log(`throughput with the analytics on vs off: ${b} ${pct(per(b, false) / per(b, true))}, this checkout ${pct(per(t, false) / per(t, true))}`);
}

async function randomBatches(dist, OBS) {
  const { analyticsWorkload } = await import(join(dist, 'bench/lib/workload.js'));
  const t0 = 1_800_000_000_000;
  const asBatches = (list, now) => list.map((obs) => ({ obs, n: obs.length / OBS.STRIDE, now }));
  const updates = Number(process.env.BRANCHCMP_UPDATES ?? 600_000);
  return {
    prefill: asBatches(analyticsWorkload(10_000, updates, 1000, true, t0)[0], t0),
    updates: asBatches(analyticsWorkload(10_000, updates, 1000, false, t0 + 1000)[0], t0 + 1000),
  };
}

/** The simulator's observations as the hub sends them to a shard: a hub with the analytics off applies them, and
 *  each batch it hands its shard pool is kept. */
async function simBatches(dist, OBS) {
  const { Hub } = await import(join(dist, 'workers/hub.js'));
  const { Simulator } = await import(join(dist, 'engine/simulator.js'));
  const t0 = Date.now();
  const sim = new Simulator({ seed: 1, now: t0 });
  let clock = t0;
  const hub = new Hub(1, () => clock, { analytics: false });
  await hub.start();
  const kept = [];
  const apply = hub.pool.apply.bind(hub.pool);
  hub.pool.apply = (shard, obs, n) => {
    kept.push({ obs: obs.slice(0, n * OBS.STRIDE), n, now: clock });
    return apply(shard, obs, n);
  };
  try {
    await hub.ingest(sim.snapshot(t0), clock);
    for (let i = 1; i <= 200; i++) {
      clock = t0 + i * 100;
      await hub.ingest(sim.step(clock, 2000), clock);
    }
  } finally {
    await hub.close();
  }
  return { prefill: kept.slice(0, 1), updates: kept.slice(1) };
}

/** bench/lib/workload.ts's middles-heavy markets: 2,000 events' totals, 300,000 updates. */
async function wideBatches(dist, OBS) {
  const { wideTotalsWorkload } = await import(join(dist, 'bench/lib/workload.js'));
  const t0 = 1_800_000_000_000;
  const { prefill, updates } = wideTotalsWorkload(2_000, 300_000, t0);
  const asBatches = (list, now) => list.map((obs) => ({ obs, n: obs.length / OBS.STRIDE, now }));
  return { prefill: asBatches(prefill, t0), updates: asBatches(updates, t0 + 1000) };
}
