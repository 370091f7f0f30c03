// Webhook management API (issue 6): tiers, both variants' shapes and secrets, unsupported types, destination
// rules at creation and at delivery, ownership, limits, Idempotency-Key, PATCH / DELETE / rotate-secret, and the
// machine-readable description.

import t from 'tap';
import { attempt } from '../workers/webhook-sender.js';
import { appDatabases, startTestApp, type TestApp } from './helpers/app.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const json = { 'content-type': 'application/json' };
const j = (r: Response): Promise<any> => r.json() as Promise<any>;

function call(app: TestApp, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(app.base + path, {
    method,
    headers: { ...json, 'x-api-key': key, ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

for (const database of appDatabases()) {
  t.test(`webhook management (${database})`, async (t) => {
    const app = await startTestApp(t, { database, shards: 1 });
    const pro = await app.key('pro');
    const pro2 = await app.key('pro');
    const business = await app.key('business');
    const starter = await app.key('starter');
    const free = await app.key('free');

    t.test('free and starter keys get 403 TIER_REQUIRED', async (t) => {
      for (const k of [free, starter]) {
        const res = await call(app, 'GET', '/v1/webhooks', k);
        t.equal(res.status, 403, 'list 403');
        t.equal((await j(res)).error_code, 'TIER_REQUIRED', 'code');
        const res2 = await call(app, 'POST', '/v1/webhooks', k, { url: 'https://example.com/h', events: ['arb_flagged'] });
        t.equal(res2.status, 403, 'create 403');
      }
    });

    t.test('Variant A: integer id, whsec_ secret shown at creation and rotation only', async (t) => {
      const res = await call(app, 'POST', '/v1/webhooks', pro, { url: 'https://93.184.216.34/hook', events: ['arb_flagged', 'ev_alert'], sport_filter: ['basketball_nba'] });
      t.equal(res.status, 201, '201');
      const w = await j(res);
      t.equal(typeof w.id, 'number', 'integer id');
      t.match(w.secret, /^whsec_[A-Za-z0-9_-]{43}$/, 'whsec_ + 43 base64url');
      t.same(w.events, ['arb_flagged', 'ev_alert'], 'events');
      t.same(w.sport_filter, ['basketball_nba'], 'sport_filter');
      t.equal(w.is_active, true, 'active');
      t.ok(!Number.isNaN(Date.parse(w.created_at)), 'created_at ISO');
      const got = await j(await call(app, 'GET', `/v1/webhooks/${w.id}`, pro));
      t.equal(got.secret, undefined, 'GET does not show the secret');
      t.equal(got.url, 'https://93.184.216.34/hook', 'url');
      const pa = await call(app, 'PATCH', `/v1/webhooks/${w.id}`, pro, { events: ['line_move'], sport_filter: ['soccer', 'icehockey_nhl'], url: 'https://93.184.216.35/h2' });
      t.equal(pa.status, 200, 'PATCH 200');
      const p = await j(pa);
      t.same(p.events, ['line_move'], 'events replaced');
      t.ok(p.sport_filter.includes('soccer_epl') && p.sport_filter.includes('icehockey_nhl'), 'umbrella key expanded');
      t.equal(p.url, 'https://93.184.216.35/h2', 'url changed');
      t.equal((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, pro, { url: 'https://10.0.0.1/' })).status, 422, 'PATCH checks the destination too');
      t.equal((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, pro, { events: ['injury'] })).status, 400, 'and the event types');
      const rot = await call(app, 'POST', `/v1/webhooks/${w.id}/rotate-secret`, pro);
      t.equal(rot.status, 200, 'rotate 200');
      const r = await j(rot);
      t.match(r.secret, /^whsec_[A-Za-z0-9_-]{43}$/, 'new secret');
      t.not(r.secret, w.secret, 'a different secret');
      const del = await call(app, 'DELETE', `/v1/webhooks/${w.id}`, pro);
      t.equal(del.status, 200, 'delete 200');
      t.equal((await call(app, 'GET', `/v1/webhooks/${w.id}`, pro)).status, 404, 'gone');
    });

    t.test('Variant B: opaque id, signing_secret at creation only, filters and format', async (t) => {
      const res = await call(app, 'POST', '/v1/webhooks', business, {
        destination_url: 'https://93.184.216.34/b', events: ['arbitrage.opened', 'ev.flagged'],
        filters: { sport_keys: ['soccer_epl'], min_edge_pct: 1.5 }, format: 'slack',
      });
      t.equal(res.status, 201, '201');
      const w = await j(res);
      t.match(w.id, /^wh_[0-9a-f]+$/, 'opaque id');
      t.equal(w.destination_url, 'https://93.184.216.34/b', 'destination_url');
      t.same(w.filters, { sport_keys: ['soccer_epl'], min_edge_pct: 1.5 }, 'filters');
      t.equal(w.format, 'slack', 'format');
      t.match(w.signing_secret, /^[A-Za-z0-9_-]{16,}$/, 'signing_secret returned at creation');
      const got = await j(await call(app, 'GET', `/v1/webhooks/${w.id}`, business));
      t.equal(got.signing_secret, undefined, 'not by a read of the subscription (SPEC: returned once, save it)');
      const listed = (await j(await call(app, 'GET', '/v1/webhooks', business))) as unknown as { id: string; signing_secret?: string }[];
      t.ok(listed.some((x) => x.id === w.id) && listed.every((x) => x.signing_secret === undefined), 'nor by the list');
      const patch = await call(app, 'PATCH', `/v1/webhooks/${w.id}`, business, { format: 'discord', filters: { min_edge_pct: 3 }, is_active: false });
      t.equal(patch.status, 200, 'patch 200');
      const p = await j(patch);
      t.equal(p.format, 'discord', 'format changed');
      t.same(p.filters, { sport_keys: ['soccer_epl'], min_edge_pct: 3 }, 'filters merged: min_edge_pct changed, sport_keys kept');
      t.equal(p.is_active, false, 'deactivated');
      t.equal((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, business, { url: 'https://93.184.216.34/x' })).status, 422, 'a Variant A field on B is 422');
      t.equal((await call(app, 'GET', `/v1/webhooks/${w.id}`, pro)).status, 404, 'another owner gets 404');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, business);
    });

    t.test('unsupported event types are 400 UNSUPPORTED_EVENT_TYPE', async (t) => {
      for (const [body, what] of [
        [{ url: 'https://93.184.216.34/h', events: ['injury'] }, 'injury'],
        [{ url: 'https://93.184.216.34/h', events: ['arbitrage.opened'] }, 'a Variant B type on A'],
        [{ destination_url: 'https://93.184.216.34/h', events: ['arb_flagged'] }, 'a Variant A type on B'],
        [{ url: 'https://93.184.216.34/h', events: ['test'] }, 'test is sent on request only'],
      ] as const) {
        const res = await call(app, 'POST', '/v1/webhooks', pro, body);
        t.equal(res.status, 400, `${what}: 400`);
        t.equal((await j(res)).error_code, 'UNSUPPORTED_EVENT_TYPE', `${what}: code`);
      }
      const res = await call(app, 'POST', '/v1/webhooks', pro, { url: 'https://93.184.216.34/h', events: [] });
      t.equal(res.status, 422, 'no events: 422');
      // regression: an empty sport filter was stored and matched no event at all
      const none = await call(app, 'POST', '/v1/webhooks', pro, { url: 'https://93.184.216.34/h', events: ['arb_flagged'], sport_filter: [] });
      t.equal(none.status, 422, 'sport_filter []: 422 (omit it for every sport)');
      t.same((await j(none)).detail?.[0]?.loc, ['body', 'sport_filter'], 'names the field');
      const noneB = await call(app, 'POST', '/v1/webhooks', pro, { destination_url: 'https://93.184.216.34/h', events: ['ev.flagged'], filters: { sport_keys: [] } });
      t.equal(noneB.status, 422, 'Variant B filters.sport_keys []: 422');
      const both = await call(app, 'POST', '/v1/webhooks', pro, { url: 'https://93.184.216.34/h', destination_url: 'https://93.184.216.34/h', events: ['arb_flagged'] });
      t.equal(both.status, 422, 'both url fields: 422');
    });

    t.test('SSRF: https only, never loopback, private, link-local or metadata (422 at creation)', async (t) => {
      for (const url of [
        'http://93.184.216.34/h', 'https://127.0.0.1/h', 'https://10.1.2.3/h', 'https://172.16.0.1/h', 'https://192.168.1.1/h',
        'https://169.254.169.254/latest/meta-data', 'https://[::1]/h', 'https://[::ffff:127.0.0.1]/h', 'https://[fd00::1]/h',
        'https://[fe80::1]/h', 'https://100.64.0.1/h', 'https://0.0.0.0/h', 'https://2130706433/h', 'https://localhost/h',
        'https://metadata.google.internal/x', 'https://user:pw@93.184.216.34/h', 'ftp://93.184.216.34/h', 'not a url',
      ]) {
        const res = await call(app, 'POST', '/v1/webhooks', pro, { url, events: ['arb_flagged'] });
        t.equal(res.status, 422, `${url}: 422`);
        const b = await j(res);
        t.same(b.detail?.[0]?.loc, ['body', 'url'], `${url}: names the field`);
      }
      const res = await call(app, 'POST', '/v1/webhooks', pro, { destination_url: 'https://192.168.0.10/h', events: ['ev.flagged'] });
      t.equal(res.status, 422, 'Variant B too');
    });

    t.test('SSRF at delivery: the address is checked after DNS resolution, before connecting', async (t) => {
      const rx = await startReceiver(t);
      const job = {
        id: 1, body: '{}', secret: 's', variant: 'A' as const, eventType: 'test', webhookId: '1', deliveryId: 'dlv_x', attempt: 1, replay: 0,
        timeoutMs: 2000, allowPrivate: false,
      };
      const viaName = await attempt({ ...job, url: `http://localhost:${rx.port}/hook` });
      t.equal(viaName.statusCode, null, 'no request made');
      t.match(viaName.error, /forbidden address/, 'a name resolving to loopback is refused');
      const literal = await attempt({ ...job, url: `https://127.0.0.1:${rx.port}/hook` });
      t.match(literal.error, /forbidden address/, 'a loopback literal is refused');
      t.equal(rx.requests.length, 0, 'the receiver saw nothing');
      const allowed = await attempt({ ...job, url: rx.url, allowPrivate: true });
      t.equal(allowed.statusCode, 200, 'WEBHOOK_ALLOW_PRIVATE lifts it');
    });

    t.test('ownership: a subscription is invisible to other keys', async (t) => {
      const res = await call(app, 'POST', '/v1/webhooks', pro, { url: 'https://93.184.216.34/own', events: ['new_event'] });
      const w = await j(res);
      for (const [m, p] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test'], ['POST', '/rotate-secret'], ['GET', '/deliveries']] as const) {
        const r = await call(app, m, `/v1/webhooks/${w.id}${p}`, pro2, m === 'PATCH' ? { is_active: false } : undefined);
        t.equal(r.status, 404, `${m} ${p || '/'}: 404 for another key`);
        t.equal((await j(r)).error_code, 'WEBHOOK_NOT_FOUND', 'code');
      }
      const list = await j(await call(app, 'GET', '/v1/webhooks', pro2));
      t.same(list, [], 'not listed for another key');
      const mine = await j(await call(app, 'GET', '/v1/webhooks', pro));
      t.ok(mine.some((x: { id: number }) => x.id === w.id), 'listed for its owner');
      await call(app, 'DELETE', `/v1/webhooks/${w.id}`, pro);
    });

    t.test('tier limit: pro holds 5 subscriptions, the 6th is 409', async (t) => {
      const k = await app.key('pro');
      for (let i = 0; i < 5; i++) {
        const r = await call(app, 'POST', '/v1/webhooks', k, { url: `https://93.184.216.34/l${i}`, events: ['arb_flagged'] });
        t.equal(r.status, 201, `hook ${i + 1}: 201`);
      }
      const r = await call(app, 'POST', '/v1/webhooks', k, { url: 'https://93.184.216.34/l6', events: ['arb_flagged'] });
      t.equal(r.status, 409, '6th: 409');
      t.equal((await j(r)).error_code, 'WEBHOOK_LIMIT', 'code');
    });

    t.test('Idempotency-Key: the same request answers the same subscription; another body is 422', async (t) => {
      const k = await app.key('business');
      const body = { url: 'https://93.184.216.34/idem', events: ['line_move'] };
      const [a, b] = await Promise.all([
        call(app, 'POST', '/v1/webhooks', k, body, { 'idempotency-key': 'abc-1' }),
        call(app, 'POST', '/v1/webhooks', k, body, { 'idempotency-key': 'abc-1' }),
      ]);
      t.equal(a.status, 201, 'first 201');
      t.equal(b.status, 201, 'repeat 201');
      const ja = await j(a);
      const jb = await j(b);
      t.equal(ja.id, jb.id, 'one subscription');
      t.equal(ja.secret, jb.secret, 'the same answer, secret included');
      const list = await j(await call(app, 'GET', '/v1/webhooks', k));
      t.equal(list.length, 1, 'only one created');
      const c = await call(app, 'POST', '/v1/webhooks', k, { ...body, events: ['odds_drop'] }, { 'idempotency-key': 'abc-1' });
      t.equal(c.status, 422, 'another body with the key: 422');
      t.equal((await j(c)).error_code, 'IDEMPOTENCY_KEY_REUSED', 'code');
      const other = await app.key('business');
      const d = await call(app, 'POST', '/v1/webhooks', other, body, { 'idempotency-key': 'abc-1' });
      t.equal(d.status, 201, 'keys are per owner');
      t.not((await j(d)).id, ja.id, 'another owner gets its own subscription');
    });

    t.test('GET /v1/meta/webhooks and /openapi.json describe both variants', async (t) => {
      const meta = await j(await app.get('/v1/meta/webhooks'));
      t.equal(meta.version, '0.1', 'version 0.1');
      t.same(Object.keys(meta.variants.A.event_types).sort(), ['arb_flagged', 'ev_alert', 'line_move', 'live_arb', 'new_event', 'odds_drop', 'test'], 'A types');
      t.same(Object.keys(meta.variants.B.event_types).sort(), ['arbitrage.closed', 'arbitrage.opened', 'ev.flagged', 'line_move.steam', 'parser.degraded', 'source_quality.breach', 'source_quality.recovery'], 'B types');
      t.same(meta.variants.A.event_types.arb_flagged.data.required.sort(), ['away_team', 'edge_pct', 'home_team', 'legs', 'market', 'match_id', 'sport_key'], 'arb_flagged data per SPEC');
      const doc = await j(await app.get('/openapi.json'));
      t.ok(doc.webhooks?.arb_flagged?.post, 'OpenAPI webhooks section');
      const attemptHeader = doc.webhooks.arb_flagged.post.parameters.find((p: { name: string }) => p.name === 'X-Service-Delivery-Attempt');
      t.same([attemptHeader.schema.minimum, attemptHeader.schema.maximum], [1, 3], 'the attempt header is 1 to 3');
      for (const ty of ['arb_flagged', 'arbitrage.opened']) {
        t.ok(doc.webhooks[ty].post.parameters.some((p: { name: string; required: boolean }) => p.name === 'X-Service-Replay' && !p.required), `${ty}: X-Service-Replay documented`);
      }
      t.match(meta.variants.A.headers['X-Service-Replay'], /replay/, 'and in /v1/meta/webhooks');
      t.match(meta.delivery.replay, /X-Service-Delivery-Attempt 1 and X-Service-Replay/, 'with the replay decision');
      t.ok(doc.paths['/v1/webhooks/{webhook_id}'].patch && doc.paths['/v1/webhooks/{webhook_id}'].delete, 'PATCH and DELETE documented');
      const codes = doc['x-error-codes'].map((e: { code: string }) => e.code);
      for (const c of ['WEBHOOK_LIMIT', 'WEBHOOK_NOT_FOUND', 'IDEMPOTENCY_KEY_REUSED', 'UNSUPPORTED_EVENT_TYPE']) t.ok(codes.includes(c), `${c} in the catalogue`);
    });
  });
}
