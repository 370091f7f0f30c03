// The webhook delivery worker thread: makes one HTTP attempt per job and answers with its outcome. It signs the
// body at send time, resolves the destination and refuses any forbidden address (engine/webhook-address.ts),
// connects to the address it checked (no second lookup a rebinding DNS answer could change), follows no
// redirect, and gives up after the job's timeout. It never touches the database: the main thread writes every
// delivery before asking for an attempt and records the outcome (see workers/webhook-service.ts for why).

import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { parentPort } from 'node:worker_threads';
import { isForbiddenAddress } from '../engine/webhook-address.js';
import { USER_AGENT } from '../engine/webhook-catalogue.js';
import { hmacHex, signatureA } from '../engine/webhook-sign.js';
import type { SendJob, SendResult, WorkerReady } from './webhook-protocol.js';

const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 });

async function resolve(host: string, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const fam = isIP(host);
  const list = fam !== 0 ? [{ address: host, family: fam }] : await lookup(host, { all: true, verbatim: true });
  if (list.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate) {
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad !== undefined) throw new Error(`refused: ${host} resolves to a forbidden address (${bad.address})`);
  }
  return list[0];
}

function headersFor(job: SendJob, unix: number): Record<string, string> {
  const base: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'Content-Length': String(Buffer.byteLength(job.body)),
  };
  if (job.variant === 'A') {
    base['X-Service-Signature'] = signatureA(job.secret, unix, job.body);
    base['X-Service-Event-Type'] = job.eventType;
    base['X-Service-Webhook-Id'] = job.webhookId;
    base['X-Service-Delivery-Attempt'] = String(job.attempt);
    base['X-Service-Delivery-Id'] = job.deliveryId;
  } else {
    base['X-Service-Signature'] = hmacHex(job.secret, unix, job.body);
    base['X-Service-Timestamp'] = String(unix);
    base['X-Service-Event'] = job.eventType;
    base['X-Service-Delivery-Id'] = job.deliveryId;
    // SPEC's delivery attempts carry the attempt number whatever the variant (a replay goes out as attempt 1)
    base['X-Service-Delivery-Attempt'] = String(job.attempt);
  }
  if (job.replay > 0) base['X-Service-Replay'] = String(job.replay);
  return base;
}

export async function attempt(job: SendJob): Promise<SendResult> {
  const attemptedAt = Date.now();
  const t0 = performance.now();
  const done = (statusCode: number | null, error: string | null): SendResult =>
    ({ id: job.id, statusCode, error, attemptedAt, durationMs: performance.now() - t0 });
  let url: URL;
  try {
    url = new URL(job.url);
  } catch {
    return done(null, 'invalid URL');
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // the attempt's timeout runs from here, the lookup included: a slow resolver extended the attempt past it, holding
  // its subscription's slot meanwhile (the webhook audit: 24 s for a 10 s timeout)
  const timeoutError = `timeout after ${job.timeoutMs} ms`;
  let addr: { address: string; family: number };
  let dnsTimer: NodeJS.Timeout | undefined;
  try {
    addr = await Promise.race([
      resolve(host, job.allowPrivate),
      new Promise<never>((_, reject) => { dnsTimer = setTimeout(() => reject(new Error(timeoutError)), job.timeoutMs); }),
    ]);
  } catch (e) {
    return done(null, (e as Error).message);
  } finally {
    clearTimeout(dnsTimer);
  }
  const pinned: LookupFunction = (_h, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [addr]);
    else cb(null, addr.address, addr.family);
  };
  const secure = url.protocol === 'https:';
  return new Promise<SendResult>((resolveResult) => {
    let settled = false;
    let req: http.ClientRequest;
    const finish = (code: number | null, err: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolveResult(done(code, err));
    };
    const send = (again: boolean) => {
      req = (secure ? https : http).request({
        method: 'POST',
        host,
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        path: url.pathname + url.search,
        headers: headersFor(job, Math.floor(Date.now() / 1000)),
        lookup: pinned,
        agent: secure ? httpsAgent : httpAgent,
        servername: isIP(host) === 0 ? host : undefined,
      }, (res) => {
        const code = res.statusCode ?? 0;
        res.on('data', () => {});
        res.on('end', () => finish(code, code >= 200 && code < 300 ? null : `HTTP ${code}`));
        res.on('error', (e) => finish(code, e.message));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        // a kept-alive connection the receiver closed as idle just as it was reused: the request never reached it,
        // so it is sent again at once on a new connection (Node's documented remedy, request.reusedSocket), not left
        // to the 30 s retry (the soak audit: an arbitrage.opened so delayed arrived after its arbitrage.closed)
        if (!again && !settled && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) send(true);
        else finish(null, e.message);
      });
      req.end(job.body);
    };
    const timer = setTimeout(() => {
      req.destroy(new Error(timeoutError));
    }, Math.max(0, job.timeoutMs - (performance.now() - t0)));
    send(false);
  });
}

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (job: SendJob) => {
    void attempt(job).then((r) => port.postMessage(r));
  });
  const ready: WorkerReady = { ready: true };
  port.postMessage(ready);
}
