// The embedded database's thread: PGlite (PostgreSQL compiled to WebAssembly) and the pglite-socket server that
// serves it on a unix socket, off the main thread. PGlite executes every query synchronously in the thread that
// holds it: on the main thread, a closing-line export or a coverage count held every other request and every
// WebSocket stream for 0.4 to 2.5 s, and the pregame history's writes stalled it every 15 s (the main-thread audit,
// 2026-11-26). Here the main thread only moves bytes over the socket, as with an external PostgreSQL.
//
// Protocol (workerData {pgDir, socketPath}): the thread posts {ready: true} once it serves, or {error} if it
// cannot start; on 'stop' it stops the server, closes the database (a clean shutdown: its files are consistent)
// and posts {stopped: true}.

import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDbData {
  pgDir: string;
  socketPath: string;
  /** the schema of the session's search_path (a name of [a-z0-9_]: sql/connection.ts), set before it serves */
  schema: string;
}

export type EmbeddedDbMessage = { ready: true } | { stopped: true } | { error: string };

const port = parentPort!;
const { pgDir, socketPath, schema } = workerData as EmbeddedDbData;
const post = (m: EmbeddedDbMessage): void => port.postMessage(m);

let pg: PGlite | null = null;
let server: PGLiteSocketServer | null = null;
try {
  pg = await PGlite.create(pgDir);
  // PGlite is one session, and the socket's one connection is that session: its search_path is set here, before
  // the first client connects (a database started again after its thread ended: sql/connection.ts), since a client
  // could otherwise send a query before the main thread sets it. PGlite ignores the driver's startup parameters.
  await pg.exec(`set search_path to "${schema}"`);
  server = new PGLiteSocketServer({ db: pg, path: socketPath });
  await server.start();
  post({ ready: true });
} catch (e) {
  await server?.stop().catch(() => undefined);
  await pg?.close().catch(() => undefined);
  post({ error: e instanceof Error ? e.message : String(e) });
  port.close();
}

port.on('message', (m: unknown) => {
  if (m !== 'stop') return;
  void (async () => {
    try {
      await server?.stop();
      await pg?.close();
    } finally {
      post({ stopped: true });
      port.close();
    }
  })();
});
