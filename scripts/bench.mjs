// `npm run bench`: builds, then runs every benchmark under bench/ in turn; each prints its own table with a
// baseline measured in the same run and the machine it ran on.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
const only = process.argv.slice(2);
for (const f of readdirSync(join(root, 'dist/bench')).filter((f) => f.endsWith('.js')).sort()) {
  if (only.length > 0 && !only.some((o) => f.includes(o))) continue;
  process.stdout.write(`\n## bench/${f.replace(/\.js$/, '.ts')}\n`);
  execFileSync(process.execPath, ['--expose-gc', join(root, 'dist/bench', f)], { stdio: 'inherit', cwd: root });
}
