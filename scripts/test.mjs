// `npm test`: type-check and compile with tsc (strict), run every test file (tap's library, one plain node process
// per file), and end with the plain line `N passed, N failed` (counts of tests) that CI reads.
import { spawn, execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
rmSync(join(root, 'dist/test'), { recursive: true, force: true });
rmSync(join(root, 'dist/.tsbuildinfo'), { force: true });
try {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
} catch {
  process.stdout.write('\ntype check failed\n0 passed, 1 failed\n');
  process.exit(1);
}
// Every temporary file of the run (embedded databases, unix sockets, data directories of service processes) goes
// under one directory, on the memory file system when the machine has one: copying a PGlite data directory (971
// files, 39 MB) took 1.2 s of system CPU on this machine's disk against 0.1 s in /dev/shm, and the embedded
// databases are copied about two hundred times a run. Children inherit it through TMPDIR (os.tmpdir()).
const shm = '/dev/shm';
let tmpRoot = tmpdir();
try {
  accessSync(shm, constants.W_OK);
  if (statSync(shm).isDirectory()) tmpRoot = shm;
} catch { /* no memory file system: the default temporary directory */ }
const runTmp = mkdtempSync(join(tmpRoot, 'lw-test-'));
process.env.TMPDIR = runTmp;
process.on('exit', () => rmSync(runTmp, { recursive: true, force: true }));
// interrupted, the run stops its test processes and still removes them (in /dev/shm they would hold memory until the
// machine restarts)
const running = new Set();
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    // each file is a process group of its own (detached), so the service processes it started go with it
    for (const child of running) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch { /* gone already */ }
    }
    process.exit(1);
  });
}
// Initialised PGlite data directories for the whole run, copied for every embedded database by test/helpers/db.ts:
// one empty (initdb costs about 6 s of CPU), one with every migration applied (about 0.4 s of CPU an open, for the
// tests whose database or service migrates at start).
const template = join(runTmp, 'tpl');
const migrated = join(runTmp, 'tpl-migrated');
mkdirSync(join(template, 'pg'), { recursive: true });
execFileSync(process.execPath, ['--input-type=module', '-e',
  `import { PGlite } from '@electric-sql/pglite';
   import { cpSync } from 'node:fs';
   import { openDatabase } from './dist/sql/connection.js';
   import { migrate } from './dist/sql/migrate.js';
   const pg = await PGlite.create(${JSON.stringify(join(template, 'pg'))});
   await pg.close();
   cpSync(${JSON.stringify(join(template, 'pg'))}, ${JSON.stringify(join(migrated, 'pg'))}, { recursive: true });
   const db = await openDatabase({ dataDir: ${JSON.stringify(migrated)} });
   await migrate(db);
   await db.close();`],
{ cwd: root, stdio: 'inherit' });

const only = process.argv.slice(2);
const files = readdirSync(join(root, 'dist/test'))
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => join('dist/test', f));
// The files that take longest start first, so that the run does not end waiting for one of them to finish alone
// (longest first; timed on this machine, 2026-11-26): a name that no longer matches is simply not moved.
const SLOW = ['history-export-stream', 'webhooks-restart-checks', 'sql-keys', 'http-auth-credits', 'sql-connection',
  'history-closing', 'webhooks-delivery', 'ws-limits', 'webhooks-restart', 'history-export-slow-client',
  'history-export-cache', 'http-live'];
const rank = (f) => {
  const i = SLOW.findIndex((s) => f.endsWith(`/${s}.test.js`));
  return i < 0 ? SLOW.length : i;
};
files.sort((a, b) => rank(a) - rank(b));

// Each file runs in a plain `node` process of its own, JOBS at a time, and prints TAP through tap's own library,
// as under tap's runner. The runner itself is not used: it starts every file (and every thread and process the file
// starts: shard workers, service processes) with a TypeScript loader and a coverage hook, which doubled the CPU a
// file takes although the files are compiled JavaScript already. TAP_TIMEOUT is the limit of one file, which tap
// then reports with the handles still open; the runner kills a file that outlives it by a minute.
const JOBS = Number(process.env.TEST_JOBS) || 4;
const TIMEOUT_S = 180;
const started = Date.now();
let pass = 0;
let fail = 0;
let topFail = 0;
let seq = 0;
// every failing test point, named with its file, listed again just before the closing count: a CI log that keeps only
// the end of the output still says what failed
const failures = [];
let currentFile = '';

const out = (line) => {
  process.stdout.write(line + '\n');
  const nf = /^( {4,})not ok \d+ - (.*)$/.exec(line);
  if (nf && !/# (SKIP|TODO)/.test(nf[2])) failures.push(`${currentFile}:${' '.repeat(nf[1].length - 3)}${nf[2]}`);
  // top-level results of each file's subtests are indented by four spaces under the file's own test point
  const m = /^    (not ok|ok) \d+ /.exec(line);
  if (m) m[1] === 'ok' ? pass++ : fail++;
  const top = /^(not ok) \d+ - /.exec(line);
  if (top && !/# (SKIP|TODO)/.test(line)) topFail++;
};

/** one file: its TAP lines indented under "# Subtest: file", then its own test point */
function runFile(file) {
  const job = { file, lines: [], done: false, onLine: null, onDone: null };
  const t0 = Date.now();
  // --liftoff-only: PGlite's WebAssembly (the embedded PostgreSQL) stays on V8's baseline compiler. Its optimising
  // tier recompiled the hot part of the 9 MB module in every test process, which lives seconds: 20 to 40 % of a
  // database test file's CPU (sql-keys 16.6 -> 13.6 s, webhooks-delivery 9.2 -> 5.6 s), for code that ran too briefly to
  // repay it. The service itself (npm start) keeps the default.
  const child = spawn(process.execPath, ['--liftoff-only', '--enable-source-maps', file], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LW_PG_TEMPLATE: template, LW_PG_TEMPLATE_MIGRATED: migrated, TAP_TIMEOUT: String(TIMEOUT_S) },
  });
  running.add(child);
  const alarm = setTimeout(() => {
    child.kill('SIGALRM');
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  }, (TIMEOUT_S + 60) * 1000);
  let buf = '';
  const line = (l) => { if (l !== 'TAP version 14') (job.onLine ?? ((x) => job.lines.push(x)))('    ' + l); };
  child.stdout.on('data', (chunk) => {
    buf += chunk.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      line(buf.slice(0, nl).trimEnd());
      buf = buf.slice(nl + 1);
    }
  });
  job.finished = new Promise((resolve) => child.on('close', (code, signal) => {
    clearTimeout(alarm);
    running.delete(child);
    if (buf) line(buf);
    job.code = code;
    job.signal = signal;
    job.ms = Date.now() - t0;
    resolve();
  }));
  return job;
}

process.stdout.write('TAP version 14\n');
if (files.length === 0) process.stdout.write(`# no test file matches ${only.join(' ')}\n`);
const jobs = [];
let next = 0;
const launch = () => {
  while (next < files.length && jobs.filter((j) => j.code === undefined && j.signal === undefined).length < JOBS) {
    const job = runFile(files[next++]);
    jobs.push(job);
    job.finished.then(launch);
  }
};
launch();
// the oldest running file prints as it goes, the others when their turn comes
for (let i = 0; i < files.length; i++) {
  while (jobs.length <= i) await new Promise((r) => setTimeout(r, 50));
  const job = jobs[i];
  currentFile = job.file;
  out(`# Subtest: ${job.file}`);
  const failedBefore = fail;
  for (const l of job.lines) out(l);
  job.lines = [];
  job.onLine = out;
  await job.finished;
  const ok = job.code === 0;
  // a file that failed with no failing test of its own (it did not load, or died between tests) counts as one
  if (!ok && fail === failedBefore) fail++;
  out(`${ok ? 'ok' : 'not ok'} ${++seq} - ${job.file} # time=${job.ms}ms`);
  if (!ok) {
    out(`  ---\n  exitCode: ${job.code}\n  signal: ${job.signal}\n  ...`);
    failures.push(`${job.file}: exit code ${job.code}, signal ${job.signal}`);
  }
  out('');
}
out(`1..${seq}`);
out(`# time=${Date.now() - started}ms`);
const allOk = jobs.every((j) => j.code === 0);
if (fail === 0 && (topFail > 0 || !allOk)) fail = Math.max(1, topFail);
if (failures.length > 0) {
  process.stdout.write(`\n# what failed (${failures.length}${failures.length > 60 ? ', the first 60' : ''}):\n`);
  for (const f of failures.slice(0, 60)) process.stdout.write(`#   ${f}\n`);
}
process.stdout.write(`\n${pass} passed, ${fail} failed\n`);
process.exit(allOk && fail === 0 ? 0 : 1);
