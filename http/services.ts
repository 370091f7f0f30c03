// What the routes are given: the engine hub, accounts, the database and the process facts.

import type { Database } from '../sql/connection.js';
import type { Hub, IngestResult } from '../workers/hub.js';
import type { Cluster, SubmitOptions } from '../workers/cluster.js';
import type { NatsIngest } from '../workers/nats-ingest.js';
import type { NatsLink } from '../workers/nats.js';
import type { WebhookService } from '../workers/webhook-service.js';
import type { HistoryService } from '../workers/history-service.js';
import type { StatusService } from '../workers/status-service.js';
import type { ExportServices } from './routes/historical.js';
import type { Accounts } from './accounts.js';
import type { Metrics } from './metrics.js';

export interface Services {
  hub: Hub;
  accounts: Accounts;
  db: Database;
  /** FEED as configured, e.g. 'sim' or 'none' */
  feed: string;
  /** true when any price may come from the built-in simulator (CLUSTER=1: also once another node's simulator wrote) */
  simulated: boolean;
  startedAt: number;
  version: string;
  metrics: Metrics;
  /** Applies an ingest body: hub.ingest on a single node; with CLUSTER=1 it goes through the cluster stream and
   *  resolves once this node applied it from there. Every feed (HTTP, NATS, simulator, connectors) goes through it. */
  ingest(body: unknown, now: number, opts?: SubmitOptions): Promise<IngestResult>;
  /** CLUSTER=1: the stream replication; set by startApp */
  cluster?: Cluster;
  /** NATS_URL: the NATS ingest subscriber; set by startApp */
  natsIngest?: NatsIngest;
  /** NATS_URL: the state of the node's NATS connection; set by startApp */
  natsLink?: NatsLink;
  /** outbound webhooks; set by startApp once started */
  webhooks?: WebhookService;
  /** closing-line history writer; set by startApp once started */
  history?: HistoryService;
  /** source freshness, pollers, status cache and history; set by startApp */
  status?: StatusService;
  /** the piscina pool and the cache of the closing-line exports; set by startApp */
  exports?: ExportServices;
  now(): number;
}

/** start times formatted, by ms: a body of thousands of rows formats its few events' starts once each, not per row
 *  (Date.toISOString about 0.5 us; the main-thread audit's profiles of /props, /consensus, /middles) */
const isoSecondsMemo = new Map<number, string>();

export function isoSeconds(ms: number): string {
  let s = isoSecondsMemo.get(ms);
  if (s === undefined) {
    if (isoSecondsMemo.size >= 4096) isoSecondsMemo.clear();
    s = new Date(ms).toISOString().slice(0, 19) + 'Z';
    isoSecondsMemo.set(ms, s);
  }
  return s;
}

export function isoMillis(ms: number): string {
  return new Date(ms).toISOString();
}
