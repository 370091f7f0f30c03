// The webhook sender's attempt timeout (SPEC: 10 seconds) covers the destination's DNS lookup: a slow resolver ends
// the attempt at the timeout, and the time the lookup took is taken from the request's. The sandbox has no DNS
// server of its own, so the resolver is node:dns/promises' lookup, made slow for one name (as the audit did); the
// receiver is a real one on loopback.

import { createRequire, syncBuiltinESMExports } from 'node:module';
import t from 'tap';
import { attempt } from '../workers/webhook-sender.js';
import { startReceiver } from './helpers/webhook-receiver.js';

type Lookup = (host: string, opts: unknown) => Promise<unknown>;
const dns = createRequire(import.meta.url)('node:dns/promises') as { lookup: Lookup };

/** names under .test answer after `ms` with 127.0.0.1; returns the answers given */
function slowResolver(t: { teardown(fn: () => unknown): void }, ms: number): Promise<unknown>[] {
  const original = dns.lookup;
  const answers: Promise<unknown>[] = [];
  dns.lookup = (host, opts) => {
    if (!host.endsWith('.test')) return original(host, opts);
    const p = new Promise((r) => setTimeout(() => r([{ address: '127.0.0.1', family: 4 }]), ms));
    answers.push(p);
    return p;
  };
  syncBuiltinESMExports();
  t.teardown(() => {
    dns.lookup = original;
    syncBuiltinESMExports();
  });
  return answers;
}

const job = (url: string, timeoutMs: number) => ({
  id: 1, url, body: '{}', secret: 'whsec_test', variant: 'B' as const, eventType: 'test', webhookId: 'wh_1', deliveryId: 'dlv_1',
  attempt: 1, replay: 0, timeoutMs, allowPrivate: true,
});

t.test('webhook sender - a lookup slower than the timeout ends the attempt at the timeout', async (t) => {
  // regression (the webhook audit): the timer started after the lookup, so a 15 s lookup and a 9 s answer made a
  // 24 s attempt, delivered, for a 10 s timeout
  const rx = await startReceiver(t);
  const answers = slowResolver(t, 1500);
  const res = await attempt(job(`http://slow-dns.test:${rx.port}/hook`, 300));
  t.same([res.statusCode, res.error], [null, 'timeout after 300 ms'], 'timed out, no status');
  await Promise.all(answers);
  await new Promise((r) => setImmediate(r));
  t.equal(rx.requests.length, 0, 'and no request is made once the lookup answers');
});

t.test('webhook sender - the time a lookup took is taken from the request\'s', async (t) => {
  // a 400 ms lookup and an answer after 800 ms: 1.2 s in all, past the 1 s timeout
  const rx = await startReceiver(t);
  rx.respond = () => ({ status: 200, afterMs: 800 });
  slowResolver(t, 400);
  const res = await attempt(job(`http://slow-answer.test:${rx.port}/hook`, 1000));
  t.same([res.statusCode, res.error], [null, 'timeout after 1000 ms'], 'timed out: the lookup and the answer together passed the timeout');
  t.equal(rx.requests.length, 1, 'the request was made');
});
