// A cluster node cut off from NATS keeps serving what it holds while the other nodes move on: /health takes it out
// of rotation (503, a reason naming NATS) once the connection has been down NATS_DOWN_GRACE_MS, /v1/status and
// /metrics report the connection, and all of it returns to ok when the client has reconnected. The NATS server is the
// real one of NATS_URL, seen through a TCP relay on loopback that the test cuts and restores.

import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { NATS_SKIP, testNats } from './helpers/nats.js';
import { startRelay } from './helpers/tcp-relay.js';

interface Health { status: string; reasons: string[]; nats: { connected: boolean; disconnected_since: string | null } | null }

t.test('cluster - a node cut off from NATS is reported by /health, /v1/status and /metrics until it is back', { skip: NATS_SKIP }, async (t) => {
  const ns = await testNats(t);
  const target = new URL(ns.url);
  const relay = await startRelay(t, target.hostname, Number(target.port || 4222));
  const app = await startTestApp(t, {
    shards: 1,
    nats: {
      url: `nats://127.0.0.1:${relay.port}`, prefix: ns.prefix, cluster: true, nodeId: 'nats-down', stream: ns.stream,
      maxAgeS: 600, maxBytes: 16 * 1048576, duplicateWindowS: 60, applyTimeoutMs: 5000,
    },
  });
  // the relay is back before the app closes (its NATS client closes cleanly)
  t.teardown(() => relay.restore().catch(() => undefined));
  const health = async () => {
    const res = await app.get('/health');
    return { status: res.status, body: (await res.json()) as Health };
  };
  const until = async (what: string, ok: (h: { status: number; body: Health }) => boolean) => {
    const end = Date.now() + 15_000;
    for (;;) {
      const h = await health();
      if (ok(h)) return h;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(h)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const up = await health();
  t.same([up.status, up.body.status, up.body.nats], [200, 'ok', { connected: true, disconnected_since: null }], 'connected: ok');

  await relay.cut();
  const blip = await until('the disconnect', (h) => h.body.nats?.connected === false);
  t.equal(blip.status, 200, 'within the grace a disconnect is not yet an outage');
  const down = await until('the outage', (h) => h.status === 503);
  t.equal(down.body.status, 'degraded', 'degraded');
  t.match(down.body.reasons.join('; '), /nats: disconnected for \d+ s: this node's data is not following the cluster/, 'the reason names NATS');
  const status = (await (await app.get('/v1/status')).json()) as { nats: { connection: { connected: boolean; disconnected_since: string } } };
  t.equal(status.nats.connection.connected, false, '/v1/status: not connected');
  t.ok(Date.parse(status.nats.connection.disconnected_since) > 0, '/v1/status: since when');
  t.match(await (await app.get('/metrics')).text(), /^linewire_nats_connected 0$/m, '/metrics: linewire_nats_connected 0');

  await relay.restore();
  const back = await until('the reconnect', (h) => h.status === 200 && h.body.nats?.connected === true);
  t.same([back.body.status, back.body.reasons], ['ok', []], 'ok again once reconnected');
  t.match(await (await app.get('/metrics')).text(), /^linewire_nats_connected 1$/m, '/metrics: linewire_nats_connected 1');
});
