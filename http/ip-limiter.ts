// Fixed-window request counts per client address (/v1/try: 60 an hour; agent sign-up: 5 an hour). A window is
// aligned on the clock (hour boundaries), so Retry-After is the time to the next window.

export class WindowLimiter {
  private readonly windows = new Map<string, { window: number; count: number }>();

  constructor(readonly limit: number, readonly windowMs: number, private readonly maxAddresses = 100_000) {}

  /** Counts a request from `ip` at `now`: 0 when allowed, else the whole seconds until the next window. */
  hit(ip: string, now: number): number {
    const window = Math.floor(now / this.windowMs);
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
