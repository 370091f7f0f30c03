// One process per DATA_DIR: the embedded database, the export cache and the first-start keys live there, and two
// processes sharing it lose writes (each PGlite a session of its own over the same files) or delete each other's
// cache. A lock file holds the owner's pid, created exclusively; a lock whose pid is gone (a killed process) is
// taken over. The embedded database's socket check (sql/connection.ts) does not cover a DATA_DIR whose socket path
// is too long (its socket then lives in a temporary directory), nor an external database's DATA_DIR.

import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const LOCK_NAME = 'linewire.lock';

/** Takes DATA_DIR for this process; returns the release. Throws when a live process holds it. */
export function lockDataDir(dataDir: string): () => void {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_NAME);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return () => {
        // only our own lock: a later owner's (after a takeover) is not ours to remove
        if (ownerOf(path) === process.pid) unlinkSync(path);
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = ownerOf(path);
    if (owner !== null && alive(owner)) {
      throw new Error(`DATA_DIR ${dir} is in use by another process (pid ${owner}, ${path}); give each process a DATA_DIR of its own`);
    }
    // the owner is gone (killed, or the file is unreadable): take the lock over. Removed only while it still names
    // that owner, so a process taking it over at the same moment keeps the lock it has just made; of two exclusive
    // creates one succeeds
    if (ownerOf(path) !== owner) continue;
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw new Error(`DATA_DIR ${dir} is being taken by another process (${path})`);
}

function ownerOf(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, owned by another user
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
