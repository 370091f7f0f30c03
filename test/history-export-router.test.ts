// The streamed exports are Router routes: HEAD answers their headers without a body or a charge, other methods
// 405 with Allow, auth and error bodies are the Router's, and each page of the body is formatted in the piscina
// pool (one task per page of 1,000 rows).

import { request } from 'node:http';
import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { seedClosingDay } from './helpers/db.js';

/** a raw HEAD: fetch would not show a body the server wrongly sent */
function rawHead(port: number, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'HEAD' }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => { bytes += c.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('streamed exports through the Router: HEAD, 405, auth, pool formatting', async (t) => {
  const app = await startTestApp(t);
  await seedClosingDay(app.app.services.db, 2500);
  const key = await app.key('business', 1000);
  const paths = ['/v1/historical/closing-lines.json?date=2026-11-19', '/v1/historical/closing-lines.csv?date=2026-11-19',
    '/v1/sports/basketball_nba/closing-lines?daysFrom=30', '/v4/historical/closing-lines.json?date=2026-11-19'];

  for (const p of paths) {
    const head = await rawHead(app.app.port, `${p}&apiKey=${key}`);
    t.equal(head.status, 200, `HEAD ${p}: 200`);
    t.equal(head.bytes, 0, `HEAD ${p}: no body`);
    t.ok(head.headers['x-export-rows'] !== undefined, `HEAD ${p}: X-Export-Rows`);
    t.equal(head.headers['x-requests-last'], '0', `HEAD ${p}: nothing charged`);
    t.match(String(head.headers['x-request-id']), /^[0-9a-f]{32}$/, `HEAD ${p}: X-Request-ID`);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await fetch(`${app.base}${p}&apiKey=${key}`, { method });
      t.equal(res.status, 405, `${method} ${p}: 405`);
      t.equal(res.headers.get('allow'), 'GET, HEAD', `${method} ${p}: Allow: GET, HEAD`);
      t.equal(((await res.json()) as { error_code: string }).error_code, 'METHOD_NOT_ALLOWED', `${method} ${p}: error body`);
    }
    const anon = await app.get(p);
    t.equal(anon.status, 401, `GET ${p} without a key: 401`);
    t.equal(((await anon.json()) as { error_code: string }).error_code, 'MISSING_KEY', 'MISSING_KEY from the Router');
    const bad = await app.get(`${p}&apiKey=nope`);
    t.equal(((await bad.json()) as { error_code: string }).error_code, 'INVALID_KEY', 'INVALID_KEY from the Router');
  }
  const first = await app.get(`/v1/historical/closing-lines.json?date=2026-11-19&limit=1&apiKey=${key}`);
  await first.arrayBuffer();
  t.equal(first.headers.get('x-ratelimit-remaining'), '999', 'the HEADs and the refused calls cost nothing: 1 credit gone after one export');

  const pool = app.app.services.exports!.pool;
  for (const [p, pages] of [['/v1/historical/closing-lines.json?date=2026-11-19', 3], ['/v1/historical/closing-lines.csv?date=2026-11-19', 3],
    ['/v1/historical/closing-lines.json?date=2026-11-19&limit=999', 1]] as const) {
    const before = pool.completed;
    const res = await app.get(`${p}&apiKey=${key}`);
    t.equal(res.status, 200, `GET ${p}: 200`);
    await res.arrayBuffer();
    t.equal(pool.completed - before, pages, `${p}: ${pages} page(s) formatted by the pool`);
    const repeat = await app.get(`${p}&apiKey=${key}`);
    await repeat.arrayBuffer();
    t.equal(pool.completed - before, pages, `${p} again: served from the cache, nothing formatted`);
  }

  // the account's usage by endpoint counts the streamed exports with what they charged (HEADs and refusals not)
  const usage = (await (await app.get(`/v1/usage?by_endpoint=true&apiKey=${key}`)).json()) as
    { used: number; by_endpoint: { endpoint: string; calls: number; credits: number }[] };
  const json = usage.by_endpoint.find((e) => e.endpoint === 'GET /v1/historical/closing-lines.json');
  const csv = usage.by_endpoint.find((e) => e.endpoint === 'GET /v1/historical/closing-lines.csv');
  // json: 1 (limit=1) + 3 + 3 (2,500 rows twice) + 1 + 1 (999 rows twice); csv: 1 credit a request, twice
  t.same([json?.calls, json?.credits], [5, 9], 'JSON exports: five calls, credits per 1,000 rows delivered');
  t.same([csv?.calls, csv?.credits], [2, 2], 'CSV exports: two calls, one credit each');
  t.equal(usage.by_endpoint.reduce((n, e) => n + e.credits, 0), usage.used, 'the split adds up to used');
});
