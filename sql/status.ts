// Status history: one row per source every 30 s (workers/status-service.ts), read back as a timeline.

import type { Database } from './connection.js';

export const STATUS_RETENTION_MS = 8 * 86_400_000;

/** `at`: the sample's slot (StatusService rounds to its interval: nodes of a cluster sampling at their own phase
 *  write one row per source and slot, the first one's) */
export async function insertSamples(db: Database, at: number, samples: readonly { source: string; state: string; age: number | null }[],
  simulated = false): Promise<void> {
  if (samples.length === 0) return;
  // one JSON parameter, so that the statement's text is the same whatever the number of sources (sql/history.ts)
  const rows = JSON.stringify(samples.map((s) => ({ s: s.source, l: s.state, a: s.age })));
  await db.sql`insert into status_samples (sampled_at, source, sla_state, age_s, simulated)
    select ${new Date(at)}, v.s, v.l, v.a, ${simulated} from json_to_recordset(${rows}::text::json) as v(s text, l text, a double precision)
    on conflict do nothing`;
  await db.sql`delete from status_samples where sampled_at < ${new Date(at - STATUS_RETENTION_MS)}`;
}

export interface Segment {
  from: string;
  to: string;
  sla_state: string;
  samples: number;
  /** sampled while the node served the simulator's prices: the source's freshness was the simulator's */
  simulated: boolean;
}

/** Per source, its samples since `from` merged into runs of one class (read through a cursor). Samples further apart
 *  than `gapMs` (none taken between: the service was down) end a run and start another, so a stretch nobody sampled
 *  does not read as the class around it. */
export async function timeline(db: Database, from: number, gapMs = Infinity): Promise<Map<string, Segment[]>> {
  const out = new Map<string, Segment[]>();
  const cursor = db.sql<{ source: string; sampled_at: Date; sla_state: string; simulated: boolean }[]>`
    select source, sampled_at, sla_state, simulated from status_samples where sampled_at >= ${new Date(from)}
    order by source, sampled_at`.cursor(5000) as AsyncIterable<{ source: string; sampled_at: Date; sla_state: string; simulated: boolean }[]>;
  for await (const page of cursor) {
    for (const r of page) {
      let list = out.get(r.source);
      if (list === undefined) out.set(r.source, (list = []));
      const at = r.sampled_at.toISOString();
      const last = list[list.length - 1];
      if (last !== undefined && last.sla_state === r.sla_state && last.simulated === r.simulated && r.sampled_at.getTime() - Date.parse(last.to) <= gapMs) {
        last.to = at;
        last.samples++;
      } else list.push({ from: at, to: at, sla_state: r.sla_state, samples: 1, simulated: r.simulated });
    }
  }
  return out;
}
