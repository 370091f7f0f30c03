// GET /health (aliases /healthz, /v1/health): database connectivity and data freshness.

import { ping } from '../../sql/connection.js';
import type { Route } from '../router.js';
import { HealthSchema } from '../schemas.js';
import { compile } from '../serialize.js';
import { isoMillis, type Services } from '../services.js';

const healthJson = compile(HealthSchema);
/** the database ping may take this long before health reports it down */
const PING_TIMEOUT_MS = 2000;

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
    const body = healthJson({
      status: database.ok ? 'ok' : 'degraded',
      feed: s.feed,
      simulated: s.simulated,
      database,
      data: {
        events: rm.eventCount,
        quotes: quotes.reduce((a, b) => a + b, 0),
        newest_write: rm.newestWrite > 0 ? isoMillis(rm.newestWrite) : null,
        newest_write_age_seconds: rm.newestWrite > 0 ? Math.max(0, (now - rm.newestWrite) / 1000) : null,
      },
      shards: { count: s.hub.pool.size, restarts: s.hub.pool.restarts().reduce((a, b) => a + b, 0), quotes },
      uptime_seconds: Math.round((now - s.startedAt) / 100) / 10,
      version: s.version,
    });
    return { status: database.ok ? 200 : 503, body };
  };
  return ['/health', '/healthz', '/v1/health'].map((path): Route => ({
    method: 'GET',
    path,
    auth: 'none',
    tag: 'status',
    summary: 'Database connectivity and data freshness (age of the newest write)',
    response: HealthSchema,
    handle,
  }));
}
