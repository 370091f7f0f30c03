// A minimal SMTP client for the owner notifications (auto-disabled webhooks): `smtp://[user:pass@]host[:port]`
// (plain, default port 25) or `smtps://...` (implicit TLS, default port 465); AUTH PLAIN when credentials are
// given. One message per connection: EHLO, AUTH, MAIL FROM, RCPT TO, DATA, QUIT. Every reply is checked.

import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export interface Mail {
  from: string;
  to: string;
  subject: string;
  body: string;
}

const TIMEOUT_MS = 15_000;

export async function sendMail(smtpUrl: string, mail: Mail): Promise<void> {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  if (!secure && url.protocol !== 'smtp:') throw new Error(`SMTP_URL must be smtp:// or smtps://, got ${url.protocol}`);
  const port = url.port === '' ? (secure ? 465 : 25) : Number(url.port);
  const socket: Socket = secure ? tlsConnect({ host: url.hostname, port, servername: url.hostname }) : netConnect({ host: url.hostname, port });
  socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error('SMTP timeout')));
  let buf = '';
  const waiters: ((r: { code: number; text: string } | Error) => void)[] = [];
  let failure: Error | null = null;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buf += chunk;
    // a reply ends with a line "NNN text" (a space after the code); "NNN-text" lines continue it
    for (;;) {
      const m = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buf);
      if (m === null) break;
      const end = m.index + m[0].length;
      const text = buf.slice(0, end);
      buf = buf.slice(end);
      waiters.shift()?.({ code: Number(m[2]), text });
    }
  });
  socket.on('error', (e) => {
    failure = e;
    for (const w of waiters.splice(0)) w(e);
  });
  const reply = () => new Promise<{ code: number; text: string }>((resolve, reject) => {
    if (failure !== null) return reject(failure);
    waiters.push((r) => (r instanceof Error ? reject(r) : resolve(r)));
  });
  const expect = async (cmd: string | null, ok: number[]) => {
    const r = reply();
    if (cmd !== null) socket.write(cmd + '\r\n');
    const { code, text } = await r;
    if (!ok.includes(code)) throw new Error(`SMTP ${cmd?.split(' ')[0] ?? 'greeting'} answered ${text.trim()}`);
  };
  try {
    await expect(null, [220]);
    await expect('EHLO linewire', [250]);
    if (url.username !== '') {
      const token = Buffer.from(`\0${decodeURIComponent(url.username)}\0${decodeURIComponent(url.password)}`).toString('base64');
      await expect(`AUTH PLAIN ${token}`, [235]);
    }
    await expect(`MAIL FROM:<${mail.from}>`, [250]);
    await expect(`RCPT TO:<${mail.to}>`, [250, 251]);
    await expect('DATA', [354]);
    const message = [
      `From: ${mail.from}`, `To: ${mail.to}`, `Subject: ${mail.subject.replace(/[\r\n]+/g, ' ')}`,
      `Date: ${new Date().toUTCString()}`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '',
      ...mail.body.split(/\r?\n/).map((l) => (l.startsWith('.') ? '.' + l : l)),
    ].join('\r\n');
    await expect(message + '\r\n.', [250]);
    await expect('QUIT', [221]).catch(() => undefined);
  } finally {
    socket.destroy();
  }
}
