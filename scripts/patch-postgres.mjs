// postinstall: guards postgres.js's nextWrite against a connection whose socket is gone (porsager/postgres#1208,
// #1154, #1066; fixes proposed upstream in #1209, #1176, #1168, none released as of 3.4.9).
//
// closed() sets the connection's socket to null and reconnects later; a write issued to it in between (a query on a
// reserved connection, which a transaction is, after its backend died or the network dropped) schedules
// setImmediate(nextWrite), which calls socket.write on null: a TypeError thrown from a timer, which no caller can
// catch and which ends the process. linewire's database-outage test hit it through a TCP relay cut;
// test/sql-connection-closed.test.ts reproduces it at will (a reserved connection whose backend is terminated).
// The guard settles instead: the buffered bytes are dropped (they must not lead the next connection's start-up
// message) and the pending queries are rejected with CONNECTION_CLOSED, as closed() rejects them, so the caller
// gets a catchable error. Idempotent; a postgres.js whose nextWrite differs (a fixed release) is left alone.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
/** a write to a closed connection settles: its queries are rejected as closed() rejects them, and no byte is kept for
 *  the next socket (closed() cancels the pending immediate but leaves nextWriteTimer set, so a later write was
 *  buffered and never sent: its query hung). It answers true, as a buffered write does: false would make a
 *  transaction's handler move the closed connection to the pool's full queue, out of reach of a reconnect. */
const SETTLE = `if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return true
    }`;
const EDITS = [
  [`  function write(x, fn) {
    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)`, `  function write(x, fn) {
    // linewire scripts/patch-postgres.mjs: a write to a connection whose socket is gone settles instead of hanging
    ${SETTLE}
    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)`],
  [`  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`, `  function nextWrite(fn) {
    // linewire scripts/patch-postgres.mjs: a write after closed() nulled the socket settles instead of throwing
    ${SETTLE}
    const x = socket.write(chunk, fn)`],
];

let patched = 0;
let already = 0;
for (const dir of ['src', 'cjs/src', 'cf/src']) {
  const file = join(root, 'node_modules/postgres', dir, 'connection.js');
  if (!existsSync(file)) continue;
  let text = readFileSync(file, 'utf8');
  if (EDITS.every(([, to]) => text.includes(to))) {
    already++;
    continue;
  }
  if (!EDITS.every(([from]) => text.includes(from))) {
    process.stderr.write(`patch-postgres: ${file} differs from postgres.js 3.4.9's (a fixed release?): left as it is\n`);
    continue;
  }
  for (const [from, to] of EDITS) text = text.replace(from, to);
  writeFileSync(file, text);
  patched++;
}
if (patched > 0) process.stdout.write(`patch-postgres: guarded write and nextWrite in ${patched} file(s) of postgres.js\n`);
else if (already === 0) process.stderr.write('patch-postgres: postgres.js not found or not patched\n');
