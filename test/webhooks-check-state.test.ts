// The state the once-a-second webhook checks compare against survives a restart (issue 6): the evaluator reports
// every change of it (persist), restores it, and judges a book not written since the restart on its newest write
// persisted before; the outbox rows of a check's events and its new state commit together or not at all.

import t from 'tap';
import { BOOKMAKERS } from '../engine/catalogue.js';
import { STATE_HEARTBEAT_MS, WebhookEvaluator, type CheckState, type WebhookEvent } from '../engine/webhook-events.js';
import { createKey } from '../sql/keys.js';
import { insertDeliveries, insertWebhook, loadCheckStates } from '../sql/webhooks.js';
import { testDatabases } from './helpers/db.js';

const book = (k: string) => BOOKMAKERS.findIndex((b) => b.key === k);
const T0 = 1_800_000_000_000;
const DK = book('draftkings'); // fast: ok <= 15 s, degraded <= 60 s, breach <= 180 s

function setup(types: string[], restored: CheckState[] = []) {
  const out: WebhookEvent[] = [];
  const saved = new Map<string, CheckState>();
  const ev = new WebhookEvaluator({
    event: () => undefined,
    player: () => null,
    emit: (e) => out.push(e),
    persist: (s) => saved.set(`${s.kind}:${s.key}`, s),
    feed: 'test',
  });
  ev.setWanted(types);
  ev.restore(restored);
  return { ev, out, saved };
}

const SQ = ['source_quality.breach', 'source_quality.recovery'];

t.test('every change of a book\'s verdict is persisted with its newest write; moved newest writes every 10 s, together', async (t) => {
  const { ev, saved } = setup(SQ);
  const newest: number[] = [];
  newest[DK] = T0;
  ev.books(T0 + 1000, newest);
  t.same(saved.get('book:draftkings'), { kind: 'book', key: 'draftkings', state: 'healthy', since: null, detail: null, newestAt: T0 }, 'seen ok: healthy');
  saved.clear();
  newest[DK] = T0 + STATE_HEARTBEAT_MS - 1;
  ev.books(T0 + STATE_HEARTBEAT_MS, newest);
  t.equal(saved.size, 0, 'nothing to write while the newest write moved less than the heartbeat');
  newest[DK] = T0 + STATE_HEARTBEAT_MS;
  ev.books(T0 + STATE_HEARTBEAT_MS + 1000, newest);
  t.equal(saved.get('book:draftkings')?.newestAt, T0 + STATE_HEARTBEAT_MS, 'the heartbeat');
  saved.clear();
  const FD = book('fanduel');
  newest[FD] = T0 + STATE_HEARTBEAT_MS + 1000;
  ev.books(T0 + STATE_HEARTBEAT_MS + 1500, newest);
  t.same([...saved.keys()], ['book:fanduel'], 'a book seen ok for the first time is written at once');
  saved.clear();
  newest[FD] = T0 + STATE_HEARTBEAT_MS + 2000;
  newest[DK] = T0 + 2 * STATE_HEARTBEAT_MS;
  ev.books(T0 + 2 * STATE_HEARTBEAT_MS + 100, newest);
  t.same([...saved.keys()].sort(), ['book:draftkings', 'book:fanduel'], 'one book due for its heartbeat takes along every book that moved');
  saved.clear();
  ev.books(T0 + 2 * STATE_HEARTBEAT_MS + 61_000, newest);
  t.same(saved.get('book:draftkings'), {
    kind: 'book', key: 'draftkings', state: 'breached', since: T0 + 2 * STATE_HEARTBEAT_MS + 61_000, detail: 'breach', newestAt: T0 + 2 * STATE_HEARTBEAT_MS,
  }, 'the breach with when and how');
});

t.test('restored healthy: a book not written since the restart is judged on its persisted newest write, once', async (t) => {
  const { ev, out, saved } = setup(SQ, [{ kind: 'book', key: 'draftkings', state: 'healthy', since: null, detail: null, newestAt: T0 }]);
  ev.books(T0 + 30_000, []);
  t.equal(out.length, 0, 'degraded after 30 s: no breach');
  ev.books(T0 + 200_000, []);
  ev.books(T0 + 201_000, []);
  t.same(out.map((e) => [e.type, e.data.book, e.data.to]), [['source_quality.breach', 'draftkings', 'stale']], 'one breach, found stale');
  t.equal(saved.get('book:draftkings')?.state, 'breached', 'persisted breached');
});

t.test('restored breached: no second breach; the recovery reports the persisted breach', async (t) => {
  const { ev, out } = setup(SQ, [{ kind: 'book', key: 'draftkings', state: 'breached', since: T0 + 61_000, detail: 'breach', newestAt: T0 }]);
  ev.books(T0 + 300_000, []);
  t.equal(out.length, 0, 'still breached: nothing');
  const newest: number[] = [];
  newest[DK] = T0 + 301_000;
  ev.books(T0 + 301_500, newest);
  t.same(out.map((e) => [e.type, e.data.from, e.data.breached_for_s]), [['source_quality.recovery', 'breach', 240.5]], 'recovery from the persisted breach');
});

t.test('a book never seen ok is remembered as such, and other feeds\' and unknown books\' rows are ignored', async (t) => {
  const { ev, out } = setup(SQ, [
    { kind: 'book', key: 'draftkings', state: 'unknown', since: null, detail: null, newestAt: T0 },
    { kind: 'book', key: 'no_such_book', state: 'healthy', since: null, detail: null, newestAt: T0 },
    { kind: 'parser', key: 'another_feed', state: 'degraded', since: T0, detail: null, newestAt: null },
  ]);
  ev.books(T0 + 200_000, []);
  t.equal(out.length, 0, 'never ok: no breach');
});

t.test('parser.degraded: persisted when raised and cleared; restored degraded is not announced again', async (t) => {
  const a = setup(['parser.degraded']);
  const c = { observations: 0, rejected: 0 };
  a.ev.parser(T0, c);
  c.observations = 100; c.rejected = 50;
  a.ev.parser(T0 + 1000, c);
  t.equal(a.out.length, 1, 'raised');
  t.same(a.saved.get('parser:test'), { kind: 'parser', key: 'test', state: 'degraded', since: T0 + 1000, detail: null, newestAt: null }, 'persisted degraded');
  c.observations = 100; c.rejected = 50;
  a.ev.parser(T0 + 120_000, c);
  t.equal(a.saved.get('parser:test')?.state, 'degraded', 'a quiet minute is no recovery');
  c.observations = 200;
  a.ev.parser(T0 + 121_000, c);
  t.equal(a.saved.get('parser:test')?.state, 'ok', 'cleared by 100 clean items');

  const b = setup(['parser.degraded'], [{ kind: 'parser', key: 'test', state: 'degraded', since: T0, detail: null, newestAt: null }]);
  const c2 = { observations: 0, rejected: 0 };
  b.ev.parser(T0 + 500_000, c2);
  c2.observations = 100; c2.rejected = 60;
  b.ev.parser(T0 + 501_000, c2);
  t.equal(b.out.length, 0, 'still degraded after the restart: not announced again');
});

t.test('the parser check samples at most once a second (it also runs after every ingest)', async (t) => {
  const { ev, out } = setup(['parser.degraded']);
  const c = { observations: 0, rejected: 0 };
  ev.parser(T0, c);
  for (let i = 1; i <= 50; i++) {
    c.observations += 1; c.rejected += 1;
    ev.parser(T0 + i, c);
  }
  t.equal(out.length, 1, 'judged against the first sample of the window: 20 rejected items suffice');
  t.equal(out[0].data.observations, 20, 'at the twentieth');
});

for (const d of testDatabases()) {
  t.test(`outbox rows and check states commit together (${d.name})`, async (t) => {
    const db = await d.open();
    t.teardown(() => db.close());
    const state: CheckState = { kind: 'book', key: 'draftkings', state: 'breached', since: T0, detail: 'stale', newestAt: T0 - 200_000 };
    const row = {
      deliveryId: 'dlv_state_1', webhookPk: 999_999, eventId: 'evt_1', eventType: 'source_quality.breach', body: '{}',
      status: 'pending' as const, nextAttemptAt: T0, dedupe: null,
    };
    // a subscription deleted since its row was queued: the row is skipped (it broke the foreign key, and the outbox
    // retried the batch for good)
    t.same(await insertDeliveries(db, [row], T0), [-1], 'a delivery of no subscription is skipped');
    const { row: key } = await createKey(db, { tier: 'business' });
    const { row: hook } = (await insertWebhook(db, {
      publicId: null, ownerId: key.accountId, billingKeyId: key.id, variant: 'A', url: 'https://93.184.216.34/h', events: ['source_quality_breach'],
      sportKeys: null, minEdgePct: null, format: 'json', secret: 's',
    }, new Date(T0), 10, null))!;
    await t.rejects(insertDeliveries(db, [{ ...row, webhookPk: hook.pk, body: 'a\u0000b' }], T0, [state]), 'a delivery the database refuses (a NUL in its text) fails the insert');
    t.same(await loadCheckStates(db), [], 'and the state was not written');
    await insertDeliveries(db, [], T0, [state, { kind: 'parser', key: 'sim', state: 'degraded', since: T0, detail: null, newestAt: null }]);
    t.same(await loadCheckStates(db), [{ kind: 'book', key: 'draftkings', state: 'breached', since: T0, detail: 'stale', newestAt: T0 - 200_000 },
      { kind: 'parser', key: 'sim', state: 'degraded', since: T0, detail: null, newestAt: null }], 'written alone, read back');
    await insertDeliveries(db, [], T0 + 1, [{ kind: 'book', key: 'draftkings', state: 'healthy', since: null, detail: null, newestAt: T0 - 300_000 }]);
    const [dk] = await loadCheckStates(db);
    t.same([dk.state, dk.since, dk.detail, dk.newestAt], ['healthy', null, null, T0 - 200_000], 'updated; the newest write never goes back');
  });
}
