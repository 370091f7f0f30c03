// SIM_STALL and the admin stall call: a stalled book gets no quotes and no poller pulses from the simulator, so
// /v1/status reports it stale and without rows, while the feed's poller stays healthy.

import t from 'tap';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';

type Status = {
  sources: { source: string; healthy: boolean; sla_state: string }[];
  data_freshness: { stale_sources: string[]; sources_without_rows: string[] | null };
  poller_health: { feeds: { feed: string; circuit: string; pulses: number; consecutive_failures: number }[] };
};

t.test('simulator - stalled books', async (t) => {
  const app = await startTestApp(t, { feeds: ['sim'], simStall: ['draftkings'], simRate: 200, shards: 1 });
  const status = app.app.services.status!;
  const poller = status.poller('sim');
  t.ok(poller.pulses >= 1, 'the snapshot was reported as a pulse');
  const body = (await (await app.get('/v1/status')).json()) as Status;
  const dk = body.sources.find((s) => s.source === 'draftkings')!;
  t.same([dk.healthy, dk.sla_state], [false, 'stale'], 'SIM_STALL=draftkings: never quoted, stale');
  t.ok(body.data_freshness.stale_sources.includes('draftkings'), 'in stale_sources');
  t.same(body.data_freshness.sources_without_rows, ['draftkings'], 'the only simulated book without rows');
  t.same(body.data_freshness.stale_sources.sort(), body.sources.filter((s) => !s.healthy).map((s) => s.source).sort(), 'complement of healthy');
  t.match(body.poller_health.feeds[0], { feed: 'sim', circuit: 'closed', consecutive_failures: 0 }, 'the feed poller is closed');
  t.notOk(poller.sourcePulses.has('draftkings'), 'no pulse for the stalled book');

  const post = (b: unknown, auth = `Bearer ${ADMIN_KEY}`) => app.post('/v1/admin/sim/stall', b, { authorization: auth });
  t.equal((await post({ books: ['nobook'] })).status, 422, 'unknown book: 422');
  t.equal((await post({ books: 'fanduel' })).status, 422, 'not an array: 422');
  t.equal((await post({ books: ['pointsbetus'] })).status, 422, 'a book the simulator does not quote (retired): 422 (regression: listed as stalled)');
  t.equal((await post({ books: ['fanduel'] }, 'Bearer nope')).status, 401, 'admin key required');
  const res = await post({ books: ['fanduel'] });
  t.same([res.status, await res.json()], [200, { stalled: ['fanduel'] }], 'the set is replaced');
  const before = poller.sourcePulses.get('fanduel')!;
  await new Promise((r) => setTimeout(r, 400));
  t.equal(poller.sourcePulses.get('fanduel'), before, 'a stalled book gets no more pulses');
  t.ok(poller.sourcePulses.has('draftkings'), 'draftkings resumed: pulsed again');
  const quiet = app.app.services.hub.readModel.newestByBook;
  const { BOOK_INDEX } = await import('../engine/ingest.js');
  const at = quiet[BOOK_INDEX.get('fanduel')!];
  await new Promise((r) => setTimeout(r, 400));
  t.equal(quiet[BOOK_INDEX.get('fanduel')!], at, 'and no more quotes');
  t.same(await (await app.get('/v1/admin/sim/stall', { authorization: `Bearer ${ADMIN_KEY}` })).json(), { stalled: ['fanduel'] }, 'GET lists the stalled books');
});

t.test('simulator - stalling books on a node without the simulator is 409 (regression: 200, nothing stalled)', async (t) => {
  const app = await startTestApp(t, { shards: 1 });
  const res = await app.post('/v1/admin/sim/stall', { books: ['fanduel'] }, { authorization: `Bearer ${ADMIN_KEY}` });
  t.equal(res.status, 409, '409');
  t.equal(((await res.json()) as { error_code: string }).error_code, 'SIMULATOR_NOT_RUNNING', 'SIMULATOR_NOT_RUNNING');
});
