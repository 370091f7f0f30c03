// Child process of bench/ws.ts: opens N WebSocket clients to a URL, optionally leaves some of them not reading,
// and reports per-frame latency of the reading clients (now - pt, and now - the first last_update in a delta:
// the simulator stamps observations at ingest) as JSON on stdout when done. With `storm` the clients only connect at
// once and wait for their snapshots: it reports how long until the last one had its snapshot, then exits.

import { createHistogram } from 'node:perf_hooks';
import WebSocket from 'ws';

const { url, count, slow, seconds, ingestClock, storm } = JSON.parse(process.argv[2]) as { url: string; count: number; slow: number; seconds: number; ingestClock: boolean; storm?: boolean };
const started = performance.now();
/** connect to snapshot, per client (storm) */
const toSnapshot = createHistogram();
const publish = createHistogram();
const ingest = createHistogram();
let frames = 0;
let bytes = 0;
const PT = /"pt":(\d+)/;
/** a change's last_update, and whether it is a removal (its `removed` follows it) */
const LU = /"last_update":(\d+(?:\.\d+)?)(,"removed":true)?/g;

const sockets: WebSocket[] = [];
let open = 0;
/** Steady state only: frames count from the moment every reading client has its snapshot, and a second more. The
 *  server's main thread builds 1,000 snapshots as the clients connect, and a delta held up behind that storm
 *  carried observations stamped tens of seconds before it went out: the measure read that as a p99 of 20 to 36 s
 *  in some runs, which is the connection storm, not the stream's steady latency. */
let measuring = false;
let snapshotted = 0;
let allSnapshots: () => void = () => {};
const snapshots = new Promise<void>((resolve) => { allSnapshots = resolve; });
await new Promise<void>((resolve, reject) => {
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(url);
    const reading = i >= slow;
    let hasSnapshot = false;
    ws.on('open', () => {
      if (!reading) (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      if (++open === count) resolve();
    });
    ws.on('error', reject);
    ws.on('message', (data: Buffer) => {
      if (!reading) return;
      if (!hasSnapshot && data.subarray(0, 20).toString('latin1').startsWith('{"type":"snapshot"')) {
        hasSnapshot = true;
        toSnapshot.record(Math.max(1, Math.round((performance.now() - started) * 1000)));
        if (++snapshotted === count - slow) allSnapshots();
      }
      if (!measuring) return;
      frames++;
      bytes += data.length;
      const now = Date.now();
      const head = data.subarray(0, 256).toString('latin1');
      if (!head.startsWith('{"type":"delta"')) return;
      const pt = PT.exec(head);
      if (pt !== null) publish.record(Math.max(1, (now - Number(pt[1])) * 1000));
      if (!ingestClock) return;
      // the newest observation in the frame: the simulator stamps observations when it ingests them. A removal carries
      // the removed quote's last write (a game's start removes quotes observed before it), not an ingest time: a
      // frame of removals alone is no ingest latency
      let newest = 0;
      for (const m of data.toString('latin1').matchAll(LU)) if (m[2] === undefined) newest = Math.max(newest, Number(m[1]));
      if (newest > 0) ingest.record(Math.max(1, Math.round((now - newest) * 1000)));
    });
    sockets.push(ws);
  }
});
// a plain server (the baseline) sends no snapshot: its clients measure from the start
if (count - slow === 0 || !ingestClock) allSnapshots();
// bounded: a server with no event on the channel may send no snapshot at all
await Promise.race([snapshots, new Promise((r) => setTimeout(r, storm === true ? 60_000 : 20_000))]);
if (storm === true) {
  const q = (p: number) => (toSnapshot.count === 0 ? null : toSnapshot.percentile(p) / 1000);
  process.stdout.write(JSON.stringify({ storm: { clients: snapshotted, p50: q(50), p99: q(99), last: toSnapshot.count === 0 ? null : toSnapshot.max / 1000 } }) + '\n');
  for (const ws of sockets) ws.terminate();
  process.exit(0);
}
await new Promise((r) => setTimeout(r, 1000));
measuring = true;
process.stdout.write(JSON.stringify({ ready: true }) + '\n');
await new Promise((r) => setTimeout(r, seconds * 1000));
const q = (h: ReturnType<typeof createHistogram>, p: number) => (h.count === 0 ? null : h.percentile(p) / 1000);
process.stdout.write(JSON.stringify({
  frames, bytes, seconds,
  publish: { p50: q(publish, 50), p99: q(publish, 99) },
  ingest: { p50: q(ingest, 50), p99: q(ingest, 99), max: ingest.count === 0 ? null : ingest.max / 1000 },
}) + '\n');
for (const ws of sockets) ws.terminate();
process.exit(0);
