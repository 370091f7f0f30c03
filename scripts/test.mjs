// `npm test`: type-check and compile with tsc (strict), run every test with tap, and end with the plain line
// `N passed, N failed` (counts of tests) that CI reads.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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
// One initialised PGlite data directory for the whole run (initdb costs about 6 s of CPU; test/helpers/db.ts
// copies this template for every embedded database instead)
const template = mkdtempSync(join(tmpdir(), 'lw-tpl-'));
mkdirSync(join(template, 'pg'));
execFileSync(process.execPath, ['--input-type=module', '-e',
  `import { PGlite } from '@electric-sql/pglite'; const pg = await PGlite.create(${JSON.stringify(join(template, 'pg'))}); await pg.close();`],
{ cwd: root, stdio: 'inherit' });
process.on('exit', () => rmSync(template, { recursive: true, force: true }));

const only = process.argv.slice(2);
const files = readdirSync(join(root, 'dist/test'))
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .map((f) => join('dist/test', f));

const tap = spawn(process.execPath, [join(root, 'node_modules/tap/dist/esm/run.mjs'),
  '--disable-coverage', '--reporter=tap', '--timeout=180', '--jobs=4', ...files],
{ cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LW_PG_TEMPLATE: template } });
let pass = 0;
let fail = 0;
let buf = '';
tap.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  buf += chunk.toString();
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    // top-level results of each file's subtests are indented by four spaces under the file's own test point
    const m = /^    (not ok|ok) \d+ /.exec(line);
    if (m) m[1] === 'ok' ? pass++ : fail++;
    const top = /^(not ok) \d+ - /.exec(line);
    if (top && !/# (SKIP|TODO)/.test(line)) topFail++;
  }
});
let topFail = 0;
tap.on('close', (code) => {
  if (fail === 0 && (topFail > 0 || code !== 0)) fail = Math.max(1, topFail);
  process.stdout.write(`\n${pass} passed, ${fail} failed\n`);
  process.exit(code === 0 && fail === 0 ? 0 : 1);
});
