// Prometheus metrics whose values are kept elsewhere (plain numbers the engine or a service keeps) and read at
// scrape time. Prometheus treats a `_total` name as a counter: exposed as a gauge, as the engine's counts were,
// rate() and increase() over them are flagged by linters and read wrongly by tools that go by the declared type.

import { Counter, Gauge, type Registry } from 'prom-client';

/** A counter set from `read` at each scrape, per value of `label` when one is named; null keeps what the last scrape
 *  showed (e.g. while the service is starting). */
export function scrapedCounter(registry: Registry, name: string, help: string,
  read: () => number | Readonly<Record<string, number>> | null, label?: string): Counter<string> {
  return new Counter({
    name,
    help,
    labelNames: label === undefined ? [] : [label],
    registers: [registry],
    collect() {
      const v = read();
      if (v === null) return;
      this.reset();
      if (typeof v === 'number') this.inc(v);
      else for (const [k, x] of Object.entries(v)) this.inc({ [label!]: k }, x);
    },
  });
}

/** A gauge set from `read` at each scrape; null keeps what the last scrape showed. */
export function scrapedGauge(registry: Registry, name: string, help: string, read: () => number | null): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      const v = read();
      if (v !== null) this.set(v);
    },
  });
}
