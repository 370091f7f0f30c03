// A node whose PostgreSQL goes out of reach answers requests that need it with 503 SERVICE_UNAVAILABLE and a
// Retry-After (a passing outage), not 500 INTERNAL_ERROR, and serves them again once it is back. The database is
// the real server of TEST_DATABASE_URL seen through a TCP relay on loopback, which the test cuts and restores.

import net from 'node:net';
import t from 'tap';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';
import { testSchemaName } from './helpers/db.js';

const url = process.env.TEST_DATABASE_URL;
if (!url) {
  t.pass('needs TEST_DATABASE_URL (a PostgreSQL server to relay to): skipped');
} else {
  const target = new URL(url);
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const listen = (port: number) => new Promise<number>((resolve, reject) => {
    server = net.createServer((c) => {
      const up = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(c).add(up);
      c.pipe(up).pipe(c);
      const end = () => { c.destroy(); up.destroy(); sockets.delete(c); sockets.delete(up); };
      c.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
    });
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server!.address() as net.AddressInfo).port));
  });
  const cut = () => new Promise<void>((resolve) => {
    server!.close(() => resolve());
    for (const s of sockets) s.destroy();
    sockets.clear();
  });
  const port = await listen(0);
  t.teardown(async () => { if (server?.listening) await cut(); });
  const relayed = new URL(url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(port);

  t.test('database outage - 503 with Retry-After while PostgreSQL is unreachable, served again once it is back', async (t) => {
    const app = await startTestApp(t, { databaseUrl: relayed.toString(), schema: testSchemaName(), dropSchemaOnClose: true });
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    t.equal((await app.post('/v1/admin/keys', { tier: 'pro' }, admin)).status, 201, 'a key is made while the database is reachable');
    await cut();
    const res = await app.post('/v1/admin/keys', { tier: 'pro' }, admin);
    const body = (await res.json()) as { error_code: string; message: string };
    t.equal(res.status, 503, `503 while the database is unreachable (${body.message})`);
    t.equal(body.error_code, 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE');
    t.equal(res.headers.get('retry-after'), '5', 'Retry-After: 5');
    await listen(port);
    let status = 0;
    for (let i = 0; i < 50 && status !== 201; i++) {
      status = (await app.post('/v1/admin/keys', { tier: 'pro' }, admin)).status;
      if (status !== 201) await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(status, 201, 'keys are made again once the database is back');
  });
}
