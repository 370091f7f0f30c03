import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import uWS from 'uWebSockets.js';
import { assertNative } from '../http/app.js';

t.test('native uWebSockets.js - a server that is not the native binary is refused with a clear message', async (t) => {
  // what the ws fallback looks like from outside: an HTTP server without the uWebSockets header
  const server = createServer((_, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  await t.rejects(assertNative((server.address() as AddressInfo).port), /not running on its native binary/, 'refused');
});

t.test('native uWebSockets.js - the installed binary is the native one', async (t) => {
  const app = uWS.App().any('/*', (res) => void res.end('ok'));
  const ls = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen failed')))));
  t.teardown(() => uWS.us_listen_socket_close(ls));
  await t.resolves(assertNative(uWS.us_socket_local_port(ls)), 'accepted');
});
