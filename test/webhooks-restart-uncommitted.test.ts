// A webhook check's transition detected and not committed when the process is killed is announced once after
// the restart (issue 6). Real PostgreSQL only: the test holds a SHARE lock on webhook_check_state, so the
// service reads its state but the transaction that would commit the breach with its outbox row waits; the
// process is killed there, the lock released, and the service started again.

import t from 'tap';
import { BOOK, checkService as prepare, kill9, serviceDatabases } from './helpers/service-process.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a breach detected and not committed when the process is killed is announced once after the restart (postgres)', {
  skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL not set',
}, async (t) => {
  const [db] = serviceDatabases(t, ['postgres']);
  const rx = await startReceiver(t);
  const s = await prepare(t, db, rx);
  await kill9(s.svc().child);
  const sql = (await db.direct()).sql;
  // the book as a previous run left it: healthy, its newest write 100 s ago
  const newest = new Date(Date.now() - 100_000);
  await sql`insert into webhook_check_state (kind, key, state, newest_at, updated_at) values ('book', ${BOOK}, 'healthy', ${newest}, now())`;
  // reads pass, writes wait: the breach the first tick detects cannot commit
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => { locked = r; });
  const lock = sql.begin(async (tx) => {
    await tx`lock table webhook_check_state in share mode`;
    locked();
    await held;
    throw new Error('rollback');
  }).catch(() => undefined);
  await isLocked;
  await s.restart();
  await sleep(2500);
  t.equal(s.got('source_quality.breach').length, 0, 'detected but not committed: nothing sent');
  await kill9(s.svc().child);
  release();
  await lock;
  const [{ n }] = await sql`select count(*)::int as n from webhook_deliveries`;
  t.equal(n, 0, 'the outbox row went with the killed transaction');
  const [st] = await sql`select state from webhook_check_state where kind = 'book' and key = ${BOOK}`;
  t.equal(st.state, 'healthy', 'and the state is still healthy');
  await s.restart();
  const [br] = await rx.waitFor((r) => r.path.endsWith(s.path) && r.headers['x-service-event'] === 'source_quality.breach', 10_000);
  t.equal(br.body.data.book, BOOK, 'detected again after the restart and delivered');
  await sleep(2000);
  t.equal(s.got('source_quality.breach').length, 1, 'once');
  const [st2] = await sql`select state, detail from webhook_check_state where kind = 'book' and key = ${BOOK}`;
  t.same([st2.state, st2.detail], ['breached', 'breach'], 'committed with it');
  await kill9(s.svc().child);
});
