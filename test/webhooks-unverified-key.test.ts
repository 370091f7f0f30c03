// A sign-up's key is unverified (anyone can sign up with any address): once the account holds a verified key, the
// unverified one may not create, change, delete, rotate the secret of, test or replay the account's webhook
// subscriptions (403 KEY_NOT_VERIFIED), while the verified key may. Against a real receiver on loopback.

import t from 'tap';
import { appDatabases, startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver, verifyA } from './helpers/webhook-receiver.js';

for (const database of appDatabases()) {
  t.test(`webhooks - an unverified key may not change or send to the account's subscriptions once it holds a verified key (${database})`, async (t) => {
    const app = await startTestApp(t, { database, shards: 1, webhooks: { allowPrivate: true, pollMs: 25 } });
    const rx = await startReceiver(t);
    const accounts = app.app.services.accounts;
    // the stranger signs up first with the owner's address (an unverified key), then the owner logs in (a verified one)
    const signup = await accounts.create({ tier: 'pro', verified: false });
    const stranger = signup.key;
    const owner = (await accounts.create({ tier: 'pro', accountId: signup.state.account.id, verified: true })).key;

    const created = await call(app, 'POST', '/v1/webhooks', owner, { url: rx.url + '?owner', events: ['new_event'] });
    t.equal(created.status, 201, 'the verified key creates a subscription');
    const w = await j(created);
    const sent = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/test`, owner));
    t.same([sent.delivered, sent.status_code], [true, 200], 'the verified key sends a test');
    const before = rx.requests.length;

    // regression (the webhook audit): PATCH and DELETE were refused, while rotate-secret handed the new secret to the
    // sign-up's key (it could then sign forged events the owner's receiver accepts), and create, test and replay passed
    for (const [what, method, path, body] of [
      ['create a subscription', 'POST', '/v1/webhooks', { url: rx.url + '?stranger', events: ['new_event'] }],
      ['rotate the secret', 'POST', `/v1/webhooks/${w.id}/rotate-secret`, undefined],
      ['send a test', 'POST', `/v1/webhooks/${w.id}/test`, undefined],
      ['replay a delivery', 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${sent.delivery_id}`, undefined],
      ['change it', 'PATCH', `/v1/webhooks/${w.id}`, { is_active: false }],
      ['delete it', 'DELETE', `/v1/webhooks/${w.id}`, undefined],
    ] as const) {
      const res = await call(app, method, path, stranger, body);
      t.equal(res.status, 403, `the unverified key may not ${what}: 403`);
      t.equal((await j(res)).error_code, 'KEY_NOT_VERIFIED', `${what}: KEY_NOT_VERIFIED`);
    }
    t.equal(rx.requests.length, before, 'nothing was sent for the unverified key');
    const list = await j(await call(app, 'GET', '/v1/webhooks', stranger));
    t.same(list.map((x: { id: number; is_active: boolean }) => [x.id, x.is_active]), [[w.id, true]], 'it still reads them: one subscription, unchanged');

    // the secret the owner saved still signs
    const again = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/test`, owner));
    t.equal(again.delivered, true, 'the verified key sends a test again');
    const last = rx.requests[rx.requests.length - 1];
    t.ok(verifyA(w.secret, last.headers['x-service-signature'] as string, last.raw), 'signed with the secret the owner saved');
    const replayed = await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${sent.delivery_id}`, owner);
    t.equal(replayed.status, 200, 'the verified key replays');
    t.equal((await j(replayed)).delivered, true, 'delivered');
    const rotated = await call(app, 'POST', `/v1/webhooks/${w.id}/rotate-secret`, owner);
    t.equal(rotated.status, 200, 'the verified key rotates the secret');
    t.not((await j(rotated)).secret, w.secret, 'a new secret');

    // a key of an account with no verified key manages its subscriptions (the agent flow)
    const agent = (await accounts.create({ tier: 'pro', verified: false })).key;
    const own = await call(app, 'POST', '/v1/webhooks', agent, { url: rx.url + '?agent', events: ['new_event'] });
    t.equal(own.status, 201, 'an account with no verified key: its sign-up key creates');
    const ow = await j(own);
    t.equal((await call(app, 'POST', `/v1/webhooks/${ow.id}/rotate-secret`, agent)).status, 200, 'and rotates');
    t.equal((await j(await call(app, 'POST', `/v1/webhooks/${ow.id}/test`, agent))).delivered, true, 'and tests');

    const doc = await j(await app.get('/openapi.json'));
    for (const [path, method] of [
      ['/v1/webhooks', 'post'], ['/v1/webhooks/{webhook_id}', 'patch'], ['/v1/webhooks/{webhook_id}', 'delete'],
      ['/v1/webhooks/{webhook_id}/rotate-secret', 'post'], ['/v1/webhooks/{webhook_id}/test', 'post'], ['/v1/webhooks/{webhook_id}/replay', 'post'],
    ]) {
      t.match(doc.paths[path][method].responses['403']?.$ref, /KEY_NOT_VERIFIED/, `/openapi.json: ${method.toUpperCase()} ${path} lists 403 KEY_NOT_VERIFIED`);
    }
  });
}
