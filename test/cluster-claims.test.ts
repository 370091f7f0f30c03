// Work that must happen once when several nodes share one database (issue 9), at the SQL layer: webhook attempts
// claimed with a lease, outbox rows keyed by their event, check transitions moved once, closing captures claimed,
// credits added as deltas. Each "node" is a connection of its own calling the statements a node makes.
//
// What runs where: on the real PostgreSQL (TEST_DATABASE_URL) the two nodes are two connection pools on one schema
// and their statements run at the same moment (Promise.all), so row locks and SKIP LOCKED decide; the embedded
// PGlite is one session in one process, so there both nodes are the one handle and their statements run one after
// the other: the same SQL, its idempotency without the concurrency. test/cluster-nodes.test.ts runs two whole
// nodes on PostgreSQL.

import { tmpdir } from 'node:os';
import t from 'tap';
import type { EventMeta, ClosingRow } from '../engine/closing.js';
import { meteredSince, saveMeter } from '../sql/accounts.js';
import { openDatabase, type Database } from '../sql/connection.js';
import { captureClosing } from '../sql/history.js';
import { createKey } from '../sql/keys.js';
import { claimDue, insertWebhook, recordResults, renewClaims, writeOutbox, type NewDelivery } from '../sql/webhooks.js';
import { testDatabases } from './helpers/db.js';

const T0 = Date.parse('2030-03-01T12:00:00Z');

for (const d of testDatabases()) {
  t.test(d.name, async (t) => {
    const a = await d.open();
    t.teardown(() => a.close());
    // node B: a second pool on the same schema (the embedded database has one session: the same handle)
    const b: Database = d.kind === 'external'
      ? await openDatabase({ databaseUrl: process.env.TEST_DATABASE_URL!, dataDir: tmpdir(), schema: a.schema })
      : a;
    if (b !== a) t.teardown(() => b.close());
    const both = <T>(fa: () => Promise<T>, fb: () => Promise<T>): Promise<[T, T]> =>
      b === a ? fa().then(async (x) => [x, await fb()]) : Promise.all([fa(), fb()]);

    const { row: key } = await createKey(a, { tier: 'business' });
    const { row: hook } = (await insertWebhook(a, {
      publicId: null, ownerId: key.accountId, billingKeyId: key.id, variant: 'A', url: 'https://93.184.216.34/h', events: ['line_move'],
      sportKeys: null, minEdgePct: null, format: 'json', secret: 's',
    }, new Date(T0), 10, null))!;
    const delivery = (i: number, dedupe: string | null, type = 'line_move'): NewDelivery => ({
      deliveryId: `dlv_${type}_${i}_${Math.random()}`, webhookPk: hook.pk, eventId: `evt_${i}`, eventType: type, body: '{}',
      status: 'pending', nextAttemptAt: T0, dedupe,
    });

    t.test('webhook attempts: two nodes polling at once claim disjoint rows; a lease that ran out is taken over', async (t) => {
      await writeOutbox(a, Array.from({ length: 20 }, (_, i) => delivery(i, `claim:${i}`)), T0, {});
      const [ca, cb] = await both(
        () => claimDue(a, T0, 12, [], { node: 'node-a', until: T0 + 1000 }),
        () => claimDue(b, T0, 12, [], { node: 'node-b', until: T0 + 5000 }),
      );
      const pa = ca.map((x) => x.pk);
      const pb = cb.map((x) => x.pk);
      t.equal(pa.length + pb.length, 20, `every due row claimed once (${pa.length} by A, ${pb.length} by B)`);
      t.same(pa.filter((pk) => pb.includes(pk)), [], 'no row claimed by both');
      t.same(await claimDue(b, T0 + 500, 100, [], { node: 'node-c', until: T0 + 9000 }), [], 'a third node finds nothing while the leases hold');
      t.same((await claimDue(b, T0 + 500, 100, [], { node: 'node-b', until: T0 + 5000 })).map((x) => x.pk).sort(), [...pb].sort(),
        'a node takes its own claims back at once (its restart)');
      const taken = await claimDue(b, T0 + 1500, 100, pb, { node: 'node-b', until: T0 + 6500 });
      t.same(taken.map((x) => x.pk).sort(), [...pa].sort(), 'A\'s claims, run out, are taken by B');
      t.equal((await renewClaims(a, pa, { node: 'node-a', until: T0 + 3000 })).size, 0, 'A cannot renew claims it lost');
      t.equal((await renewClaims(b, pa, { node: 'node-b', until: T0 + 9000 })).size, pa.length, 'B renews them');
      await recordResults(a, [{ deliveryPk: pa[0], webhookPk: hook.pk, number: 1, attemptedAt: T0, statusCode: 200, durationMs: 1, error: null,
        status: 'delivered', nextAttemptAt: null, attempts: 1, failures: 'none', attempted: true }], 15, T0, 'node-a');
      const [row] = await a.sql`select status, claimed_by from webhook_deliveries where id = ${pa[0]}`;
      t.same([row.status, row.claimed_by], ['delivered', 'node-b'], 'a late outcome of A leaves B\'s claim alone');
      await a.sql`delete from webhook_deliveries`;
    });

    t.test('webhook events: the same event written by two nodes is one outbox row', async (t) => {
      const key1 = 'line_move:price:evt_1:h2h::fanduel:NaN:0:1893499200000';
      const [wa, wb] = await both(
        () => writeOutbox(a, [delivery(1, key1)], T0, { claim: { node: 'node-a', until: T0 + 1000 } }),
        () => writeOutbox(b, [delivery(1, key1)], T0, { claim: { node: 'node-b', until: T0 + 1000 } }),
      );
      t.same([wa.pks[0] >= 0, wb.pks[0] >= 0].sort(), [false, true], 'one node wrote it, the other skipped it');
      const rows = await a.sql`select claimed_by from webhook_deliveries where dedupe_key = ${key1}`;
      t.equal(rows.length, 1, 'one row');
      t.equal(rows[0].claimed_by, wa.pks[0] >= 0 ? 'node-a' : 'node-b', 'claimed by the node that wrote it, which attempts it');
      await a.sql`delete from webhook_deliveries`;
    });

    t.test('check transitions: two nodes finding the same breach move the stored state once and write one row', async (t) => {
      const healthy = { kind: 'book' as const, key: 'draftkings', state: 'healthy', since: null, detail: null, newestAt: T0 - 100_000 };
      await writeOutbox(a, [], T0, { transitions: [{ from: 'unknown', state: healthy, rows: [] }] });
      const breached = (since: number) => ({ ...healthy, state: 'breached', since, detail: 'breach' });
      const [wa, wb] = await both(
        () => writeOutbox(a, [], T0, { transitions: [{ from: 'healthy', state: breached(T0), rows: [delivery(1, null, 'source_quality.breach')] }] }),
        () => writeOutbox(b, [], T0 + 7, { transitions: [{ from: 'healthy', state: breached(T0 + 7), rows: [delivery(2, null, 'source_quality.breach')] }] }),
      );
      const winner = wa.transitions[0].length === 1 ? wa : wb;
      const loser = winner === wa ? wb : wa;
      t.same([wa.transitions[0].length + wb.transitions[0].length], [1], 'one node made the transition and wrote its event');
      t.same(loser.transitions[0], [], 'the other wrote nothing');
      t.same(loser.adopt.map((s) => [s.state, s.since]), [['breached', winner === wa ? T0 : T0 + 7]], 'and takes the stored state over');
      const [{ n }] = await a.sql`select count(*)::int as n from webhook_deliveries where event_type = 'source_quality.breach'`;
      t.equal(n, 1, 'one outbox row');
      const hb = await writeOutbox(b, [], T0 + 10, { heartbeats: [{ ...healthy, newestAt: T0 - 50_000 }] });
      t.same(hb.adopt.map((s) => [s.state, s.newestAt]), [['breached', T0 - 50_000]],
        'a lagging node\'s heartbeat moves the newest write on, not the state, and learns the state');
      const parser = { kind: 'parser' as const, key: 'sim', state: 'degraded', since: T0, detail: null, newestAt: null };
      const [pa, pb] = await both(
        () => writeOutbox(a, [], T0, { transitions: [{ from: 'ok', state: parser, rows: [delivery(3, null, 'parser.degraded')] }] }),
        () => writeOutbox(b, [], T0, { transitions: [{ from: 'ok', state: parser, rows: [delivery(4, null, 'parser.degraded')] }] }),
      );
      t.equal(pa.transitions[0].length + pb.transitions[0].length, 1, 'a first transition (no stored row) is made once too');
      await a.sql`delete from webhook_deliveries`;
    });

    t.test('closing captures: two nodes capturing one event write one capture, never a mix of both', async (t) => {
      const meta: EventMeta = { id: 'ev_cap_1', sport: 'basketball_nba', commence: T0, home: 'Boston Celtics', away: 'Miami Heat' };
      const row = (source: string, price: number): ClosingRow => ({
        source, market_key: 'h2h', market_label: 'Moneyline', player_name: '', line: null, over_price: price, under_price: 2, snapshot_time: T0 - 1000,
      });
      // the nodes' pregame views differ (one saw a late pinnacle quote, the other a late betmgm one)
      const [ca, cb] = await both(
        () => captureClosing(a, meta, [row('fanduel', 1.9), row('pinnacle', 1.95)], T0 + 5),
        () => captureClosing(b, meta, [row('fanduel', 1.91), row('betmgm', 1.93)], T0 + 9),
      );
      t.same([ca, cb].sort(), [false, true], 'one node captured it');
      const rows = await a.sql`select source, over_price from closing_lines where event_id = ${meta.id} order by source`;
      t.same(rows.map((r) => [r.source, r.over_price]),
        ca ? [['fanduel', 1.9], ['pinnacle', 1.95]] : [['betmgm', 1.93], ['fanduel', 1.91]], 'its rows, and only its rows');
      const [ev] = await a.sql`select captured_at from history_events where event_id = ${meta.id}`;
      t.equal((ev.captured_at as Date).getTime(), ca ? T0 + 5 : T0 + 9, 'captured once, when the winner did');
      t.equal(await captureClosing(b, meta, [row('caesars', 2)], T0 + 60_000), false, 'a later capture (a restart) adds nothing');
    });

    t.test('credits: two nodes charging one account add up; each reads the other\'s spend back', async (t) => {
      const { row: k } = await createKey(a, { tier: 'starter' });
      const since = new Date(Date.now() - 60_000);
      const charge = (used: number) => [{
        id: k.accountId, tier: k.tier, used, granted: 0, periodStart: k.periodStart, periodEnd: k.periodEnd, allowance: null, lastRequestAt: null,
      }];
      const usage = (credits: number) => [{ accountId: k.accountId, periodStart: k.periodStart, endpoint: 'GET /v1/sports/{sport_key}/props', calls: credits / 3, credits }];
      for (let i = 0; i < 5; i++) {
        await both(() => saveMeter(a, charge(30), usage(30), []), () => saveMeter(b, charge(45), usage(45), []));
      }
      const [acc] = await a.sql`select credits_used::int as used, credits_remaining::int as remaining from accounts where id = ${k.accountId}`;
      t.same([acc.used, acc.remaining], [375, 20_000 - 375], 'used is the sum of both nodes\' charges (5 x 30 + 5 x 45)');
      const [u] = await a.sql`select calls::int, credits::int from account_usage where account_id = ${k.accountId}`;
      t.same([u.calls, u.credits], [125, 375], 'and so is the per-endpoint usage');
      const read = await meteredSince(b, since);
      t.same(read.balances.filter((x) => x.id === k.accountId).map((x) => x.creditsUsed), [375], 'a node reading back sees the total');
    });
  });
}
