// One process per DATA_DIR (http/data-dir-lock.ts): a second start on a DATA_DIR in use is refused, whatever the
// database and however long the path; a lock left by a killed process is taken over; close() releases it.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { lockDataDir } from '../http/data-dir-lock.js';
import { appDatabases, startTestApp } from './helpers/app.js';

const root = mkdtempSync(join(tmpdir(), 'lw-lock-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

t.test('data dir lock - held, refused, released', async (t) => {
  const dir = join(root, 'a');
  const release = lockDataDir(dir);
  t.match(readFileSync(join(dir, 'linewire.lock'), 'utf8').trim(), new RegExp(`^${process.pid} [0-9a-f-]+:\\d+$`), 'the lock names its owner and its start');
  t.throws(() => lockDataDir(dir), /in use by another process \(pid \d+/, 'a second lock while the owner lives is refused');
  release();
  const again = lockDataDir(dir);
  t.pass('released: it can be taken again');
  again();
});

t.test('data dir lock - a lock left by a process that is gone is taken over', async (t) => {
  const dir = join(root, 'b');
  mkdirSync(dir, { recursive: true });
  // a pid that existed and has exited
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  writeFileSync(join(dir, 'linewire.lock'), `${child.stdout}\n`);
  const release = lockDataDir(dir);
  t.equal(readFileSync(join(dir, 'linewire.lock'), 'utf8').split(' ')[0], String(process.pid), 'taken over');
  release();
});

t.test('data dir lock - a lock of a killed process not yet reaped by its parent (a zombie) is taken over', async (t) => {
  // regression: kill(pid, 0) and its start time still answer for a zombie, and a restart a second after a kill -9 of
  // an orphaned service was refused. The background sleep ends 0.3 s in, after its parent shell has become `sleep 5`
  // (exec), which never reaps it (a child that ended before the exec could be reaped by the shell itself).
  const dir = join(root, 'z');
  mkdirSync(dir, { recursive: true });
  const sh = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.teardown(() => { sh.kill('SIGKILL'); });
  const pid = Number((await new Promise<Buffer>((r) => sh.stdout.once('data', r))).toString().trim());
  let stat = '';
  for (let i = 0; i < 100 && !/\) Z /.test(stat); i++) {
    await new Promise((r) => setTimeout(r, 20));
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  }
  t.match(stat, /\) Z /, 'the child is a zombie');
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  writeFileSync(join(dir, 'linewire.lock'), `${pid} ${boot}:${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}\n`);
  const release = lockDataDir(dir);
  t.equal(readFileSync(join(dir, 'linewire.lock'), 'utf8').split(' ')[0], String(process.pid), 'taken over');
  release();
});

t.test('data dir lock - a lock naming a pid now held by another process (a restarted container\'s pid 1) is taken over', async (t) => {
  // the lock's pid is alive, but the process holding it started at another time than the lock's owner: the owner
  // was killed and its pid reused (regression: such a restart was refused for good)
  const dir = join(root, 'c');
  mkdirSync(dir, { recursive: true });
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  writeFileSync(join(dir, 'linewire.lock'), `${process.pid} ${boot}:1\n`);
  const release = lockDataDir(dir);
  t.match(readFileSync(join(dir, 'linewire.lock'), 'utf8').trim(), new RegExp(`^${process.pid} ${boot}:\\d+$`), 'taken over, with this process\'s start');
  t.throws(() => lockDataDir(dir), /in use by another process/, 'and held against a second lock of the same process');
  release();
  // another boot: whatever the pid, the owner is gone
  writeFileSync(join(dir, 'linewire.lock'), `${process.pid} 00000000-0000-0000-0000-000000000000:${readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[19]}\n`);
  lockDataDir(dir)();
  t.pass('a lock from another boot is taken over');
});

for (const database of appDatabases()) {
  t.test(`data dir lock - a second app on one DATA_DIR is refused (${database}), also on a path too long for the embedded socket`, async (t) => {
    // the embedded database's own socket check cannot see a DATA_DIR whose socket path passes 107 bytes (its socket
    // then lives in a temporary directory): two processes opened one PGlite there and lost each other's writes
    const dir = join(root, `${database}-${'x'.repeat(100)}`);
    const first = await startTestApp(t, { database, dataDir: dir, shards: 1 });
    await t.rejects(startTestApp(t, { database, dataDir: dir, shards: 1 }), /DATA_DIR .* is in use by another process/, 'the second start is refused');
    t.equal((await first.get('/health')).status, 200, 'the first goes on');
    await first.close();
    const second = await startTestApp(t, { database, dataDir: dir, shards: 1 });
    t.equal((await second.get('/health')).status, 200, 'once the first has closed, the DATA_DIR can be taken');
    await second.close();
  });
}
