// A local stand-in for The Odds API v4 on loopback (node:http), speaking the documented shapes from
// test/fixtures/theoddsapi/: /v4/sports, /v4/sports/{sport}/odds, /v4/sports/{sport}/events and
// /v4/sports/{sport}/events/{id}/odds. Credits are kept per apiKey: an odds call that returns events costs
// markets x regions, the rest nothing; every answer carries x-requests-remaining / -used / -last, and a call the
// credits cannot pay answers 401 OUT_OF_USAGE_CREDITS. `script` answers the next requests of a key in its own way
// (a status with an error fixture, a body that is not JSON, 'hang' to never answer, or 'pass' to answer as usual).
//
//   const up = await startOddsServer(t);
//   up.credits.set('k1', 500);
//   up.script('k1', { status: 429, error: 'error-exceeded-freq-limit.json', headers: { 'retry-after': '120' } });

import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const FIXTURES = new URL('../../../test/fixtures/theoddsapi/', import.meta.url);

export function fixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

export interface Scripted {
  status?: number;
  /** fixture file of the body (an error body) */
  error?: string;
  /** the body as is */
  body?: string;
  headers?: Record<string, string>;
  hang?: boolean;
  /** answered as the server answers unscripted (to script a later request of a cycle) */
  pass?: boolean;
}

export interface SeenRequest {
  key: string;
  path: string;
  query: URLSearchParams;
}

export interface OddsServer {
  base: string;
  /** credits left per apiKey (an unknown key gets 1,000) */
  credits: Map<string, number>;
  used: Map<string, number>;
  requests: SeenRequest[];
  /** the next answers to requests of `key`, in order */
  script(key: string, ...answers: Scripted[]): void;
  /** paths asked with `key` */
  paths(key: string): string[];
  close(): Promise<void>;
}

export async function startOddsServer(t: { teardown(fn: () => unknown): void }): Promise<OddsServer> {
  const scripts = new Map<string, Scripted[]>();
  const hanging: ServerResponse[] = [];
  const credits = new Map<string, number>();
  const used = new Map<string, number>();
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const key = url.searchParams.get('apiKey') ?? '';
    requests.push({ key, path: url.pathname, query: url.searchParams });
    const left = credits.get(key) ?? 1000;
    const usage = (last: number) => ({
      'x-requests-remaining': String(credits.get(key) ?? left),
      'x-requests-used': String(used.get(key) ?? 0),
      'x-requests-last': String(last),
    });
    const send = (status: number, body: string, headers: Record<string, string>) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
    const next = scripts.get(key)?.shift();
    if (next !== undefined && next.pass !== true) {
      if (next.hang === true) {
        hanging.push(res);
        return;
      }
      send(next.status ?? 200, next.body ?? (next.error !== undefined ? fixture(next.error) : '[]'), { ...usage(0), ...next.headers });
      return;
    }
    if (key === '') return send(401, JSON.stringify({ message: 'API key is missing', error_code: 'MISSING_KEY' }), {});
    const p = url.pathname.split('/').filter((x) => x !== '');
    let body: string;
    let cost = 0;
    const markets = (url.searchParams.get('markets') ?? 'h2h').split(',').length;
    const regions = (url.searchParams.get('regions') ?? 'us').split(',').length;
    try {
      if (p.length === 2 && p[0] === 'v4' && p[1] === 'sports') body = fixture('sports.json');
      else if (p.length === 4 && p[3] === 'odds') body = fixture(`odds-${p[2]}.json`);
      else if (p.length === 4 && p[3] === 'events') {
        body = JSON.stringify((JSON.parse(fixture(`odds-${p[2]}.json`)) as { bookmakers?: unknown }[]).map(({ bookmakers: _, ...e }) => e));
      } else if (p.length === 6 && p[3] === 'events' && p[5] === 'odds') body = fixture(`event-odds-${p[4]}.json`);
      else return send(404, JSON.stringify({ message: 'Not found', error_code: 'NOT_FOUND' }), usage(0));
    } catch {
      return send(404, JSON.stringify({ message: 'Unknown sport or event', error_code: 'UNKNOWN_SPORT' }), usage(0));
    }
    const doc: unknown = JSON.parse(body);
    const hasEvents = Array.isArray(doc) ? doc.length > 0 : true;
    if ((p[3] === 'odds' || p[5] === 'odds') && hasEvents) cost = markets * regions;
    if (cost > left) return send(401, fixture('error-out-of-usage-credits.json'), usage(0));
    credits.set(key, left - cost);
    used.set(key, (used.get(key) ?? 0) + cost);
    send(200, body, usage(cost));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const s: OddsServer = {
    base: `http://127.0.0.1:${port}`,
    credits,
    used,
    requests,
    script(key, ...answers) {
      const list = scripts.get(key) ?? [];
      list.push(...answers);
      scripts.set(key, list);
    },
    paths: (key) => requests.filter((r) => r.key === key).map((r) => r.path),
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  t.teardown(() => s.close());
  return s;
}
