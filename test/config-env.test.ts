import t from 'tap';
import { configFromEnv } from '../http/app.js';
import { envInt, httpUrl } from '../http/env.js';

t.test('config - integer variables: default when unset or empty, bounds checked, the variable named', async (t) => {
  t.equal(envInt({}, 'X', 7, 1, 10), 7, 'unset');
  t.equal(envInt({ X: '' }, 'X', 7, 1, 10), 7, 'empty');
  t.equal(envInt({ X: '10' }, 'X', 7, 1, 10), 10, 'upper bound included');
  t.throws(() => envInt({ X: '11' }, 'X', 7, 1, 10), /X must be an integer from 1 to 10, got "11"/, 'above');
  t.throws(() => envInt({ X: '2.5' }, 'X', 7, 1, 10), /X must be an integer/, 'not an integer');
  t.throws(() => envInt({ X: 'abc' }, 'X', 7, 1, 10), /X must be an integer/, 'not a number');
});

t.test('config - URL variables: absolute http(s) only, the variable named', async (t) => {
  t.equal(httpUrl('U', 'https://example.test/a').pathname, '/a', 'https');
  t.throws(() => httpUrl('U', 'not a url'), /U must be an absolute http\(s\) URL, got "not a url"/, 'relative or garbage');
  t.throws(() => httpUrl('U', 'ftp://example.test/'), /U must be http\(s\), got ftp:/, 'other scheme');
  t.throws(() => configFromEnv({ DATABASE_URL: 'notaurl' }), /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL .*got a value that is not a URL/, 'DATABASE_URL not a URL: named');
  t.throws(() => configFromEnv({ DATABASE_URL: 'http://u:secret@127.0.0.1:5432/test' }), /DATABASE_URL must be .*got http:\/\/127\.0\.0\.1:5432\/test$/, 'DATABASE_URL of another scheme: refused, password not shown');
  t.throws(() => configFromEnv({ DATABASE_URL: 'mysql://x@127.0.0.1/y' }), /DATABASE_URL must be/, 'mysql:// refused');
  t.equal(configFromEnv({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/test' }).databaseUrl, 'postgresql://postgres@127.0.0.1:5432/test', 'postgresql:// taken');
  t.equal(configFromEnv({ DATABASE_URL: '' }).databaseUrl, undefined, 'empty DATABASE_URL: embedded');
  t.same(configFromEnv({ FEED: '' }).feeds, ['sim'], 'empty FEED is unset: the simulator');
  t.throws(() => configFromEnv({ PUBLIC_URL: '/relative' }), /PUBLIC_URL must be an absolute http\(s\) URL/, 'PUBLIC_URL');
  t.equal(configFromEnv({ PUBLIC_URL: 'https://odds.example.test/' }).publicUrl, 'https://odds.example.test', 'PUBLIC_URL trailing slash dropped');
  t.throws(() => configFromEnv({ CHECKOUT_URL_TEMPLATE: 'pay?tier={tier}' }), /CHECKOUT_URL_TEMPLATE must be an absolute http\(s\) URL \(with \{tier\} and \{email\} placeholders\), got "pay\?tier=\{tier\}"/, 'checkout template shows the raw value');
  t.throws(() => configFromEnv({ FEED: 'theoddsapi', THE_ODDS_API_KEY: 'k', THE_ODDS_API_BASE: 'file:///etc' }), /THE_ODDS_API_BASE must be http\(s\)/, 'connector base');
  // both started a node without a word: CLUSTER=yes alone (its store diverging), an http:// SMTP_URL never mailing
  t.throws(() => configFromEnv({ CLUSTER: 'yes', NATS_URL: 'nats://127.0.0.1:4222' }), /CLUSTER must be 1 \(or true\) to join a cluster, 0 or unset to run alone, got "yes"/, 'CLUSTER=yes refused');
  t.equal(configFromEnv({ CLUSTER: '0', NATS_URL: 'nats://127.0.0.1:4222' }).nats?.cluster, false, 'CLUSTER=0: alone');
  t.throws(() => configFromEnv({ SMTP_URL: 'http://u:pw@mail.example.test' }), /SMTP_URL must be smtp:\/\/host\[:port\] or smtps:\/\/host\[:port\], got "http:\/\/mail\.example\.test"/, 'SMTP_URL of another scheme, password not shown');
  t.equal(configFromEnv({ SMTP_URL: 'smtps://mail.example.test:465' }).webhooks?.smtpUrl, 'smtps://mail.example.test:465', 'smtps:// taken');
  t.equal(configFromEnv({}).streams?.maxStreams, undefined, 'WS_MAX_STREAMS unset: each tier\'s open streams');
  t.equal(configFromEnv({ WS_MAX_STREAMS: '5000' }).streams?.maxStreams, 5000, 'WS_MAX_STREAMS taken');
  t.throws(() => configFromEnv({ WS_MAX_STREAMS: '-1' }), /WS_MAX_STREAMS must be an integer from 0 to 1000000, got "-1"/, 'WS_MAX_STREAMS below 0 refused');
  t.equal(configFromEnv({}).databaseTimeoutMs, 10_000, 'DATABASE_TIMEOUT_MS: 10 s by default');
  t.equal(configFromEnv({ DATABASE_TIMEOUT_MS: '2500' }).databaseTimeoutMs, 2500, 'DATABASE_TIMEOUT_MS taken');
  t.throws(() => configFromEnv({ DATABASE_TIMEOUT_MS: '0' }), /DATABASE_TIMEOUT_MS must be an integer from 100 to 600000, got "0"/, 'DATABASE_TIMEOUT_MS 0 refused (no bound is not an option)');
});

t.test('env - LOG_LEVEL not a level: one line naming it, exit 1 (pino threw a stack trace)', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [new URL('../http/main.js', import.meta.url).pathname], { env: { ...process.env, LOG_LEVEL: 'nope' }, encoding: 'utf8', timeout: 20_000 });
  t.equal(r.status, 1, 'exit 1');
  t.equal(r.stderr.trim(), 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "nope"', 'the one line');
});
