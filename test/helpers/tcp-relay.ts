// A TCP relay on loopback in front of a real server (PostgreSQL, NATS), which a test cuts and restores to make that
// server unreachable for the app under test only: `cut()` closes the listener and destroys every relayed connection
// (both ends see the connection close), `restore()` listens again on the same port.

import net from 'node:net';

export interface TcpRelay {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** connections stay open and pass nothing, new ones included (a server that stopped answering) */
  freeze(): void;
  thaw(): void;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startRelay(t: Teardown, host: string, port: number): Promise<TcpRelay> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let frozen = false;
  const listen = (at: number) => new Promise<number>((resolve, reject) => {
    const s = server = net.createServer((c) => {
      const up = net.connect(port, host);
      sockets.add(c).add(up);
      c.pipe(up).pipe(c);
      if (frozen) { c.pause(); up.pause(); }
      const end = () => { c.destroy(); up.destroy(); sockets.delete(c); sockets.delete(up); };
      c.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
    });
    s.once('error', reject);
    s.listen(at, '127.0.0.1', () => resolve((s.address() as net.AddressInfo).port));
  });
  const cut = () => new Promise<void>((resolve) => {
    const s = server;
    server = null;
    for (const c of sockets) c.destroy();
    sockets.clear();
    if (s === null || !s.listening) resolve();
    else s.close(() => resolve());
  });
  const relay: TcpRelay = {
    port: await listen(0),
    cut,
    // listening already: nothing to restore
    restore: async () => { if (server === null) await listen(relay.port); },
    // a paused socket reads nothing, so nothing is written on: both directions stall, the connections stay open
    freeze: () => { frozen = true; for (const s of sockets) s.pause(); },
    thaw: () => { frozen = false; for (const s of sockets) s.resume(); },
  };
  t.teardown(cut);
  return relay;
}
