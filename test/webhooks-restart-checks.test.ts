// The once-a-second webhook checks across SIGKILL and restart (issue 6): a book stalled before the kill and found
// stale after the restart is announced by exactly one source_quality.breach, never again after a further restart,
// and its recovery reports the breach persisted before; with the real PostgreSQL, a breach detected but held from
// committing when the process is killed is announced once after the restart. The service runs as a child process
// (test/helpers/service-process.ts) on the embedded database and, with TEST_DATABASE_URL, on PostgreSQL.

import t from 'tap';
import { client, kill9, serviceDatabases, startService, SERVICE_ADMIN_KEY as ADMIN, type ServiceDatabase, type ServiceProcess } from './helpers/service-process.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

const j = (r: Response): Promise<any> => r.json() as Promise<any>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ENV = { WEBHOOK_ALLOW_PRIVATE: '1' };
// draftkings is a fast book: ok up to 15 s after its newest write, degraded to 60 s, breach to 180 s
const BOOK = 'draftkings';

/** One service on one database, with a Variant B subscription to source_quality.* on a path of its own. */
async function prepare(t: { teardown(fn: () => unknown): void }, db: ServiceDatabase, rx: Receiver) {
  let svc: ServiceProcess = await startService(t, db, ENV);
  const c = client(() => svc);
  const key = (await j(await c.post('/v1/admin/keys', ADMIN, { tier: 'business' }))).key as string;
  const path = `?sq-${db.name}`;
  const hook = await j(await c.post('/v1/webhooks', key, { destination_url: rx.url + path, events: ['source_quality.breach', 'source_quality.recovery'] }));
  const got = (type: string) => rx.requests.filter((r) => r.path.endsWith(path) && r.headers['x-service-event'] === type);
  const ingest = (ts: number, id: string) => c.post('/v1/ingest', ADMIN, {
    events: [{ id, sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' }],
    prices: [{ book: BOOK, event_id: id, market: 'h2h', outcome: 'Boston Celtics', price: 1.9, ts }],
  });
  return {
    svc: () => svc,
    restart: async () => { svc = await startService(t, db, ENV); },
    key, hook, path, got, ingest,
  };
}

t.test('a book stalled before the kill and found stale after the restart: exactly one source_quality.breach', async (t) => {
  const rx = await startReceiver(t);
  // every database at once: the wait while the processes are down is the same for all
  await Promise.all(serviceDatabases(t).map(async (db) => {
    const s = await prepare(t, db, rx);
    const written = Date.now() - 8000;
    t.equal((await s.ingest(written, `sq_${db.name}_1`)).status, 202, `${db.name}: the book writes (8 s ago: ok)`);
    // a tick sees it ok within a second and commits it healthy with its newest write; then the book stalls
    await sleep(2500);
    await kill9(s.svc().child);
    t.equal(s.got('source_quality.breach').length, 0, `${db.name}: no breach before the kill`);
    // down until the book's newest write is more than 60 s old: a breach that began while the process was down
    await sleep(Math.max(0, written + 61_000 - Date.now()));
    await s.restart();
    const [br] = await rx.waitFor((r) => r.path.endsWith(s.path) && r.headers['x-service-event'] === 'source_quality.breach', 10_000);
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
