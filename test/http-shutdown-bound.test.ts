// A shutdown that cannot finish: the service's PostgreSQL stops answering (connections open, nothing comes back),
// then SIGTERM. The last writes (usage, webhooks, history) waited on it for ever and the process never exited (the
// embedded-database audit, with the database files made immutable); SHUTDOWN_TIMEOUT_MS bounds it.

import t from 'tap';
import { serviceDatabases, startService } from './helpers/service-process.js';
import { startRelay } from './helpers/tcp-relay.js';

const url = process.env.TEST_DATABASE_URL;

t.test('shutdown - a database that stopped answering does not hold the process past SHUTDOWN_TIMEOUT_MS',
  { skip: url ? false : 'TEST_DATABASE_URL is not set (a PostgreSQL server to relay to)' }, async (t) => {
    const [db] = serviceDatabases(t, ['postgres']);
    const target = new URL(url!);
    const relay = await startRelay(t, target.hostname, Number(target.port || 5432));
    t.teardown(() => relay.thaw());
    const relayed = new URL(url!);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    const svc = await startService(t, { ...db, env: async () => ({ ...(await db.env()), DATABASE_URL: relayed.toString() }) },
      { SHUTDOWN_TIMEOUT_MS: '2000', LOG_LEVEL: 'error' });
    // a priced request leaves usage to write at shutdown
    await fetch(`${svc.base}/v1/sports`).then((r) => r.arrayBuffer());
    let err = '';
    svc.child.stdout!.on('data', (c: Buffer) => { err += c.toString(); });
    relay.freeze();
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => svc.child.once('exit', (code) => resolve(code)));
    svc.child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 20_000))]);
    const ms = Date.now() - started;
    t.equal(code, 1, `exited with 1 after ${ms} ms (without the bound it never exited)`);
    t.match(err, /shutdown did not finish within 2000 ms/, 'saying why');
  });
