// A cluster node cut off from NATS keeps serving what it holds while the other nodes move on: /health takes it out
// of rotation (503, a reason naming NATS) once the connection has been down NATS_DOWN_GRACE_MS, /v1/status and
// /metrics report the connection, and all of it returns to ok when the client has reconnected. The NATS server is the
// real one of NATS_URL, seen through a TCP relay on loopback that the test cuts and restores.

import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { NATS_SKIP, testNats } from './helpers/nats.js';
import { startRelay } from './helpers/tcp-relay.js';
import { createKey } from '../sql/keys.js';

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

  // a book with a write, so that a sample would have a row to write
  const r = await app.ingest({ events: [{ id: 'nd_1', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'A Team', away_team: 'B Team' }],
    prices: [{ book: 'fanduel', event_id: 'nd_1', market: 'h2h', outcome: 'A Team', price: 1.9 }] });
  t.equal(r.json.accepted, 1, 'a price applied through the stream');
  const revokedElsewhere = await app.key('business');
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
  // cut off, its books' ages are its own stale view: it writes no status sample to the shared history (the cluster
  // audit: false breaches, first written in their slots) and judges no source_quality check (webhook-service)
  const samples = async () => Number((await app.app.services.db.sql<{ n: string }[]>`select count(*) as n from status_samples`)[0]!.n);
  const before = await samples();
  await app.app.services.status!.sample();
  t.equal(await samples(), before, 'no status sample while cut off');
  // another node revokes a key and makes one meanwhile: their announcements over NATS never reach this node
  const db = app.app.services.db;
  await db.sql`update api_keys set revoked_at = now() where key_hash = encode(sha256(convert_to(${revokedElsewhere}, 'UTF8')), 'hex')`;
  const madeElsewhere = (await createKey(db, { tier: 'business' })).key;

  await relay.restore();
  const back = await until('the reconnect', (h) => h.status === 200 && h.body.nats?.connected === true);
  t.same([back.body.status, back.body.reasons], ['ok', []], 'ok again once reconnected');
  t.match(await (await app.get('/metrics')).text(), /^linewire_nats_connected 1$/m, '/metrics: linewire_nats_connected 1');
  await app.app.services.status!.sample();
  t.ok(await samples() > before, 'following again: sampled');
  // back, the node reads the keys again (regression: it served the revoked key and refused the new one until restarted)
  const keyStatus = async (key: string) => { const res = await app.get('/v1/bookmakers', { 'X-API-Key': key }); await res.arrayBuffer(); return res.status; };
  const end = Date.now() + 10_000;
  while ((await keyStatus(revokedElsewhere) !== 401 || await keyStatus(madeElsewhere) !== 200) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  t.same([await keyStatus(revokedElsewhere), await keyStatus(madeElsewhere)], [401, 200], 'the key revoked meanwhile is refused, the one made meanwhile served');
});
