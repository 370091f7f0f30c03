// Source freshness and the /v1/status payload (SPEC "Health and status", "Source freshness classes"), pure:
// every input (write times per table, pulses, pollers, request rates, the clock) is passed in.
//
// One verdict per source: its class is judged on the freshest write it made across the odds and prop tables
// inside the window (age <= tight_s ok, <= slack_s degraded, <= stale_s breach, else or no write stale);
// `healthy` is ok or degraded. Every block quotes that verdict; table rows add their own row_* judgement.

import type { SlaClass } from './sla.js';

export type SlaState = 'ok' | 'degraded' | 'breach' | 'stale';

/** the window /v1/status judges rows in */
export const STATUS_WINDOW_S = 3600;
/** the window /v1/meta/source-quality judges writes in, before falling back to pulses */
export const QUALITY_WINDOW_S = 600;

export function classify(ageS: number | null, sla: SlaClass): SlaState {
  if (ageS === null) return 'stale';
  if (ageS <= sla.tight_s) return 'ok';
  if (ageS <= sla.slack_s) return 'degraded';
  if (ageS <= sla.stale_s) return 'breach';
  return 'stale';
}

export function isHealthy(s: SlaState): boolean {
  return s === 'ok' || s === 'degraded';
}

export interface SourceFacts {
  key: string;
  kind: string;
  sla: SlaClass;
  /** newest write (ms) in the odds table (game markets), 0 when none */
  oddsWrite: number;
  /** newest write (ms) in the prop table (player props, futures), 0 when none */
  propsWrite: number;
  /** last poller pulse (ms) naming the source, 0 when none */
  pulse: number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
/** an age as served: to a tenth of a second. Classes are judged on the exact age (the views drop a quote at its
 *  book's stale_s to the millisecond), never on this: a rounded 15.0 judged ok a write 15.04 s old. */
const shown = (x: number | null) => (x === null ? null : round1(x));

/** exact age in seconds of a write inside the window, else null */
function ageIn(now: number, at: number, windowS: number): number | null {
  if (!(at > 0)) return null;
  const age = Math.max(0, (now - at) / 1000);
  return age <= windowS ? age : null;
}

export interface Quality {
  source: string;
  sla: SlaState;
  basis: 'write' | 'pulse' | 'none';
  age_s: number | null;
  tight_s: number;
  slack_s: number;
  stale_s: number;
  sla_class: string;
  recommended_poll_s: number;
}

/** /v1/meta/source-quality: judged on the newest write of the last 10 minutes, else on the last pulse. */
export function sourceQuality(f: SourceFacts, now: number): Quality {
  const write = ageIn(now, Math.max(f.oddsWrite, f.propsWrite), QUALITY_WINDOW_S);
  const pulse = f.pulse > 0 ? Math.max(0, (now - f.pulse) / 1000) : null;
  const basis = write !== null ? 'write' : pulse !== null ? 'pulse' : 'none';
  const age = write ?? pulse;
  return {
    source: f.key, sla: classify(age, f.sla), basis, age_s: shown(age), tight_s: f.sla.tight_s, slack_s: f.sla.slack_s,
    stale_s: f.sla.stale_s, sla_class: f.sla.name,
    // polling at half the tight threshold, or below, keeps a source ok with one missed poll (8 s for a tight_s of 15
    // let two polls 16 s apart pass it)
    recommended_poll_s: Math.max(1, Math.floor(f.sla.tight_s / 2)),
  };
}

export interface StatusInputs {
  now: number;
  sources: readonly SourceFacts[];
  /** sources a feed is expected to quote; null when no feed says (sources_without_rows cannot be checked) */
  expected: readonly string[] | null;
  /** catalogue books merged or decommissioned */
  retired: readonly string[];
  pollers: readonly object[];
  requests: { p50_per_min: number; p95_per_min: number; last_hour: number };
  database: { ok: boolean; latency_ms: number | null };
  /** NATS ingest and cluster replication counters; absent without NATS_URL */
  nats?: object | null;
  /** live analytics rows: arbitrages, and quotes with a positive edge against some sharp */
  analytics: { arbitrage: number; ev: number };
  /** the node serves the simulator's prices: the sources named are simulated, not the bookmakers' own feeds */
  simulated?: boolean;
}

export function statusPayload(inp: StatusInputs) {
  const { now } = inp;
  const verdicts = inp.sources.map((f) => {
    const newest = Math.max(f.oddsWrite, f.propsWrite);
    const age = ageIn(now, newest, STATUS_WINDOW_S);
    const state = classify(age, f.sla);
    return { f, age, state, healthy: isHealthy(state) };
  });
  const tableRows = (pick: (f: SourceFacts) => number) => verdicts
    .filter((v) => ageIn(now, pick(v.f), STATUS_WINDOW_S) !== null)
    .map((v) => {
      const rowAge = ageIn(now, pick(v.f), STATUS_WINDOW_S);
      const rowState = classify(rowAge, v.f.sla);
      return {
        source: v.f.key, healthy: v.healthy, sla_state: v.state, row_healthy: isHealthy(rowState), row_sla_state: rowState,
        health_scope: 'source' as const, source_latest_age_seconds: shown(v.age), table_latest_age_seconds: shown(rowAge),
      };
    });
  const withRows = new Set(verdicts.filter((v) => v.age !== null).map((v) => v.f.key));
  const sla_by_source: Record<string, object> = {};
  for (const v of verdicts) {
    const q = sourceQuality(v.f, now);
    sla_by_source[v.f.key] = {
      sla: v.state, source_quality_sla: q.sla, source_quality_age_s: q.age_s,
      sla_basis: {
        sla: `freshest write across odds and props within ${STATUS_WINDOW_S} s (authoritative for queryable rows)`,
        source_quality_sla: q.basis === 'write' ? `freshest write within ${QUALITY_WINDOW_S} s` : q.basis === 'pulse' ? `last poller pulse (no write within ${QUALITY_WINDOW_S} s)` : `no write within ${QUALITY_WINDOW_S} s and no poller pulse`,
      },
    };
  }
  const healthy = verdicts.filter((v) => v.healthy).length;
  return {
    status: !inp.database.ok ? 'down' : healthy === verdicts.length ? 'ok' : 'degraded',
    generated_at: new Date(now).toISOString(),
    // the sources below are the simulator's when true: their freshness is the simulator's, no bookmaker's
    simulated: inp.simulated === true,
    window_s: STATUS_WINDOW_S,
    database: inp.database,
    sources: verdicts.map((v) => ({
      source: v.f.key, kind: v.f.kind, sla_class: v.f.sla.name, healthy: v.healthy, sla_state: v.state,
      latest_write_age_seconds: shown(v.age),
    })),
    tables: { odds: tableRows((f) => f.oddsWrite), props: tableRows((f) => f.propsWrite) },
    data_freshness: {
      all_sources_healthy: healthy === verdicts.length, // as status: no source is no unhealthy source
      stale_sources: verdicts.filter((v) => !v.healthy).map((v) => v.f.key),
      // a quote older than its book's stale_s takes no part in any view (engine/sla.ts)
      suppressed_sources: verdicts.filter((v) => v.state === 'stale' && Math.max(v.f.oddsWrite, v.f.propsWrite) > 0).map((v) => v.f.key),
      retired_sources: [...inp.retired],
      sources_without_rows: inp.expected === null ? null : inp.expected.filter((k) => !withRows.has(k)),
    },
    sla_by_source,
    poller_health: { feeds: inp.pollers },
    requests: inp.requests,
    analytics: inp.analytics,
    ...(inp.nats ? { nats: inp.nats } : {}),
  };
}

/** Requests per minute over the last hour: a ring of 60 one-minute buckets. */
export class RequestRate {
  private readonly counts = new Float64Array(60);
  private readonly minutes = new Float64Array(60).fill(-1);
  /** the minute the process started in: minutes before it are not zero-request minutes, they are unknown */
  private readonly startMinute: number;

  constructor(startedAt = 0) {
    this.startMinute = Math.floor(startedAt / 60_000);
  }

  record(now: number): void {
    const m = Math.floor(now / 60_000);
    const i = m % 60;
    if (this.minutes[i] !== m) {
      this.minutes[i] = m;
      this.counts[i] = 0;
    }
    this.counts[i]++;
  }

  /** p50 and p95 of the per-minute counts of the full minutes of the last hour since the start (the current
   *  minute alone before the first full one), and the requests of the last 60 minutes, the current one included.
   *  Minutes before the start and the current partial minute counted as quiet minutes: a node up five minutes
   *  with 176 requests answered p50 0 (the status audit). */
  summary(now: number): { p50_per_min: number; p95_per_min: number; last_hour: number } {
    const m = Math.floor(now / 60_000);
    const count = (mm: number) => {
      const i = ((mm % 60) + 60) % 60;
      return this.minutes[i] === mm ? this.counts[i] : 0;
    };
    let total = 0;
    for (let k = 0; k < 60; k++) total += count(m - k);
    const per: number[] = [];
    for (let mm = m - 1; mm > m - 60 && mm > this.startMinute; mm--) per.push(count(mm));
    if (per.length === 0) per.push(count(m));
    per.sort((a, b) => a - b);
    const q = (p: number) => per[Math.min(per.length - 1, Math.ceil(p * per.length) - 1)];
    return { p50_per_min: q(0.5), p95_per_min: q(0.95), last_hour: total };
  }
}
