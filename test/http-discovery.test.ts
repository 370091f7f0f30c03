// GET /v1/sports, /v1/bookmakers and /v1/sports/{sport_key}/events over a real socket, on one app.

import t from 'tap';
import { startTestApp } from './helpers/app.js';

interface Sport { key: string; group: string; title: string; description: string; active: boolean; has_outrights: boolean }
interface Book {
  key: string; title: string; kind: string; regions: string[]; status: string;
  merged_into?: string; note?: string; endpoints?: string[]; example_paths?: string[];
}
interface EventDoc { id: string; sport_key: string; sport_title: string; commence_time: string | number; home_team: string; away_team: string }

const app = await startTestApp(t);
const base = app;
const key = await app.key('business', 1000);
const auth = { 'X-API-Key': key };

t.test('sports - active only by default, all=true adds inactive sports', async (t) => {
  const res = await app.get('/v1/sports');
  t.equal(res.status, 200, 'no key needed');
  const active = (await res.json()) as Sport[];
  t.ok(active.length > 10, 'many sports');
  t.ok(active.every((s) => s.active === true), 'every default entry is active');
  t.same(Object.keys(active[0]).sort(), ['active', 'description', 'group', 'has_outrights', 'key', 'title'], 'v4 sport record');
  t.ok(active.some((s) => s.key === 'basketball_nba'), 'basketball_nba is listed');
  t.notOk(active.some((s) => s.key === 'americanfootball_cfl'), 'an out-of-season sport is not listed');

  const all = (await (await app.get('/v1/sports?all=true')).json()) as Sport[];
  t.ok(all.length > active.length, 'all=true lists more');
  t.ok(all.some((s) => s.key === 'americanfootball_cfl' && s.active === false), 'inactive sport listed with active false');
  const allKeys = new Set(all.map((s) => s.key));
  t.ok(active.every((s) => allKeys.has(s.key)), 'all=true is a superset');
  t.equal(new Set(all.map((s) => s.key)).size, all.length, 'keys are unique');
});

t.test('sports and events - a key given is checked and answered with its balance, free (v4 clients check their quota there)', async (t) => {
  for (const path of ['/v1/sports', '/v4/sports', '/v1/sports/basketball_nba/events']) {
    const res = await app.get(`${path}?apiKey=${key}`);
    t.equal(res.status, 200, `${path} with a key: 200`);
    t.equal(res.headers.get('x-requests-last'), '0', `${path}: x-requests-last 0 (free)`);
    t.ok(Number(res.headers.get('x-requests-remaining')) > 0, `${path}: x-requests-remaining`);
    t.equal(res.headers.get('x-requests-remaining'), res.headers.get('x-ratelimit-remaining'), `${path}: X-RateLimit-Remaining`);
    await res.arrayBuffer();
    const bad = await app.get(`${path}?apiKey=lw_00000000000000000000000000000000`);
    t.equal(bad.status, 401, `${path} with a key that is none: 401`);
    t.equal(((await bad.json()) as { error_code: string }).error_code, 'INVALID_KEY', 'INVALID_KEY');
    const none = await app.get(path);
    t.equal([none.status, none.headers.get('x-requests-remaining')].join(), '200,', `${path} without a key: 200, no balance`);
    await none.arrayBuffer();
  }
  const keyed = await app.get(`/v1/sports?apiKey=${key}`);
  t.equal(keyed.headers.get('cache-control'), 'private, max-age=3600', 'with a key: private (it carries the balance)');
  await keyed.arrayBuffer();
});

t.test('v4 and v1 paths answer with a trailing slash too (The Odds API examples write /v4/sports/?apiKey=)', async (t) => {
  const own = await app.key('business', 1000);
  for (const path of ['/v4/sports/', '/v1/sports/', '/v4/sports/basketball_nba/odds/', '/v4/sports/basketball_nba/events/']) {
    const res = await app.get(`${path}?apiKey=${own}&regions=us`);
    t.equal(res.status, 200, `${path}: 200`);
    await res.arrayBuffer();
  }
  const post = await app.get('/v1/admin/keys/');
  t.equal(post.status, 405, 'a GET on a POST route with a slash: 405, as without');
  t.equal(post.headers.get('allow'), 'POST', 'naming POST');
  await post.arrayBuffer();
});

t.test('sports - ETag, If-None-Match and Cache-Control', async (t) => {
  // the identity body's tags (a client that accepts gzip gets their weak forms: http-compress)
  const app = { get: (path: string, headers: Record<string, string> = {}) => base.get(path, { 'Accept-Encoding': 'identity', ...headers }) };
  const res = await app.get('/v1/sports');
  const etag = res.headers.get('etag');
  t.match(etag, /^"[^"]+"$/, 'a strong ETag');
  t.equal(res.headers.get('cache-control'), 'public, max-age=3600', 'public, cached one hour');
  t.match(res.headers.get('vary'), /X-API-Key, Authorization/, 'varying on the key headers: a shared cache must not answer a keyed request with it (it would lack the usage headers)');
  await res.arrayBuffer();

  const same = await app.get('/v1/sports', { 'If-None-Match': etag! });
  t.equal(same.status, 304, '304 on a matching ETag');
  t.equal(await same.text(), '', '304 has no body');
  t.equal(same.headers.get('etag'), etag, '304 repeats the ETag');
  t.match(same.headers.get('cache-control'), /max-age=3600/, '304 repeats Cache-Control');

  const list = await app.get('/v1/sports', { 'If-None-Match': `"nope", ${etag}` });
  t.equal(list.status, 304, '304 when the ETag is one of a list');
  await list.arrayBuffer();
  const weak = await app.get('/v1/sports', { 'If-None-Match': `W/${etag}` });
  t.equal(weak.status, 304, '304 on the weak form W/"..."');
  await weak.arrayBuffer();

  const star = await app.get('/v1/sports', { 'If-None-Match': '*' });
  t.equal(star.status, 304, '304 on If-None-Match: *');
  await star.arrayBuffer();

  const other = await app.get('/v1/sports', { 'If-None-Match': '"something-else"' });
  t.equal(other.status, 200, '200 when no ETag matches');
  await other.arrayBuffer();

  const all = await app.get('/v1/sports?all=true', { 'If-None-Match': etag! });
  t.equal(all.status, 200, 'the all=true list has its own ETag');
  t.not(all.headers.get('etag'), etag, 'different body, different ETag');
  await all.arrayBuffer();
});

t.test('sports - all=maybe is a 422 naming the parameter', async (t) => {
  const res = await app.get('/v1/sports?all=maybe');
  t.equal(res.status, 422, '422');
  const body = (await res.json()) as { error_code: string; detail: { loc: unknown[]; input: unknown }[] };
  t.equal(body.error_code, 'VALIDATION_ERROR', 'validation error code');
  t.equal(body.detail.length, 1, 'one item');
  t.same(body.detail[0].loc, ['query', 'all'], 'loc names query all');
  t.equal(body.detail[0].input, 'maybe', 'input echoed');
});

t.test('bookmakers - a key is required', async (t) => {
  const none = await app.get('/v1/bookmakers');
  t.equal(none.status, 401, '401 without a key');
  t.equal(((await none.json()) as { error_code: string }).error_code, 'MISSING_KEY', 'MISSING_KEY');
  const wrong = await app.get('/v1/bookmakers', { 'X-API-Key': 'lw_00000000000000000000000000000000' });
  t.equal(wrong.status, 401, '401 with an unknown key');
  t.equal(((await wrong.json()) as { error_code: string }).error_code, 'INVALID_KEY', 'INVALID_KEY');
});

t.test('bookmakers - default is active books with endpoints, and costs nothing', async (t) => {
  const res = await app.get('/v1/bookmakers', auth);
  t.equal(res.status, 200, '200 with a key');
  t.equal(res.headers.get('x-requests-last'), '0', 'costs 0 credits');
  t.equal(res.headers.get('x-ratelimit-remaining'), '1000', 'balance untouched');
  const books = (await res.json()) as Book[];
  t.ok(books.length > 50, 'many books');
  t.ok(books.every((b) => b.status === 'active'), 'only active books');
  for (const k of ['draftkings', 'fanduel', 'williamhill', 'pinnacle', 'betfair_ex_uk']) {
    t.ok(books.some((b) => b.key === k), `${k} listed`);
  }
  t.notOk(books.some((b) => b.key === 'pointsbetus'), 'merged book not listed by default');
  const dk = books.find((b) => b.key === 'draftkings')!;
  t.same(dk.regions, ['us'], 'draftkings is us');
  t.equal(dk.kind, 'sportsbook', 'kind');
  t.ok(Array.isArray(dk.endpoints) && dk.endpoints.includes('game_lines'), 'endpoints attached');
  t.equal(dk.example_paths!.length, dk.endpoints!.length, 'one example path per endpoint');
  t.ok(dk.example_paths!.some((p) => p.includes('/odds?bookmakers=draftkings')), 'example path queries the book');
  t.ok(books.every((b) => b.merged_into === undefined && b.note === undefined), 'active books carry no note');
  const fees = (k: string) => { const b = books.find((x) => x.key === k) as unknown as Record<string, unknown>; return [b.commission, b.trading_fee_rate]; };
  t.same([fees('betfair_ex_uk'), fees('kalshi'), fees('predictit'), fees('polymarket'), fees('draftkings')],
    [[0.05, undefined], [undefined, 0.07], [0.1, undefined], [undefined, undefined], [undefined, undefined]],
    'what each book takes: exchange commission, kalshi\'s fee per contract, predictit\'s fee on profits, none elsewhere');
});

t.test('bookmakers - all=true adds merged, decommissioned and not yet integrated entries with notes', async (t) => {
  const books = (await (await app.get('/v1/bookmakers?all=true', auth)).json()) as Book[];
  const merged = books.find((b) => b.key === 'pointsbetus');
  t.equal(merged?.status, 'merged', 'pointsbetus is merged');
  t.equal(merged?.merged_into, 'fanatics', 'merged_into names the active book');
  t.ok(books.some((b) => b.key === merged?.merged_into && b.status === 'active'), 'the merged_into book is active');
  t.match(merged?.note, /\w/, 'merged carries a note');
  const dec = books.find((b) => b.status === 'decommissioned');
  t.ok(dec, 'a decommissioned entry');
  t.match(dec?.note, /\w/, 'decommissioned carries a note');
  t.equal(dec?.merged_into, undefined, 'decommissioned has no merged_into');
  const nyi = books.find((b) => b.status === 'not_yet_integrated');
  t.ok(nyi, 'a not_yet_integrated entry');
  t.match(nyi?.note, /\w/, 'not_yet_integrated carries a note');
  for (const b of books) if (b.status === 'merged') t.ok(books.some((a) => a.key === b.merged_into && a.status === 'active'), `${b.key} merges into an active book`);
  for (const b of books) if (b.status !== 'active') t.match(b.note, /\w/, `${b.key} (${b.status}) has a note`);
});

t.test('bookmakers - include_endpoints=false drops endpoints and example_paths', async (t) => {
  const books = (await (await app.get('/v1/bookmakers?include_endpoints=false', auth)).json()) as Book[];
  t.ok(books.length > 0, 'books listed');
  t.ok(books.every((b) => !('endpoints' in b) && !('example_paths' in b)), 'no endpoints, no example_paths');
  const all = (await (await app.get('/v1/bookmakers?all=true&include_endpoints=false', auth)).json()) as Book[];
  t.ok(all.every((b) => !('endpoints' in b) && !('example_paths' in b)), 'also with all=true');
  t.ok(all.some((b) => b.status === 'merged' && b.merged_into !== undefined), 'merged_into kept');
});

t.test('bookmakers - ETag and 304, and bad booleans are 422', async (t) => {
  const app = { get: (path: string, headers: Record<string, string> = {}) => base.get(path, { 'Accept-Encoding': 'identity', ...headers }) };
  const res = await app.get('/v1/bookmakers', auth);
  const etag = res.headers.get('etag');
  t.match(etag, /^"[^"]+"$/, 'ETag sent');
  t.match(res.headers.get('cache-control'), /^private, max-age=\d+$/, 'private: a shared cache must not serve a keyed answer to others');
  await res.arrayBuffer();
  const again = await app.get('/v1/bookmakers', { ...auth, 'If-None-Match': etag! });
  t.equal(again.status, 304, '304 on a match');
  t.equal(again.headers.get('x-requests-last'), '0', '304 costs nothing');
  await again.arrayBuffer();
  const variant = await app.get('/v1/bookmakers?include_endpoints=false', { ...auth, 'If-None-Match': etag! });
  t.equal(variant.status, 200, 'another variant does not match');
  t.not(variant.headers.get('etag'), etag, 'variants have their own ETag');
  await variant.arrayBuffer();
  const unauth = await app.get('/v1/bookmakers', { 'If-None-Match': etag! });
  t.equal(unauth.status, 401, 'a matching ETag does not bypass authentication');
  await unauth.arrayBuffer();
  const bad = await app.get('/v1/bookmakers?include_endpoints=nope', auth);
  t.equal(bad.status, 422, 'include_endpoints=nope is 422');
  t.same(((await bad.json()) as { detail: { loc: unknown[] }[] }).detail[0].loc, ['query', 'include_endpoints'], 'loc');
});

t.test('events - listed sorted by commence_time, with filters', async (t) => {
  const now = Date.now();
  const base = Date.UTC(2031, 0, 10, 12, 0, 0);
  const ev = (id: string, sport: string, at: number, home: string, away: string) =>
    ({ id, sport_key: sport, commence_time: at, home_team: home, away_team: away });
  const ingest = await app.ingest({
    events: [
      ev('disc_nba_3', 'basketball_nba', base + 2 * 3_600_000, 'Boston Celtics', 'Miami Heat'),
      ev('disc_nba_1', 'basketball_nba', base, 'Denver Nuggets', 'Utah Jazz'),
      ev('disc_nba_2', 'basketball_nba', base + 3_600_000, 'Chicago Bulls', 'Detroit Pistons'),
      ev('disc_epl_1', 'soccer_epl', base + 30 * 60_000, 'Arsenal', 'Chelsea'),
      ev('disc_liga_1', 'soccer_spain_la_liga', base + 90 * 60_000, 'Sevilla', 'Valencia'),
      ev('disc_nhl_1', 'icehockey_nhl', now + 3_600_000, 'Boston Bruins', 'Buffalo Sabres'),
    ],
  });
  t.equal(ingest.status, 202, 'ingested');
  t.equal(ingest.json.events, 6, 'six events upserted');

  const res = await app.get('/v1/sports/basketball_nba/events');
  t.equal(res.status, 200, 'no key needed');
  t.equal(res.headers.get('x-ratelimit-remaining'), null, 'no usage headers without a key');
  // keyed, it carries the key's balance: private, as /v1/sports is (regression from the documentation audit: none)
  const keyed = await app.get(`/v1/sports/basketball_nba/events?apiKey=${await app.key('starter')}`);
  t.same([keyed.headers.get('cache-control'), keyed.headers.get('x-requests-remaining') !== null], ['private, no-cache', true], 'keyed: Cache-Control: private');
  t.equal(res.headers.get('cache-control'), 'no-cache', 'keyless: no-cache (the list moves with every ingest)');
  const list = (await res.json()) as EventDoc[];
  t.same(list.map((e) => e.id), ['disc_nba_1', 'disc_nba_2', 'disc_nba_3'], 'sorted by commence_time');
  t.same(list[0], {
    id: 'disc_nba_1', sport_key: 'basketball_nba', sport_title: 'NBA', commence_time: '2031-01-10T12:00:00Z',
    home_team: 'Denver Nuggets', away_team: 'Utah Jazz',
  }, 'v4 event shape, ISO commence_time');

  const ids = (await (await app.get('/v1/sports/basketball_nba/events?eventIds=disc_nba_3,disc_nba_1,nope')).json()) as EventDoc[];
  t.same(ids.map((e) => e.id), ['disc_nba_1', 'disc_nba_3'], 'eventIds filter, unknown ids ignored');
  // 500 ids of 32 hex digits (16.5 KB) are a list the bound allows (regression: 2,000 characters refused the 61st)
  const hex = (i: number) => i.toString(16).padStart(32, '0');
  const many = [...Array.from({ length: 499 }, (_, i) => hex(i)), 'disc_nba_2'].join(',');
  const long = await app.get(`/v1/sports/basketball_nba/events?eventIds=${many}`);
  t.equal(long.status, 200, '500 long ids: 200');
  t.same(((await long.json()) as EventDoc[]).map((e) => e.id), ['disc_nba_2'], 'the one known id among them');
  const tooMany = (await (await app.get(`/v1/sports/basketball_nba/events?eventIds=${many},${hex(999)}`)).json()) as { detail: { msg: string }[] };
  t.equal(tooMany.detail[0].msg, 'at most 500 values', '501 ids: 422 at most 500 values');
  const doc = (await (await app.get('/openapi.json')).json()) as { paths: Record<string, { get: { parameters: { name: string; schema: { description: string; maxLength: number } }[] } }> };
  const spec = doc.paths['/v1/sports/{sport_key}/events'].get.parameters.find((x) => x.name === 'eventIds')!.schema;
  t.match(spec.description, /at most 500 values/, 'the document gives the list bound');
  t.ok(spec.maxLength >= 500 * 33, 'and a length that 500 ids fit');

  const from = (await (await app.get('/v1/sports/basketball_nba/events?commenceTimeFrom=2031-01-10T13:00:00Z')).json()) as EventDoc[];
  t.same(from.map((e) => e.id), ['disc_nba_2', 'disc_nba_3'], 'commenceTimeFrom is inclusive');
  const to = (await (await app.get('/v1/sports/basketball_nba/events?commenceTimeTo=2031-01-10T13:00:00Z')).json()) as EventDoc[];
  t.same(to.map((e) => e.id), ['disc_nba_1', 'disc_nba_2'], 'commenceTimeTo is inclusive');
  const both = (await (await app.get('/v1/sports/basketball_nba/events?commenceTimeFrom=2031-01-10T12:30:00Z&commenceTimeTo=2031-01-10T13:30:00Z')).json()) as EventDoc[];
  t.same(both.map((e) => e.id), ['disc_nba_2'], 'both bounds');
  const zoned = (await (await app.get(`/v1/sports/basketball_nba/events?commenceTimeFrom=${encodeURIComponent('2031-01-10T14:00:00+01:00')}&commenceTimeTo=${encodeURIComponent('2031-01-10T14:00:00+01:00')}`)).json()) as EventDoc[];
  t.same(zoned.map((e) => e.id), ['disc_nba_2'], 'an offset zone is honoured');

  const unix = (await (await app.get('/v1/sports/basketball_nba/events?dateFormat=unix&eventIds=disc_nba_1')).json()) as EventDoc[];
  t.equal(unix[0].commence_time, base / 1000, 'dateFormat=unix gives integer seconds');
  t.ok(Number.isInteger(unix[0].commence_time), 'an integer');

  const soccer = (await (await app.get('/v1/sports/soccer/events')).json()) as EventDoc[];
  t.same(soccer.map((e) => [e.id, e.sport_key]), [['disc_epl_1', 'soccer_epl'], ['disc_liga_1', 'soccer_spain_la_liga']],
    'umbrella soccer includes every league, each with its own sport_key, sorted');
  t.equal(soccer[0].sport_title, 'EPL', 'child sport title');

  const epl = (await (await app.get('/v1/sports/soccer_epl/events')).json()) as EventDoc[];
  t.same(epl.map((e) => e.id), ['disc_epl_1'], 'a league lists only its own events');
  const nhl = (await (await app.get('/v1/sports/icehockey_nhl/events')).json()) as EventDoc[];
  t.same(nhl.map((e) => e.id), ['disc_nhl_1'], 'another sport');
  const empty = await app.get('/v1/sports/basketball_wnba/events');
  t.equal(empty.status, 200, 'a known sport without events is 200');
  t.same(await empty.json(), [], 'an empty list');
  const v4 = await app.get('/v4/sports/basketball_nba/events');
  t.same(await v4.json(), list, '/v4 alias gives the same list');
});

t.test('events - a final event leaves the list', async (t) => {
  const at = Date.UTC(2031, 1, 1, 18, 0, 0);
  const ev = { id: 'disc_wnba_final', sport_key: 'basketball_wnba', commence_time: at, home_team: 'Seattle Storm', away_team: 'Las Vegas Aces' };
  t.equal((await app.ingest({ events: [ev] })).status, 202, 'ingested');
  t.same(((await (await app.get('/v1/sports/basketball_wnba/events')).json()) as EventDoc[]).map((e) => e.id), ['disc_wnba_final'], 'listed');
  t.equal((await app.ingest({ events: [{ ...ev, status: 'final' }] })).status, 202, 'marked final');
  t.same(await (await app.get('/v1/sports/basketball_wnba/events')).json(), [], 'gone once final');
});

t.test('events - unknown sport is 404 UNKNOWN_SPORT, bad parameters are 422', async (t) => {
  const unknown = await app.get('/v1/sports/curling_world/events');
  t.equal(unknown.status, 404, '404');
  t.equal(((await unknown.json()) as { error_code: string }).error_code, 'UNKNOWN_SPORT', 'UNKNOWN_SPORT');
  const malformed = await app.get('/v1/sports/%ZZ/events');
  t.equal(malformed.status, 404, 'a malformed escape in the sport key is a 404, not a crash');
  await malformed.arrayBuffer();

  const cases: [string, string][] = [
    ['commenceTimeFrom=garbage', 'commenceTimeFrom'],
    ['commenceTimeTo=2031-01-10', 'commenceTimeTo'],
    ['commenceTimeFrom=2031-01-10T12:00:00', 'commenceTimeFrom'],
    ['dateFormat=rfc', 'dateFormat'],
  ];
  for (const [q, name] of cases) {
    const res = await app.get(`/v1/sports/basketball_nba/events?${q}`);
    t.equal(res.status, 422, `${q} is 422`);
    const body = (await res.json()) as { error_code: string; detail: { loc: unknown[] }[] };
    t.equal(body.error_code, 'VALIDATION_ERROR', `${q}: VALIDATION_ERROR`);
    t.same(body.detail.map((d) => d.loc), [['query', name]], `${q}: loc names ${name}`);
  }
  const range = await app.get('/v1/sports/basketball_nba/events?commenceTimeFrom=2031-03-12T02:00:00%2B02:00&commenceTimeTo=2031-03-11T00:00:00Z');
  t.equal(range.status, 422, 'an end before the start: 422');
  t.same(((await range.json()) as { detail: { loc: unknown[]; input: unknown }[] }).detail.map((d) => [d.loc[1], d.input]),
    [['commenceTimeTo', '2031-03-11T00:00:00Z']], 'naming commenceTimeTo, its value as sent (as /odds echoes it; it was the normalised 00:00:00.000Z)');
  const two = await app.get('/v1/sports/basketball_nba/events?commenceTimeFrom=x&dateFormat=y');
  t.same(((await two.json()) as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc[1]).sort(),
    ['commenceTimeFrom', 'dateFormat'], 'every bad parameter is listed in one 422');
});
