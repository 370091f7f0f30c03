// The keys made at the first start are written to DATA_DIR/first-start-keys.txt before they are marked issued, so a
// first start that fails later (its port in use) does not lock the owner out: the next start finds them there.

import { readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { freshDataDir } from './helpers/db.js';
import { startTestApp } from './helpers/app.js';

t.test('first start - keys survive a first start that fails after making them', async (t) => {
  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  await t.rejects(startTestApp(t, { dataDir, adminKey: undefined, port, shards: 1 }), /cannot listen/, 'the first start fails: its port is taken');
  blocker.close();

  const file = join(dataDir, 'first-start-keys.txt');
  const text = readFileSync(file, 'utf8');
  t.equal(statSync(file).mode & 0o777, 0o600, 'mode 600');
  const admin = /admin key: (\S+)/.exec(text)?.[1];
  const demo = /demo key \(business\): (\S+)/.exec(text)?.[1];
  t.ok(admin !== undefined && demo !== undefined, 'both keys are in the file');

  const app = await startTestApp(t, { dataDir, adminKey: undefined, shards: 1 });
  t.same([app.app.firstStart.adminKey, app.app.firstStart.demoKey], [null, null], 'the next start makes no new keys');
  const made = await fetch(`${app.base}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: '{"tier":"free"}' });
  t.equal(made.status, 201, 'the admin key from the file works');
  t.equal((await app.get('/v1/sports/basketball_nba/odds', { 'X-API-Key': demo! })).status, 200, 'the demo key from the file works');
  t.equal(readFileSync(file, 'utf8'), text, 'the file is left as it was');
});
