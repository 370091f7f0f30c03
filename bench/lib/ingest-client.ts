// Child process of bench/analytics.ts: posts the simulator's market to POST /v1/ingest as msgpack bodies, the
// opening snapshot first (untimed), then `batches` steps of 2,000 observations with `inFlight` requests
// outstanding, and reports the observations sent (with several in flight, a step that overtakes the one before it
// makes some of that one's observations older than the quotes they update: ignored as stale, still ingested work)
// and the seconds taken as JSON on stdout. A process of its
// own so the client's work is not charged to the server's main thread.

import { pack } from 'msgpackr';
import { Simulator } from '../../engine/simulator.js';

const { url, admin, t0, batches, inFlight } = JSON.parse(process.argv[2]) as { url: string; admin: string; t0: number; batches: number; inFlight: number };
const sim = new Simulator({ seed: 1, now: t0 });
const headers = { 'content-type': 'application/msgpack', authorization: `Bearer ${admin}` };
const snapshot = pack(sim.snapshot(t0));
const bodies: Buffer[] = [];
let observations = 0;
for (let i = 1; i <= batches; i++) {
  const step = sim.step(t0 + i * 100, 2000);
  observations += step.prices?.length ?? 0;
  bodies.push(pack(step));
}

async function post(body: Buffer): Promise<void> {
  const r = await fetch(url, { method: 'POST', headers, body });
  const j = (await r.json()) as { accepted: number; rejected: unknown[] };
  if (r.status !== 202 || j.rejected.length > 0) throw new Error(`POST /v1/ingest: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
}

await post(snapshot);
let next = 0;
const start = process.hrtime.bigint();
const lane = async () => {
  while (next < bodies.length) await post(bodies[next++]);
};
await Promise.all(Array.from({ length: inFlight }, lane));
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
process.stdout.write(`${JSON.stringify({ observations, seconds })}\n`);
