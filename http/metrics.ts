// Prometheus metrics (prom-client): request latency per route, and engine counters read at scrape time.

import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Hub } from '../workers/hub.js';
import { scrapedCounter, scrapedGauge } from '../workers/scraped-metrics.js';
import { BODY_CACHE_BYTES, BODY_CACHE_ENTRIES, FRAGMENT_BUDGET, FRAGMENT_SHAPES, type OddsCacheHeld } from './routes/odds.js';
import type { StreamCloses } from './ws/server.js';

export class Metrics {
  readonly registry = new Registry();
  private readonly latency: Histogram<'route' | 'status'>;
  readonly bodyCache: Counter<'result'>;
  readonly eventDocs: Counter<'result'>;

  constructor(hub: () => Hub | null) {
    collectDefaultMetrics({ register: this.registry });
    this.latency = new Histogram({
      name: 'linewire_http_request_duration_seconds',
      help: 'HTTP request duration by route template and status',
      labelNames: ['route', 'status'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.bodyCache = new Counter({
      name: 'linewire_body_cache_total',
      help: 'Serialised response bodies served from cache (hit) or rebuilt (miss)',
      labelNames: ['result'],
      registers: [this.registry],
    });
    this.eventDocs = new Counter({
      name: 'linewire_odds_event_docs_total',
      help: 'Event documents of a rebuilt odds body reused because the event had not changed (kept) or built again (built)',
      labelNames: ['result'],
      registers: [this.registry],
    });
    // read from the hub at scrape time (null while it is not up: the last scrape's values stay)
    const fromHub = (read: (h: Hub) => number) => () => {
      const h = hub();
      return h === null ? null : read(h);
    };
    const total = (name: string, help: string, read: (h: Hub) => number) => scrapedCounter(this.registry, name, help, fromHub(read));
    const gauge = (name: string, help: string, read: (h: Hub) => number) => scrapedGauge(this.registry, name, help, fromHub(read));
    total('linewire_ingest_observations_total', 'Price observations received', (h) => h.counters.observations);
    total('linewire_ingest_accepted_total', 'Price observations accepted', (h) => h.counters.accepted);
    total('linewire_ingest_rejected_total', 'Price observations rejected', (h) => h.counters.rejected);
    total('linewire_ingest_stale_total', 'Observations ignored as older than the stored quote', (h) => h.counters.stale);
    total('linewire_change_records_total', 'Change records applied to the read model', (h) => h.counters.changeRecords);
    total('linewire_shard_restarts_total', 'Shard workers restarted after a crash', (h) => h.counters.shardRestarts);
    gauge('linewire_events', 'Events held', (h) => h.readModel.eventCount);
    gauge('linewire_quotes', 'Quotes held across shards', (h) => h.pool.quoteCounts().reduce((a, b) => a + b, 0));
    scrapedCounter(this.registry, 'linewire_shard_busy_seconds_total',
      'Time each shard thread has spent busy (applying batches, keeping the analytics current), since it last started: its rate is the shard\'s load, 1 when saturated', () => {
        const h = hub();
        return h === null ? null : Object.fromEntries(h.pool.busyMs().map((ms, i) => [String(i), ms / 1000]));
      }, 'shard');
  }

  /** linewire_ws_server_closes_total{cause}: WebSocket streams the server closed, read from `read` at scrape time;
   *  linewire_ws_snapshots_total{source}: snapshots built and reused; linewire_ws_channels: channels held. */
  watchStreams(read: () => StreamCloses, snapshots: () => { builds: number; hits: number }, channels: () => number): void {
    scrapedGauge(this.registry, 'linewire_ws_channels',
      'WebSocket stream channels held (one per stream kind, sport and coalescing window; dropped when no socket held one for the resume window)', channels);
    scrapedCounter(this.registry, 'linewire_ws_snapshots_total',
      'WebSocket snapshots sent: built for the socket, or reused (built moments before for the same channel, filters and format, nothing changed since)', () => {
        const c = snapshots();
        return { built: c.builds, reused: c.hits };
      }, 'source');
    scrapedCounter(this.registry, 'linewire_ws_server_closes_total',
      'WebSocket streams closed by the server: backpressure (4008, too far behind, or dropped with no close frame when it read nothing), silence (4002), revoked (4001), tier (4003, below business)', () => {
        const c = read();
        return { backpressure: c.backpressure, silence: c.silence, revoked: c.revoked, tier: c.tier };
      }, 'cause');
  }

  /** linewire_odds_body_cache_*, linewire_odds_event_doc_*: what the /odds caches hold (http/routes/odds.ts), the
   *  bytes as counted against their bounds. */
  watchOddsCache(read: () => OddsCacheHeld): void {
    scrapedGauge(this.registry, 'linewire_odds_body_cache_entries', `Serialised /odds bodies kept, one per distinct query (bounded at ${BODY_CACHE_ENTRIES})`, () => read().bodies);
    scrapedGauge(this.registry, 'linewire_odds_body_cache_bytes',
      `Bytes the kept /odds bodies hold with their keys and an overhead per body (bounded at ${BODY_CACHE_BYTES})`, () => read().bodyBytes);
    scrapedGauge(this.registry, 'linewire_odds_event_doc_shapes',
      `Query shapes (books, markets, formats) whose /odds event documents are kept (bounded at ${FRAGMENT_SHAPES})`, () => read().shapes);
    scrapedGauge(this.registry, 'linewire_odds_event_doc_bytes',
      `Bytes the kept /odds event documents hold with an overhead per document and per shape (bounded at ${FRAGMENT_BUDGET})`, () => read().fragmentBytes);
  }

  /** linewire_embedded_db_restarts_total: the embedded database's thread started again after it ended on its own. */
  watchDatabase(restarts: () => number): void {
    scrapedCounter(this.registry, 'linewire_embedded_db_restarts_total',
      'Times the embedded database\'s thread was started again after it ended on its own (always 0 with an external PostgreSQL)', restarts);
  }

  observe(route: string, status: number, ms: number): void {
    this.latency.observe({ route, status: String(status) }, ms / 1000);
  }
}
