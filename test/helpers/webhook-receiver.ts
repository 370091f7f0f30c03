// A real HTTP receiver for webhook tests on loopback (node:http). It records every request with its raw body and
// answers with what `respond` says (a status, a status after a delay, or 'hang' to never answer). Signatures are checked here with
// node:crypto directly, independently of engine/webhook-sign.ts.
//
//   const rx = await startReceiver(t);
//   rx.respond = (req, n) => (n < 3 ? 500 : 200);
//   const got = await rx.waitFor((r) => r.headers['x-service-event'] === 'test');

import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  n: number;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  respond: (r: Received) => number | 'hang' | { status: number; afterMs: number };
  waitFor(pred: (r: Received) => boolean, timeoutMs?: number, count?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(t: { teardown(fn: () => unknown): void }): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging: ServerResponse[] = [];
  const waiters: (() => void)[] = [];
  const rx: Receiver = {
    url: '',
    port: 0,
    requests,
    respond: () => 200,
    waitFor(pred, timeoutMs = 5000, count = 1) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = requests.filter(pred);
          if (hits.length >= count) {
            clearTimeout(timer);
            resolve(hits);
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`receiver: ${requests.filter(pred).length} of ${count} expected requests within ${timeoutMs} ms (got ${requests.length} in all)`));
        }, timeoutMs);
        const w = () => {
          if (check()) waiters.splice(waiters.indexOf(w), 1);
        };
        if (!check()) waiters.push(w);
      });
    },
    close: async () => {
      for (const r of hanging) r.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = null;
      }
      const r: Received = { n: requests.length + 1, path: req.url ?? '', headers: req.headers, raw, body, at: Date.now() };
      requests.push(r);
      const answer = rx.respond(r);
      const reply = (status: number) => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('ok');
      };
      if (answer === 'hang') hanging.push(res);
      else if (typeof answer === 'number') reply(answer);
      else setTimeout(() => reply(answer.status), answer.afterMs);
      for (const w of [...waiters]) w();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  rx.port = (server.address() as AddressInfo).port;
  rx.url = `http://127.0.0.1:${rx.port}/hook`;
  t.teardown(() => rx.close());
  return rx;
}

function hmac(secret: string, ts: string, raw: string): Buffer {
  return createHmac('sha256', secret).update(`${ts}.${raw}`).digest();
}

/** Variant A: `X-Service-Signature: t=<unix>,v1=<hex>` over "<t>.<raw>", within 300 s of now. */
export function verifyA(secret: string, header: string | undefined, raw: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (m === null || Math.abs(nowS - Number(m[1])) > 300) return false;
  return timingSafeEqual(hmac(secret, m[1], raw), Buffer.from(m[2], 'hex'));
}

/** Variant B: `X-Service-Signature: <hex>` over "<X-Service-Timestamp>.<raw>", within 300 s of now. */
export function verifyB(secret: string, sig: string | undefined, ts: string | undefined, raw: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  if (sig === undefined || ts === undefined || !/^[0-9a-f]{64}$/.test(sig) || !/^\d+$/.test(ts)) return false;
  if (Math.abs(nowS - Number(ts)) > 300) return false;
  return timingSafeEqual(hmac(secret, ts, raw), Buffer.from(sig, 'hex'));
}

export interface SmtpSink {
  url: string;
  mails: { from: string; to: string; data: string }[];
}

/** A loopback SMTP server that accepts every message (for the auto-disable e-mail). */
export async function startSmtp(t: { teardown(fn: () => unknown): void }): Promise<SmtpSink> {
  const { createServer: createTcp } = await import('node:net');
  const sink: SmtpSink = { url: '', mails: [] };
  const server = createTcp((sock) => {
    let buf = '';
    let inData = false;
    let from = '';
    let to = '';
    sock.write('220 test ESMTP\r\n');
    sock.on('data', (c) => {
      buf += c.toString();
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          sink.mails.push({ from, to, data: buf.slice(0, end) });
          buf = buf.slice(end + 5);
          inData = false;
          sock.write('250 queued\r\n');
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO') sock.write('250-test\r\n250 OK\r\n');
        else if (cmd === 'MAIL') { from = /<([^>]*)>/.exec(line)?.[1] ?? ''; sock.write('250 OK\r\n'); }
        else if (cmd === 'RCPT') { to = /<([^>]*)>/.exec(line)?.[1] ?? ''; sock.write('250 OK\r\n'); }
        else if (cmd === 'DATA') { inData = true; sock.write('354 go\r\n'); }
        else if (cmd === 'QUIT') { sock.end('221 bye\r\n'); return; }
        else sock.write('502 no\r\n');
      }
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  sink.url = `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return sink;
}
