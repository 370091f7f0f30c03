// GET /health (aliases /healthz, /v1/health): database connectivity and data freshness.

import { ping } from '../../sql/connection.js';
import type { Route } from '../router.js';
import { HealthSchema } from '../schemas.js';
import { compile } from '../serialize.js';
import { isoMillis, type Services } from '../services.js';

const healthJson = compile(HealthSchema);
/** the database ping may take this long before health reports it down */
const PING_TIMEOUT_MS = 2000;
/** Data older than this is stale (SPEC: /health verifies data freshness): the longest stale threshold of any
 *  sportsbook, exchange or prediction market (engine/sla.ts exchange_slow, 900 s), past which none of the newest
 *  writes would still count in any view. DFS boards (3,600 s) are left out: they form no analytics. */
export const HEALTH_STALE_S = 900;

export function healthRoutes(s: Services): Route[] {
  const handle = async () => {
    let database: { ok: boolean; kind: string; latency_ms?: number; error?: string };
    try {
      const ms = await Promise.race([
        ping(s.db),
        new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS).unref()),
      ]);
      database = { ok: true, kind: s.db.kind, latency_ms: Math.round(ms * 1000) / 1000 };
    } catch (e) {
      database = { ok: false, kind: s.db.kind, error: e instanceof Error ? e.message : String(e) };
    }
    const rm = s.hub.readModel;
    const now = s.now();
    const quotes = s.hub.pool.quoteCounts();
    const age = rm.newestWrite > 0 ? Math.max(0, (now - rm.newestWrite) / 1000) : null;
    // no data yet is not stale data: a FEED=none node waits for its first ingest
    const fresh = age === null ? null : age <= HEALTH_STALE_S;
    const reasons: string[] = [];
    if (!database.ok) reasons.push(`database: ${database.error ?? 'down'}`);
    if (fresh === false) reasons.push(`data: the newest price is ${Math.round(age!)} s old (stale past ${HEALTH_STALE_S} s): is the feed running?`);
    // a cluster node cut off from NATS keeps serving what it holds while the others move on: out of rotation (503)
    // until it is back. A node that only ingests from NATS says so and stays 200, as with stale data.
    const link = s.natsLink;
    const natsOut = link !== undefined && link.out(now);
    if (natsOut) {
      reasons.push(`nats: disconnected for ${Math.round((now - link.downSince) / 1000)} s` +
        (s.cluster !== undefined ? ': this node\'s data is not following the cluster' : ': NATS ingest is not received'));
    }
    const body = healthJson({
      status: reasons.length === 0 ? 'ok' : 'degraded',
      reasons,
      feed: s.feed,
      simulated: s.simulated,
      database,
      data: {
        events: rm.eventCount,
        quotes: quotes.reduce((a, b) => a + b, 0),
        newest_write: rm.newestWrite > 0 ? isoMillis(rm.newestWrite) : null,
        newest_write_age_seconds: age,
        fresh,
      },
      shards: { count: s.hub.pool.size, restarts: s.hub.pool.restarts().reduce((a, b) => a + b, 0), quotes },
      nats: link === undefined ? null : { connected: link.connected, disconnected_since: link.connected ? null : isoMillis(link.downSince) },
      uptime_seconds: Math.round((now - s.startedAt) / 100) / 10,
      version: s.version,
    });
    return { status: database.ok && !(natsOut && s.cluster !== undefined) ? 200 : 503, body };
  };
  return ['/health', '/healthz', '/v1/health'].map((path): Route => ({
    method: 'GET',
    path,
    auth: 'none',
    tag: 'status',
    summary: 'Database connectivity and data freshness (age of the newest write)',
    response: HealthSchema,
    // the database unreachable, or (CLUSTER=1) NATS down: the health body with HTTP 503
    degradedStatus: 503,
    handle,
  }));
}
