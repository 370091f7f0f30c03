// Fixed-window request counts per client address (/v1/try: 60 an hour; agent sign-up: 5 an hour). A window is
// aligned on the clock (hour boundaries), so Retry-After is the time to the next window.

export class WindowLimiter {
  private readonly windows = new Map<string, { window: number; count: number }>();

  constructor(readonly limit: number, readonly windowMs: number, private readonly maxAddresses = 100_000) {}

  /** Counts a request from `ip` at `now`: 0 when allowed, else the whole seconds until the next window. */
  hit(address: string, now: number): number {
    const window = Math.floor(now / this.windowMs);
    const ip = clientKey(address);
    let w = this.windows.get(ip);
    if (w === undefined || w.window !== window) {
      if (w === undefined && this.windows.size >= this.maxAddresses) this.sweep(window);
      this.windows.set(ip, (w = { window, count: 0 }));
    }
    if (w.count >= this.limit) return Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000));
    w.count++;
    return 0;
  }

  /** drops the windows that are over; if every address is in the current window, starts afresh */
  private sweep(window: number): void {
    for (const [ip, w] of this.windows) if (w.window !== window) this.windows.delete(ip);
    if (this.windows.size >= this.maxAddresses) this.windows.clear();
  }
}

/**
 * The key an address is counted under: an IPv4 address itself, an IPv6 address its /64 network (one subscriber's
 * allocation: counted per full address, one home or server had 2^64 of them, an unlimited number of sign-ups).
 * Expects the spelling of client-ip.ts normaliseAddress (IPv4-mapped addresses already dotted).
 */
export function clientKey(address: string): string {
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('::', 2) as [string, string | undefined];
  const words = (part: string | undefined): string[] => (part === undefined || part === '' ? [] : part.split(':'));
  const h = words(head);
  const t = words(tail);
  // an embedded dotted quad is two words
  const count = (ws: string[]) => ws.reduce((n, w) => n + (w.includes('.') ? 2 : 1), 0);
  const all = tail === undefined ? h : [...h, ...new Array<string>(Math.max(0, 8 - count(h) - count(t))).fill('0'), ...t];
  return all.slice(0, 4).map((w) => (w.includes('.') ? w : (parseInt(w, 16) || 0).toString(16))).join(':') + '::/64';
}
