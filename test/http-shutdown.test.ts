// Shutdown drains: a request taken before close() is answered by a node whose services are still open, and a request
// that arrives on a kept-alive connection afterwards is answered 503 with the connection closed, never acknowledged by
// a node that is closing the services behind it (an ingest's 202 promises its webhook events are in the outbox).

import { Agent, request } from 'node:http';
import t from 'tap';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';
import { connect } from './helpers/ws-client.js';

interface Answer { status: number; body: string; connection: string | undefined }

/** `midway`: called once the first half of the body is out and the server has had 50 ms to take the request; the
 *  second half follows it */
function send(agent: Agent, port: number, method: string, path: string, body?: string, midway?: () => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      agent, host: '127.0.0.1', port, method, path,
      headers: body === undefined ? {} : { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}`, 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }));
    });
    req.on('error', reject);
    if (midway === undefined || body === undefined) {
      req.end(body);
      return;
    }
    const half = body.length >> 1;
    req.write(body.slice(0, half));
    setTimeout(() => {
      midway();
      req.end(body.slice(half));
    }, 50);
  });
}

t.test('shutdown - a request taken before close is answered; one after it on a kept-alive connection is 503', async (t) => {
  const app = await startTestApp(t);
  // one socket, kept alive: every request below travels on it, in order
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const port = app.app.port;
  t.equal((await send(agent, port, 'GET', '/health')).status, 200, 'the connection is open');

  // an ingest whose first half is sent, then close(), then its second half: the server took it before close()
  const now = Date.now();
  const events = Array.from({ length: 200 }, (_, i) => ({ id: `sd_${i}`, sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: `Home ${i}`, away_team: `Away ${i}` }));
  const books = ['draftkings', 'fanduel', 'betmgm', 'williamhill_us', 'espnbet', 'betrivers', 'fanatics', 'bovada', 'pinnacle', 'lowvig'];
  const prices = events.flatMap((e) => books.flatMap((book) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.9 }, { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1.95 },
  ]));
  let closing: Promise<void> | null = null;
  const ingest = send(agent, port, 'POST', '/v1/ingest', JSON.stringify({ events, prices }), () => { closing = app.close(); });
  const after = ingest.then(() => send(agent, port, 'GET', '/health'));
  const acked = await ingest;
  t.equal(acked.status, 202, 'the ingest taken before close() is answered 202, not reset');
  t.same(JSON.parse(acked.body).accepted, prices.length, 'and applied in full');
  const late = await after;
  t.equal(late.status, 503, 'a request after close() on the kept-alive connection: 503');
  t.equal(JSON.parse(late.body).error_code, 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE');
  t.equal(late.connection, 'close', 'and the connection is closed');
  t.ok(closing !== null, 'close() was called');
  await closing;
});

t.test('shutdown - open streams are ended with 1001 (going away), not dropped', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const ws = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${key}`);
  await ws.until((f) => f.type === 'snapshot');
  const closing = app.close();
  const closed = await ws.closedWith(5000);
  await closing;
  t.same(closed, { code: 1001, reason: 'server shutting down' }, 'the client is told the server is going away');
});
