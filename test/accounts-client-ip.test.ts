// TRUSTED_PROXIES: X-Forwarded-For names the client only when the socket peer is a trusted proxy, read from the
// right so a client cannot choose its address; the fixed-window limiter behind /v1/try and sign-up.

import t from 'tap';
import { TrustedProxies, normaliseAddress } from '../http/client-ip.js';
import { WindowLimiter, clientKey } from '../http/ip-limiter.js';

t.test('client ip - addresses are spelled one way', async (t) => {
  t.equal(normaliseAddress('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1', 'uWebSockets.js expanded mapped IPv4');
  t.equal(normaliseAddress('::ffff:10.1.2.3'), '10.1.2.3', 'dotted mapped IPv4');
  t.equal(normaliseAddress('2001:DB8::1'), '2001:db8::1', 'IPv6 lower-cased');
  t.equal(normaliseAddress('192.0.2.1'), '192.0.2.1', 'IPv4 unchanged');
});

t.test('client ip - X-Forwarded-For only from trusted proxies, rightmost untrusted hop wins', async (t) => {
  const tp = new TrustedProxies('10.0.0.0/8, 127.0.0.1, ::1');
  t.equal(tp.clientIp('203.0.113.9', '198.51.100.1'), '203.0.113.9', 'an untrusted peer\'s X-Forwarded-For is ignored');
  t.equal(tp.clientIp('127.0.0.1', ''), '127.0.0.1', 'a trusted peer without the header is the client');
  t.equal(tp.clientIp('127.0.0.1', '198.51.100.1'), '198.51.100.1', 'a trusted peer names the client');
  t.equal(tp.clientIp('0000:0000:0000:0000:0000:ffff:7f00:0001', '198.51.100.1'), '198.51.100.1', 'the peer as uWebSockets.js spells it');
  t.equal(tp.clientIp('127.0.0.1', '6.6.6.6, 198.51.100.1'), '198.51.100.1', 'a forged leftmost entry is not believed');
  t.equal(tp.clientIp('127.0.0.1', '198.51.100.1, 10.2.3.4'), '198.51.100.1', 'trusted hops in the chain are skipped');
  t.equal(tp.clientIp('127.0.0.1', '10.9.9.9, 10.2.3.4'), '10.9.9.9', 'all hops trusted: the leftmost');
  t.equal(tp.clientIp('127.0.0.1', 'garbage, 198.51.100.1'), '198.51.100.1', 'garbage left of the client is ignored');
  t.equal(tp.clientIp('127.0.0.1', '198.51.100.1, garbage'), '127.0.0.1', 'garbage from the proxy: the peer');
  t.equal(tp.clientIp('127.0.0.1', '198.51.100.1:4711'), '198.51.100.1', 'a port is dropped');
  t.equal(tp.clientIp('127.0.0.1', '[2001:db8::5]:443'), '2001:db8::5', 'a bracketed IPv6 with port');
  t.equal(new TrustedProxies('').clientIp('127.0.0.1', '198.51.100.1'), '127.0.0.1', 'no TRUSTED_PROXIES: never');
  for (const bad of ['10.0.0.0/33', 'proxy.local', '1.2.3.4/8/1', '::1/129']) {
    t.throws(() => new TrustedProxies(bad), /TRUSTED_PROXIES/, `${bad} refused`);
  }
});

t.test('window limiter - a fixed number per window, Retry-After to the next window', async (t) => {
  const l = new WindowLimiter(5, 3_600_000, 3);
  const t0 = 10 * 3_600_000 + 1_000_000;
  for (let i = 0; i < 5; i++) t.equal(l.hit('a', t0), 0, `request ${i + 1} allowed`);
  t.equal(l.hit('a', t0 + 1), 2600, 'the 6th waits for the next hour');
  t.equal(l.hit('b', t0), 0, 'another address counts apart');
  t.equal(l.hit('a', 11 * 3_600_000), 0, 'the next hour starts afresh');
  l.hit('c', 11 * 3_600_000);
  l.hit('d', 11 * 3_600_000);
  t.equal(l.hit('e', 11 * 3_600_000), 0, 'past maxAddresses the map is swept, never grows without bound');
});

t.test('window limiter - an IPv6 client is counted per /64 network (regression: per address, unlimited sign-ups)', async (t) => {
  t.equal(clientKey('2001:db8:1:2::1'), '2001:db8:1:2::/64', 'compressed');
  t.equal(clientKey('2001:0db8:0001:0002:ffff:0000:0000:0009'), '2001:db8:1:2::/64', 'expanded, same network');
  t.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64', 'zeros filled');
  t.equal(clientKey('::1'), '0:0:0:0::/64', 'loopback');
  t.equal(clientKey('198.51.100.7'), '198.51.100.7', 'IPv4 as it is');
  const l = new WindowLimiter(2, 3_600_000);
  const t0 = 10 * 3_600_000;
  t.equal(l.hit('2001:db8:1:2::1', t0), 0, 'first');
  t.equal(l.hit('2001:db8:1:2::abcd', t0), 0, 'another address of the /64: second');
  t.ok(l.hit('2001:db8:1:2:1:2:3:4', t0) > 0, 'a third of the same /64 waits');
  t.equal(l.hit('2001:db8:1:3::1', t0), 0, 'another /64 counts apart');
});
