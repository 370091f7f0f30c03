// The webhook sender (workers/webhook-sender.ts) against a receiver that drops a kept-alive connection when it is
// reused, as a server closing idle connections does at the moment a delivery goes out on one: the delivery is sent
// again at once on a new connection instead of failing the attempt (regression from the soak audit: the reset sent
// an arbitrage.opened to its 30 s retry, and it arrived after its arbitrage.closed).

import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { attempt } from '../workers/webhook-sender.js';

t.test('webhook sender - a reused connection reset by the receiver: sent again at once on a new one', async (t) => {
  let connections = 0;
  let answered = 0;
  const sockets: Socket[] = [];
  // a minimal HTTP/1.1 receiver: the first request on a connection is answered and the connection kept alive; a
  // second request on the same connection is answered with a reset, as by a server that closed it as idle
  const server = createServer((sock) => {
    connections++;
    sockets.push(sock);
    let requests = 0;
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const len = Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        buf = buf.slice(end + 4 + len);
        requests++;
        if (requests > 1) {
          sock.resetAndDestroy();
          return;
        }
        answered++;
        sock.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n');
      }
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const job = (id: number) => ({
    id, url: `http://127.0.0.1:${port}/hook`, body: JSON.stringify({ n: id }), secret: 'whsec_test', variant: 'B' as const,
    eventType: 'arbitrage.opened', webhookId: 'wh_1', deliveryId: `dlv_${id}`, attempt: 1, replay: 0, timeoutMs: 5000, allowPrivate: true,
  });
  const first = await attempt(job(1));
  t.same([first.statusCode, first.error], [200, null], 'the first delivery opens a connection, kept alive');
  const second = await attempt(job(2));
  t.same([second.statusCode, second.error], [200, null], 'the second, reset on the reused connection, delivered on a new one');
  t.same([connections, answered], [2, 2], 'two connections, both deliveries answered');
});
