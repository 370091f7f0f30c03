// The once-a-second webhook checks across SIGKILL and restart (issue 6): a book stalled before the kill and found
// stale after the restart is announced by exactly one source_quality.breach, never again after a further restart,
// and its recovery reports the breach persisted before. The service runs as a child process
// (test/helpers/service-process.ts) on the embedded database and, with TEST_DATABASE_URL, on PostgreSQL; every
// database at once. (webhooks-restart-uncommitted.test.ts: a breach detected and not committed at the kill.)

import t from 'tap';
import { BOOK, checkService as prepare, kill9, serviceDatabases } from './helpers/service-process.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a book stalled before the kill and found stale after the restart: exactly one source_quality.breach', async (t) => {
  const rx = await startReceiver(t);
  // every database at once: they share the minute the book takes to reach breach
  await Promise.all(serviceDatabases(t).map(async (db) => {
    const s = await prepare(t, db, rx);
    const written = Date.now() - 8000;
    t.equal((await s.ingest(written, `sq_${db.name}_1`)).status, 202, `${db.name}: the book writes (8 s ago: ok)`);
    // a tick sees it ok within a second and commits it healthy with its newest write; then the book stalls
    await sleep(2500);
    await kill9(s.svc().child);
    t.equal(s.got('source_quality.breach').length, 0, `${db.name}: no breach before the kill`);
    // nothing writes the book after the restart: only its write from before can put it in breach, 60 s after it
    await s.restart();
    const [br] = await rx.waitFor((r) => r.path.endsWith(s.path) && r.headers['x-service-event'] === 'source_quality.breach',
      Math.max(0, written + 60_000 - Date.now()) + 15_000);
    t.same([br.body.data.book, br.body.data.from], [BOOK, 'ok'], `${db.name}: the breach of ${BOOK}, from ok`);
    t.ok(br.body.data.age_s > 60, `${db.name}: judged on the write before the kill (${br.body.data.age_s} s old)`);
    await sleep(2500);
    t.equal(s.got('source_quality.breach').length, 1, `${db.name}: exactly one`);
    await kill9(s.svc().child);
    await s.restart();
    await sleep(2500);
    t.equal(s.got('source_quality.breach').length, 1, `${db.name}: still one after a further kill and restart`);
    t.equal((await s.ingest(Date.now(), `sq_${db.name}_2`)).status, 202, `${db.name}: the book writes again`);
    const [rc] = await rx.waitFor((r) => r.path.endsWith(s.path) && r.headers['x-service-event'] === 'source_quality.recovery', 5000);
    t.equal(rc.body.data.from, 'breach', `${db.name}: the recovery reports the class the persisted breach reached`);
    t.ok(rc.body.data.breached_for_s >= 2.5, `${db.name}: breached since before the last restart (${rc.body.data.breached_for_s} s)`);
    await kill9(s.svc().child);
  }));
});
