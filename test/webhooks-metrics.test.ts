// Webhook counters in GET /metrics (issue 6): outbox rows per event type, attempts by outcome, total failures,
// deliveries skipped, subscriptions auto-disabled and the outbox backlog gauge move with real deliveries to a
// real receiver (one attempt per delivery here: no retry delays).

import t from 'tap';
import { appDatabases, startTestApp, type TestApp } from './helpers/app.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** the value of one sample of the Prometheus text, 0 when absent */
async function metric(app: TestApp, name: string, labels = ''): Promise<number> {
  const text = await (await app.get('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(labels === '' ? `${name} ` : `${name}{${labels}} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function until(what: string, pred: () => Promise<boolean>, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`${what}: not met in time`);
    await sleep(30);
  }
}

let seq = 0;
function newEvents(sport: string, n: number) {
  const events = [];
  const prices = [];
  for (let i = 0; i < n; i++) {
    const id = `wm_${sport}_${++seq}`;
    events.push({ id, sport_key: sport, commence_time: Date.now() + 3_600_000, home_team: `Home ${seq}`, away_team: `Away ${seq}` });
    prices.push({ book: 'draftkings', event_id: id, market: 'h2h', outcome: `Home ${seq}`, price: 1.9 });
  }
  return { events, prices };
}

for (const database of appDatabases()) {
  t.test(`webhook counters in /metrics move (${database})`, async (t) => {
    const app = await startTestApp(t, { database, shards: 1, webhooks: { allowPrivate: true, retryDelaysMs: [], pollMs: 25, timeoutMs: 20_000 } });
    const rx = await startReceiver(t);
    rx.respond = (r) => (r.path.endsWith('?bad') ? 500 : r.path.endsWith('?hang') ? 'hang' : 200);
    const key = await app.key('business');
    const create = async (body: unknown) => {
      const res = await app.post('/v1/webhooks', body, { 'x-api-key': key });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    const E = 'linewire_webhook_events_enqueued_total';
    const A = 'linewire_webhook_attempts_total';
    for (const [name, labels] of [[A, 'outcome="delivered"'], [A, 'outcome="http_error"'], [A, 'outcome="no_response"'],
      ['linewire_webhook_deliveries_failed_total', ''], ['linewire_webhook_subscriptions_disabled_total', ''], ['linewire_webhook_outbox_backlog', '']]) {
      t.equal(await metric(app, name, labels), 0, `${name}${labels === '' ? '' : `{${labels}}`} starts at 0`);
    }

    await create({ url: rx.url + '?ok', events: ['new_event'], sport_filter: ['basketball_nba'] });
    await app.ingest(newEvents('basketball_nba', 2));
    await until('two delivered', async () => (await metric(app, A, 'outcome="delivered"')) === 2);
    t.equal(await metric(app, E, 'event_type="new_event"'), 2, 'two new_event rows enqueued');

    await create({ destination_url: rx.url + '?ok', events: ['parser.degraded'] });
    const bad = newEvents('americanfootball_nfl', 1);
    for (let i = 0; i < 30; i++) bad.prices.push({ book: 'no_such_book', event_id: bad.events[0].id, market: 'h2h', outcome: 'Home', price: 2 });
    await app.ingest(bad);
    t.equal(await metric(app, E, 'event_type="parser.degraded"'), 1, 'parser.degraded counted under its own type, committed before the ingest answered');

    const failing = await create({ url: rx.url + '?bad', events: ['new_event'], sport_filter: ['baseball_mlb'] });
    await app.ingest(newEvents('baseball_mlb', 5));
    await until('five failed', async () => (await metric(app, 'linewire_webhook_deliveries_failed_total')) === 5);
    t.equal(await metric(app, A, 'outcome="http_error"'), 5, 'five HTTP 500 attempts');
    await until('disabled', async () => (await metric(app, 'linewire_webhook_subscriptions_disabled_total')) === 1);
    t.pass(`subscription ${failing.id} auto-disabled and counted`);

    await create({ url: 'http://127.0.0.1:1/closed', events: ['new_event'], sport_filter: ['icehockey_nhl'] });
    await app.ingest(newEvents('icehockey_nhl', 1));
    await until('no answer', async () => (await metric(app, A, 'outcome="no_response"')) === 1);
    t.equal(await metric(app, 'linewire_webhook_deliveries_failed_total'), 6, 'a refused connection fails the delivery too');

    await create({ url: rx.url + '?hang', events: ['new_event'], sport_filter: ['soccer_epl'] });
    await app.ingest(newEvents('soccer_epl', 2));
    await rx.waitFor((r) => r.path.endsWith('?hang'), 5000, 2);
    t.equal(await metric(app, 'linewire_webhook_outbox_backlog'), 2, 'two deliveries awaiting their answer are the backlog');
    t.equal(await metric(app, E, 'event_type="new_event"'), 10, 'ten new_event rows in all');
  });
}
