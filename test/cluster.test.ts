// Cluster replication (NATS_URL + CLUSTER=1): service processes sharing one NATS JetStream stream (a stream and
// subject prefix of this run's own) and one PostgreSQL (TEST_DATABASE_URL; without it each node has its own
// embedded database and the keys are made on each node). A price ingested on node A is served by node B over
// REST and WebSocket; a publish repeated with one Nats-Msg-Id is applied once; node C, started after B is gone,
// replays the stream and serves what A serves. Skipped without NATS_URL.

import { headers } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { pack } from 'msgpackr';
import t from 'tap';
import type { TestApp } from './helpers/app.js';
import { NATS_SKIP, testNats } from './helpers/nats.js';
import { SERVICE_ADMIN_KEY, client, kill9, serviceDatabases, startService, type ServiceProcess } from './helpers/service-process.js';
import { connect } from './helpers/ws-client.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

t.test('cluster - two nodes, a late third, one stream', { skip: NATS_SKIP }, async (t) => {
  const ns = await testNats(t);
  const shared = Boolean(process.env.TEST_DATABASE_URL);
  if (!shared) t.comment('TEST_DATABASE_URL is not set: each node has its own embedded database (keys made per node)');
  const dbFor = (() => {
    const one = shared ? serviceDatabases(t, ['postgres'])[0] : null;
    return () => one ?? serviceDatabases(t, ['embedded'])[0];
  })();
  // a DATA_DIR of its own for each node (one process per DATA_DIR), whatever database they share
  const node = (id: string) => {
    const dataDir = mkdtempSync(join(tmpdir(), `lw-node-${id}-`));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    return startService(t, dbFor(), { ...ns.env, CLUSTER: '1', NODE_ID: id, DATA_DIR: dataDir });
  };
  const keyOn = async (svc: ServiceProcess) => {
    const res = await client(() => svc).post('/v1/admin/keys', SERVICE_ADMIN_KEY, { tier: 'business' });
    return ((await res.json()) as { key: string }).key;
  };
  const metric = async (svc: ServiceProcess, name: string) =>
    Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(svc.base + '/metrics')).text())?.[1]);
  const odds = async (svc: ServiceProcess, key: string) => (await fetch(`${svc.base}/v1/sports/basketball_nba/odds?markets=h2h&apiKey=${key}`)).text();

  const a = await node('node-a');
  const b = await node('node-b');
  const keyA = await keyOn(a);
  let keyB = keyA;
  if (shared) {
    // a key made on A reaches B's memory through the key-sync message: B answers 200 once it adopted it
    const deadline = Date.now() + 10_000;
    let status = 0;
    while ((status = (await fetch(`${b.base}/v1/bookmakers?apiKey=${keyA}`)).status) !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    t.equal(status, 200, 'a key made on node A is accepted by node B');
  } else keyB = await keyOn(b);

  const ws = await connect({ base: b.base } as TestApp, `/v1/ws/odds-fast/basketball_nba?apiKey=${keyB}`);
  await ws.until((f) => f.type === 'snapshot');
  const ev = { id: 'cl_nba_1', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const h2h = (book: string, home: number, away: number) => [
    { book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: home },
    { book, event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: away },
  ];
  const res = await client(() => a).post('/v1/ingest', SERVICE_ADMIN_KEY, { events: [ev], prices: h2h('draftkings', 1.91, 1.99) });
  t.same(await res.json(), { events: 1, accepted: 2, ignored: 0, rejected: [], rejected_events: [] }, 'node A answers the ingest once applied from the stream');

  await ws.until((f) => f.type === 'delta' && (f.changes ?? []).some((c) => c.event_id === ev.id && c.book === 'draftkings' && c.price === 1.91));
  t.pass('node B pushes the price over WebSocket');
  const servedB = JSON.parse(await odds(b, keyB)) as { id: string; bookmakers: { key: string; markets: { outcomes: { name: string; price: number }[] }[] }[] }[];
  const dk = servedB.find((e) => e.id === ev.id)?.bookmakers.find((x) => x.key === 'draftkings');
  t.same(dk?.markets[0].outcomes.map((o) => o.price).sort(), [1.91, 1.99], 'node B serves the price over REST');

  // a publish repeated with one Nats-Msg-Id (a publisher's retry) is stored once and applied once on every node
  const js = jetstream(ns.nc);
  const appliedBefore = await metric(b, 'linewire_cluster_applied_total');
  t.match(await (await fetch(b.base + '/metrics')).text(), /^# TYPE linewire_cluster_applied_total counter$/m,
    'the cluster counters are Prometheus counters (they were gauges read at scrape time)');
  const obsBefore = await metric(b, 'linewire_ingest_observations_total');
  const dup = pack({ t: Date.now(), node: 'test', body: { prices: h2h('fanduel', 1.87, 2.03) } });
  const h = headers();
  h.set('Nats-Msg-Id', 'test-dup-1');
  const first = await js.publish(`${ns.prefix}.obs.basketball_nba`, dup, { headers: h });
  const second = await js.publish(`${ns.prefix}.obs.basketball_nba`, dup, { headers: h });
  t.same([first.duplicate, second.duplicate, second.seq], [false, true, first.seq], 'the stream keeps the first and drops the repeat');
  // the next batch through A follows the repeat in the stream: once B pushed it, B has seen the repeat too
  await client(() => a).post('/v1/ingest', SERVICE_ADMIN_KEY, { prices: h2h('betmgm', 1.8, 2.1) });
  await ws.until((f) => f.type === 'delta' && (f.changes ?? []).some((c) => c.event_id === ev.id && c.book === 'betmgm'));
  // the delta goes out with the batch's quotes, the count once its analytics are in too (a few ms later: a CI run read
  // the count in between); a repeat applied twice would show by then, before the next batch's count
  for (let i = 0; i < 100 && await metric(b, 'linewire_cluster_applied_total') < appliedBefore + 2; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await metric(b, 'linewire_cluster_applied_total'), appliedBefore + 2, 'node B applied the repeated batch once (and the next one)');
  t.equal(await metric(b, 'linewire_ingest_observations_total'), obsBefore + 4, 'its two prices counted once');

  // a batch above the server's max_payload (1 MiB by default) goes as several messages, results merged in order
  const big = [];
  for (let i = 0; i < 16_000; i++) big.push(...h2h('fanduel', 1.5 + (i % 100) / 100, 2.5).slice(i % 2, i % 2 + 1));
  big[15_000] = { ...big[15_000], book: 'no_such_book' };
  const appliedBig = await metric(b, 'linewire_cluster_applied_total');
  const bigRes = await (await client(() => a).post('/v1/ingest', SERVICE_ADMIN_KEY, { prices: big })).json() as { accepted: number; rejected: { index: number; error_code: string }[] };
  t.same([bigRes.accepted, bigRes.rejected.map((r) => [r.index, r.error_code])], [15_999, [[15_000, 'UNKNOWN_BOOK']]], 'a split batch answers as one, with the rejected index of the whole batch');
  await client(() => a).post('/v1/ingest', SERVICE_ADMIN_KEY, { prices: h2h('betmgm', 1.81, 2.1) });
  await ws.until((f) => f.type === 'delta' && (f.changes ?? []).some((c) => c.event_id === ev.id && c.book === 'betmgm' && c.price === 1.81), 15_000);
  t.ok(await metric(b, 'linewire_cluster_applied_total') >= appliedBig + 3, 'node B applied it as two messages or more');
  ws.ws.close();

  // node C starts after B is gone: it replays the stream before it listens, then follows live
  await kill9(b.child);
  const c = await node('node-c');
  const keyC = shared ? keyA : await keyOn(c);
  t.equal(await odds(c, keyC), await odds(a, keyA), 'node C serves the same odds as node A');
  t.equal(await metric(c, 'linewire_cluster_applied_total'), await metric(a, 'linewire_cluster_applied_total'), 'node C applied every batch A applied');
  const wsA = await connect({ base: a.base } as TestApp, `/v1/ws/odds-fast/basketball_nba?apiKey=${keyA}`);
  await wsA.until((f) => f.type === 'snapshot');
  const onC = await (await client(() => c).post('/v1/ingest', SERVICE_ADMIN_KEY, { prices: h2h('williamhill_us', 1.85, 2.05) })).json() as { accepted: number };
  t.equal(onC.accepted, 2, 'node C takes an ingest');
  await wsA.until((f) => f.type === 'delta' && (f.changes ?? []).some((x) => x.event_id === ev.id && x.book === 'williamhill_us'));
  t.pass('a price ingested on node C reaches node A');
  wsA.ws.close();
});
