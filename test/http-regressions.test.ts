import t from 'tap';
import { startTestApp } from './helpers/app.js';

t.test('http regressions', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');

  t.test('HEAD on a GET route answers like GET without a body and charges nothing', async (t) => {
    const get = await app.get('/v1/sports');
    const head = await fetch(app.base + '/v1/sports', { method: 'HEAD' });
    t.equal(head.status, 200, 'HEAD 200');
    t.equal(head.headers.get('content-length'), get.headers.get('content-length'), 'same length as GET');
    t.equal((await head.arrayBuffer()).byteLength, 0, 'no body');
    const before = Number((await app.get(`/v1/bookmakers?apiKey=${key}`)).headers.get('x-requests-remaining'));
    const priced = await fetch(`${app.base}/v1/sports/basketball_nba/odds?apiKey=${key}&markets=h2h,spreads`, { method: 'HEAD' });
    t.equal(priced.status, 200, 'priced HEAD 200');
    t.equal(Number(priced.headers.get('x-requests-remaining')), before, 'HEAD charged nothing');
    t.equal(priced.headers.get('x-requests-last'), '0', 'x-requests-last 0');
  });

  t.test('a HEAD, and a 304, leave their keep-alive connection usable for the next request', async (t) => {
    const { connect } = await import('node:net');
    const sock = connect(Number(new URL(app.base).port), '127.0.0.1');
    let got = '';
    sock.on('data', (d: Buffer) => { got += d.toString('latin1'); });
    const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
    const until = async (n: number) => {
      for (let i = 0; i < 200 && got.split('HTTP/1.1 ').length - 1 < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    const etag = (await app.get('/v1/sports')).headers.get('etag')!;
    sock.write(`HEAD /v1/sports/basketball_nba/odds?apiKey=${key} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(1);
    sock.write(`GET /v1/sports HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${etag}\r\n\r\n`);
    await until(2);
    sock.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(3);
    sock.end();
    await closed;
    const answers = got.split(/(?=HTTP\/1\.1 )/);
    t.equal(answers.length, 3, 'three answers on one connection');
    t.match(answers[0], /^HTTP\/1\.1 200 OK/, 'the HEAD: 200');
    t.match(answers[0], /\r\nContent-Length: [1-9]\d*\r\n/i, 'with the length its GET would have');
    t.match(answers[0], /\r\n\r\n$/, 'and no body');
    t.match(answers[1], /^HTTP\/1\.1 304 /, 'the conditional GET after it: 304');
    t.notMatch(answers[1], /Content-Length/i, 'a 304 carries no Content-Length');
    t.match(answers[2], /^HTTP\/1\.1 200 OK/, 'and the request after the 304 is answered too');
  });

  t.test('HEAD on a priced route is refused where its GET would be: out of credits is 401 for both', async (t) => {
    const poor = await app.key('starter', 1);
    const url = `${app.base}/v1/sports/basketball_nba/odds?apiKey=${poor}`;
    const first = await app.get(url.slice(app.base.length));
    t.equal(first.status, 200, 'GET with 1 credit: 200');
    await first.arrayBuffer();
    const head = await fetch(url, { method: 'HEAD' });
    t.equal(head.status, 401, 'HEAD with 0 credits left: 401, as the GET (it was 200 with a body length)');
    const get = await app.get(url.slice(app.base.length));
    t.equal(get.status, 401, 'GET with 0 credits left: 401');
    t.equal(((await get.json()) as { error_code: string }).error_code, 'OUT_OF_USAGE_CREDITS', 'OUT_OF_USAGE_CREDITS');
    const rich = await app.key('starter', 5);
    const ok = await fetch(`${app.base}/v1/sports/basketball_nba/odds?apiKey=${rich}`, { method: 'HEAD' });
    t.same([ok.status, ok.headers.get('x-requests-remaining')], [200, '5'], 'a balance that covers the GET: HEAD 200, nothing taken');
  });

  t.test('ingest refuses a request without the admin key before reading its body', async (t) => {
    const res = await fetch(app.base + '/v1/ingest', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(20 * 1024 * 1024) },
      body: Buffer.alloc(20 * 1024 * 1024, 32),
    }).catch((e: unknown) => e as Error);
    if (res instanceof Error) {
      t.pass('connection closed before the body was taken');
      return;
    }
    t.equal(res.status, 401, 'a request without the admin key is 401, not 413: auth comes first');
    t.equal(((await res.json()) as { error_code: string }).error_code, 'ADMIN_KEY_REQUIRED', 'code');
  });

  t.test('/events with commenceTimeFrom after commenceTimeTo is 422, like /odds', async (t) => {
    const res = await app.get('/v1/sports/basketball_nba/events?commenceTimeFrom=2026-12-02T00:00:00Z&commenceTimeTo=2026-12-01T00:00:00Z');
    t.equal(res.status, 422, '422');
    const body = (await res.json()) as { detail: { loc: string[] }[] };
    t.same(body.detail[0].loc, ['query', 'commenceTimeTo'], 'names the parameter');
  });

  t.test('odds with a merged or decommissioned bookmaker is 422 naming where to look, and charges nothing', async (t) => {
    const res = await app.get(`/v1/sports/basketball_nba/odds?apiKey=${key}&bookmakers=draftkings,pointsbetus`);
    t.equal(res.status, 422, 'merged book refused');
    const body = (await res.json()) as { message: string };
    t.match(body.message, /pointsbetus is merged into fanatics/, 'names the book it merged into');
    t.equal(res.headers.get('x-requests-last'), '0', 'nothing charged');
    const dec = await app.get(`/v1/sports/basketball_nba/odds?apiKey=${key}&bookmakers=foxbet`);
    t.equal(dec.status, 422, 'decommissioned book refused');
  });

  t.test('a query parameter the endpoint does not know is named in X-Ignored-Params (a misspelt filter filters nothing)', async (t) => {
    // regression (audit): arbitrage?min_profit=5 answered every row, with nothing to say minProfit was not given
    const res = await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}&min_profit=5&minProfit=1&includeLinks=true&min_profit=6`);
    t.equal(res.status, 200, 'still served: unknown parameters are ignored, as The Odds API does');
    t.equal(res.headers.get('x-ignored-params'), 'min_profit,includeLinks', 'each unknown name once, in order; minProfit and the key are read');
    t.equal((await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}&minProfit=1`)).headers.get('x-ignored-params'), null, 'absent when every parameter is read');
    const bad = await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}&limit=0&minprofit=2`);
    t.same([bad.status, bad.headers.get('x-ignored-params')], [422, 'minprofit'], 'on a 422 too (names are case-sensitive)');
    const odd = await app.get(`/v1/sports?x%0D%0AInjected=1&ok=1`);
    t.same([odd.headers.get('x-ignored-params'), odd.headers.get('injected')], ['ok', null], 'a name that could break the header is left out of it');
  });
});
