// `npm start` runs this first: compiles with tsc when dist/ is missing or older than any source file.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const entry = join(root, 'dist/http/main.js');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (e.name.endsWith('.ts')) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

const sources = Math.max(...['engine', 'http', 'workers', 'sql'].map((d) => newest(join(root, d))), statSync(join(root, 'tsconfig.json')).mtimeMs);
if (!existsSync(entry) || statSync(entry).mtimeMs < sources) {
  process.stdout.write('building (tsc)...\n');
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
}
