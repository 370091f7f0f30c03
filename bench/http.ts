// GET /v1/sports/basketball_nba/odds with the simulator running, under an HTTP load generator (autocannon, in
// its own process) at 32 connections, side by side in the same run with the baseline: a plain uWebSockets.js
// server returning the identical bytes from memory. Target: at least 70 % of the baseline's requests/s.
// Then the same for /consensus, /middles and /props (4 connections): the views with the largest bodies.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import uWS from 'uWebSockets.js';
import { startApp } from '../http/app.js';

const run = promisify(execFile);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 32;
/** the analytics bodies are about 0.5 to 0.7 MB: a few connections fill the loopback */
const ANALYTICS_CONNECTIONS = 4;
const autocannon = new URL('../../node_modules/autocannon/autocannon.js', import.meta.url).pathname;

interface Result {
  requests: { average: number };
  latency: { p50: number; p99: number; p99_9?: number; p999?: number };
  throughput: { average: number };
  non2xx: number;
  errors: number;
}

async function load(url: string, connections: number): Promise<Result> {
  const { stdout } = await run(process.execPath, [autocannon, '-c', String(connections), '-d', String(SECONDS), '-j', url],
    { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Result;
}

function row(name: string, r: Result, base: Result | null) {
  return {
    server: name,
    'req/s': Math.round(r.requests.average).toLocaleString('en-US'),
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    'MB/s': (r.throughput.average / 1e6).toFixed(1),
    'non-2xx': r.non2xx,
    'vs baseline': base === null ? '100 %' : `${Math.round((r.requests.average / base.requests.average) * 100)} %`,
  };
}

/** `path` on the app against a plain uWebSockets.js server returning the bytes the app first answered, in turn. */
async function compare(port: number, path: string, shown: string, connections: number, what: string): Promise<void> {
  const ours = `http://127.0.0.1:${port}${path}`;
  const first = await fetch(ours);
  const body = Buffer.from(await first.arrayBuffer());
  // an error body (a key out of credits) served fast would read as a fast endpoint
  if (first.status !== 200) throw new Error(`GET ${shown} answered ${first.status}: ${body.toString().slice(0, 200)}`);
  const plain = uWS.App();
  plain.get('/*', (res) => {
    res.writeHeader('Content-Type', 'application/json');
    res.end(body);
  });
  const ls = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    plain.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen failed')))));
  const baselineUrl = `http://127.0.0.1:${uWS.us_socket_local_port(ls)}${path}`;
  console.log(`\nGET ${shown}: ${body.length.toLocaleString('en-US')} bytes, ${connections} connections, ${SECONDS} s each, simulator at 2,000 updates/s`);
  const base = await load(baselineUrl, connections);
  uWS.us_listen_socket_close(ls);
  const mine = await load(ours, connections);
  if (mine.non2xx > 0 || mine.errors > 0) throw new Error(`GET ${shown}: ${mine.non2xx} answers not 2xx and ${mine.errors} errors under load: not a measure of the endpoint`);
  console.table([row('baseline: plain uWebSockets.js, same bytes from memory', base, null), row(`linewire (${what})`, mine, base)]);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lw-bench-'));
  const app = await startApp({
    host: '127.0.0.1', port: 0, dataDir, feeds: ['sim'], simSeed: 1, simRate: 2000, shards: 1, adminKey: 'bench-admin',
  });
  try {
    // credits for every request of the run: /odds at 3 credits a call and 30,000 calls a second spends the demo
    // key's million in 10 s, and the views measured after it then answered OUT_OF_USAGE_CREDITS bodies
    const made = await fetch(`http://127.0.0.1:${app.port}/v1/admin/keys`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bench-admin' },
      body: JSON.stringify({ tier: 'scale', credits: 1_000_000_000 }),
    });
    if (made.status !== 201) throw new Error(`admin key: ${made.status} ${await made.text()}`);
    const key = ((await made.json()) as { key: string }).key;
    // let the simulator run a moment so the board is full and moving
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
    const odds = '/v1/sports/basketball_nba/odds?regions=us&markets=h2h,spreads,totals';
    await compare(app.port, `${odds}&apiKey=${key}`, odds, CONNECTIONS, 'auth, credits, cache, simulator running');
    // the views whose bodies are largest, kept serialised per row (http/row-cache.ts): each request filters, sorts
    // and joins rows, of which the feed's batches change a few (props: each row's age written per request)
    for (const view of ['consensus', 'middles', 'props']) {
      const path = `/v1/sports/basketball_nba/${view}`;
      await compare(app.port, `${path}?apiKey=${key}`, path, ANALYTICS_CONNECTIONS, 'auth, credits, rows kept serialised, simulator running');
    }
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
