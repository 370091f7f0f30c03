// NATS settings (NATS_URL, CLUSTER, NODE_ID, the stream's name and limits) and the one connection a process
// holds. The client is nats.js v3 (@nats-io/transport-node, @nats-io/jetstream), which speaks to the 2.9 server
// of the CI machine: one subject filter per consumer, no batched publish.

import { hostname } from 'node:os';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Registry } from 'prom-client';
import { scrapedGauge } from './scraped-metrics.js';

export interface NatsConfig {
  /** NATS_URL, e.g. nats://127.0.0.1:4222 */
  url: string;
  /** NATS_SUBJECT_PREFIX: ingest on `<prefix>.ingest.<sport_key>`, replication on `<prefix>.obs.<sport_key>` */
  prefix: string;
  /** CLUSTER=1: every accepted batch goes through the stream and every node applies the stream in order */
  cluster: boolean;
  /** NODE_ID: this node's name in logs, status and message ids (default: http/app.ts defaultNodeId) */
  nodeId: string;
  /** NATS_STREAM: the JetStream stream of the cluster */
  stream: string;
  /** NATS_STREAM_MAX_AGE_S: batches older than this leave the stream (a node started later replays the rest) */
  maxAgeS: number;
  /** NATS_STREAM_MAX_MB, in bytes: the oldest batches leave the stream beyond this size */
  maxBytes: number;
  /** NATS_DUPLICATE_WINDOW_S: how long the stream remembers a Nats-Msg-Id to drop a repeated publish */
  duplicateWindowS: number;
  /** how long an ingest waits for its batch to come back applied from the stream before answering 503 */
  applyTimeoutMs: number;
}

const SUBJECT_TOKEN = /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64})*$/;
const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** null when NATS_URL is unset */
export function natsConfigFromEnv(env: NodeJS.ProcessEnv, int: (name: string, dflt: number, min: number, max: number) => number): NatsConfig | null {
  const flag = env.CLUSTER ?? '';
  // CLUSTER=yes started a node alone without a word, its own store diverging from the others'
  if (!['', '0', 'false', '1', 'true'].includes(flag)) throw new Error(`CLUSTER must be 1 (or true) to join a cluster, 0 or unset to run alone, got ${JSON.stringify(flag)}`);
  const cluster = flag === '1' || flag === 'true';
  if (!env.NATS_URL) {
    if (cluster) throw new Error('CLUSTER=1 needs NATS_URL (the NATS server with JetStream the nodes share)');
    return null;
  }
  const prefix = env.NATS_SUBJECT_PREFIX || 'linewire';
  if (!SUBJECT_TOKEN.test(prefix)) throw new Error(`NATS_SUBJECT_PREFIX must be dot-separated tokens of letters, digits, _ and -, got ${JSON.stringify(prefix)}`);
  const stream = env.NATS_STREAM || 'LINEWIRE';
  if (!STREAM_NAME.test(stream)) throw new Error(`NATS_STREAM must be 1 to 64 letters, digits, _ or -, got ${JSON.stringify(stream)}`);
  return {
    url: env.NATS_URL,
    prefix,
    cluster,
    nodeId: env.NODE_ID || `${hostname()}-${process.pid}`,
    stream,
    maxAgeS: int('NATS_STREAM_MAX_AGE_S', 86_400, 60, 365 * 86_400),
    maxBytes: int('NATS_STREAM_MAX_MB', 1024, 1, 1_048_576) * 1048576,
    duplicateWindowS: int('NATS_DUPLICATE_WINDOW_S', 120, 1, 86_400),
    applyTimeoutMs: 30_000,
  };
}

export async function connectNats(cfg: NatsConfig): Promise<NatsConnection> {
  return connect({
    servers: cfg.url,
    name: `linewire ${cfg.nodeId}`,
    // a node keeps trying while the server restarts; the subscriptions and the ordered consumer resume on reconnect
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  }).catch((e: unknown) => {
    throw new Error(`cannot reach NATS at NATS_URL ${cfg.url.replace(/\/\/[^@/]*@/, '//')}: ${(e as Error).message}`, { cause: e });
  });
}

/** A NATS connection down this long is reported by /health (a reconnect within it is a blip, not an outage). */
export const NATS_DOWN_GRACE_MS = 5000;

/**
 * Whether the node's NATS connection is up, from the client's status events. The client reconnects by itself
 * (connectNats), and meanwhile the node goes on serving what it holds: in a cluster its data stops following the
 * other nodes', with nothing in its answers to say so. /health, /v1/status and /metrics report it instead.
 */
export class NatsLink {
  connected = true;
  /** when the connection went down (ms), 0 while it is up */
  downSince = 0;
  /** times the connection went down since the start */
  disconnects = 0;
  /** called each time the connection is back after going down (what was published meanwhile was missed) */
  onReconnect: (() => void) | null = null;

  constructor(nc: NatsConnection, private readonly now: () => number, registry?: Registry) {
    if (registry !== undefined) {
      scrapedGauge(registry, 'linewire_nats_connected', '1 while the NATS connection is up, 0 while it is down', () => (this.connected ? 1 : 0));
    }
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting' || s.type === 'staleConnection') this.down();
        else if (s.type === 'reconnect') {
          this.connected = true;
          this.downSince = 0;
          this.onReconnect?.();
        }
      }
    })().catch(() => undefined);
  }

  private down(): void {
    if (!this.connected) return;
    this.connected = false;
    this.downSince = this.now();
    this.disconnects++;
  }

  /** down for at least NATS_DOWN_GRACE_MS */
  out(now: number): boolean {
    return !this.connected && now - this.downSince >= NATS_DOWN_GRACE_MS;
  }

  snapshot(): object {
    return { connected: this.connected, disconnected_since: this.connected ? null : new Date(this.downSince).toISOString(), disconnects: this.disconnects };
  }
}
