// One process per DATA_DIR: the embedded database, the export cache and the first-start keys live there, and two
// processes sharing it lose writes (each PGlite a session of its own over the same files) or delete each other's
// cache. A lock file holds the owner's pid and, on Linux, the boot and the process's start time since boot, created
// exclusively; a lock whose process is gone (a killed process) is taken over. The start time tells a pid reused by
// another process from the owner: a container's process is pid 1 at every start, so after a kill the new process
// found its own pid in the lock and took it for a live owner, refusing every restart. The embedded database's socket check (sql/connection.ts) does not cover a DATA_DIR whose socket path
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
      const me = startOf(process.pid);
      writeFileSync(path, me === null ? `${process.pid}\n` : `${process.pid} ${me}\n`, { flag: 'wx', mode: 0o644 });
      return () => {
        // only our own lock: a later owner's (after a takeover) is not ours to remove
        const o = ownerOf(path);
        if (o !== null && o.pid === process.pid && o.start === me) unlinkSync(path);
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = ownerOf(path);
    if (owner !== null && alive(owner)) {
      throw new Error(`DATA_DIR ${dir} is in use by another process (pid ${owner.pid}, ${path}); give each process a DATA_DIR of its own`);
    }
    // the owner is gone (killed, or the file is unreadable): take the lock over. Removed only while it still names
    // that owner, so a process taking it over at the same moment keeps the lock it has just made; of two exclusive
    // creates one succeeds
    const now = ownerOf(path);
    if (now?.pid !== owner?.pid || now?.start !== owner?.start) continue;
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw new Error(`DATA_DIR ${dir} is being taken by another process (${path})`);
}

interface Owner {
  pid: number;
  /** boot id and start time since boot (startOf), null when the lock has none (another system, an older lock) */
  start: string | null;
}

function ownerOf(path: string): Owner | null {
  try {
    const [p, start] = readFileSync(path, 'utf8').trim().split(' ');
    const pid = Number(p);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, start: start ?? null } : null;
  } catch {
    return null;
  }
}

/** A process's identity beyond its pid on Linux: the boot's id and its start time since boot (field 22 of
 *  /proc/<pid>/stat, in clock ticks); null where /proc does not tell (or the process is gone). */
function startOf(pid: number): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold blanks: count the fields after the last ')'
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start === undefined ? null : `${boot}:${start}`;
  } catch {
    return null;
  }
}

/** Whether the process has ended but is not yet reaped by its parent (state Z, field 3 of /proc/<pid>/stat): it
 *  still answers kill(pid, 0), and a killed service's orphan stays so for a second or two. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

function alive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    // EPERM: it exists, owned by another user
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (zombie(owner.pid)) return false;
  // a process has the pid: the owner, unless it started at another time (or in another boot) than the lock says
  if (owner.start === null) return true;
  const now = startOf(owner.pid);
  return now === null || now === owner.start;
}
