import t from 'tap';
import { pack } from 'msgpackr';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';
import { uniform as rng } from '../engine/prng.js';


const now = Date.now();
const SAMPLES: unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER, '', 'x', 'h2h', 'Over', 'draftkings',
  'basketball_nba', 'evt_fuzz', '2026-01-01T00:00:00Z', '\u0000', '\ud800', 'a'.repeat(5000), [], {}, [1, 2], { a: 1 },
  now, now + 1e9, 1.0001, 1e-9, -0,
];

function value(r: () => number, depth: number): unknown {
  const k = r();
  if (depth > 3 || k < 0.6) return SAMPLES[Math.floor(r() * SAMPLES.length)];
  if (k < 0.8) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  const o: Record<string, unknown> = {};
  const keys = ['id', 'sport_key', 'commence_time', 'home_team', 'away_team', 'status', 'book', 'event_id', 'market',
    'outcome', 'point', 'player', 'price', 'ts', 'events', 'prices', '__proto__', 'constructor'];
  for (let i = 0; i < 1 + r() * 6; i++) o[keys[Math.floor(r() * keys.length)]] = value(r, depth + 1);
  return o;
}

function body(r: () => number): { data: string | Uint8Array; type: string } {
  const k = r();
  const doc = {
    events: r() < 0.7 ? Array.from({ length: Math.floor(r() * 3) }, () => (r() < 0.5 ? {
      id: 'evt_fuzz', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'A', away_team: 'B',
      ...(value(r, 2) as object),
    } : value(r, 1))) : value(r, 1),
    prices: r() < 0.7 ? Array.from({ length: Math.floor(r() * 5) }, () => (r() < 0.5 ? {
      book: 'draftkings', event_id: 'evt_fuzz', market: 'h2h', outcome: 'A', price: 1.9, ...(value(r, 2) as object),
    } : value(r, 1))) : value(r, 1),
  };
  if (k < 0.15) return { data: Buffer.from(Array.from({ length: Math.floor(r() * 200) }, () => Math.floor(r() * 256))), type: 'application/json' };
  if (k < 0.3) return { data: JSON.stringify(doc).slice(0, Math.floor(r() * 100)), type: 'application/json' };
  if (k < 0.45) return { data: pack(doc).subarray(0, Math.max(1, Math.floor(r() * 60))), type: 'application/msgpack' };
  if (k < 0.6) return { data: pack(doc), type: 'application/msgpack' };
  if (k < 0.65) return { data: JSON.stringify(doc), type: 'text/plain' };
  return { data: JSON.stringify(k < 0.7 ? value(r, 0) : doc), type: 'application/json' };
}

t.test('ingest fuzz - random malformed bodies never give a 5xx or crash the service', async (t) => {
  const app = await startTestApp(t);
  const r = rng(20261123);
  const seen = new Map<number, number>();
  for (let i = 0; i < 400; i++) {
    const b = body(r);
    const res = await fetch(app.base + '/v1/ingest', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': b.type },
      body: b.data,
    });
    const text = await res.text();
    seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
    if (res.status >= 500 || ![202, 400, 413, 415].includes(res.status)) {
      t.fail(`sample ${i} answered ${res.status}: ${text.slice(0, 300)}`);
      break;
    }
    const json = JSON.parse(text) as Record<string, unknown>;
    if (res.status !== 202) t.equal(typeof json.error_code, 'string', `sample ${i} error body has a code`);
  }
  t.ok((seen.get(202) ?? 0) > 20, `some bodies were accepted as batches (${[...seen].join(' ')})`);
  t.ok((seen.get(400) ?? 0) > 20, 'some were malformed');
  const health = await app.get('/health');
  t.equal(health.status, 200, 'service healthy after the fuzz');
  t.same(app.app.services.hub.pool.restarts(), [0, 0], 'no shard crashed');
});
