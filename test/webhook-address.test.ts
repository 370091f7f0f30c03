import t from 'tap';
import { checkDestination, isForbiddenAddress } from '../engine/webhook-address.js';

t.test('webhook address - IPv4 inside IPv6 is judged as the IPv4 address, in every spelling', async (t) => {
  // regression: the URL parser writes [::127.0.0.1] as [::7f00:1], which the dotted-only pattern missed, and the
  // translated form ::ffff:0:a.b.c.d was not known at all
  const forbidden = [
    '::127.0.0.1', '::7f00:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:a00:1',
    '64:ff9b::a00:1', '64:ff9b::10.0.0.1', '2002:7f00:1::1', '0:0:0:0:0:0:7f00:1', '::a9fe:a9fe',
  ];
  for (const a of forbidden) t.ok(isForbiddenAddress(a), `${a}: forbidden`);
  for (const a of ['::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) t.notOk(isForbiddenAddress(a), `${a}: a public IPv4 inside: allowed`);
});

t.test('webhook address - reserved IPv6 ranges', async (t) => {
  for (const a of ['64:ff9b:1::a00:1', '5f00::1', '3fff::1', '2001:10::1', '2001:20::1', '::1', '::', 'fe80::1', 'fd00::1', '2001:db8::1', 'ff02::1']) {
    t.ok(isForbiddenAddress(a), `${a}: forbidden`);
  }
  for (const a of ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) t.notOk(isForbiddenAddress(a), `${a}: public, allowed`);
  t.ok(isForbiddenAddress('1:2:3'), 'not an address: forbidden');
});

t.test('webhook address - a URL with such a literal is refused at creation', async (t) => {
  for (const url of ['https://[::127.0.0.1]/h', 'https://[::ffff:0:7f00:1]/h', 'https://[64:ff9b:1::a00:1]/h', 'https://[3fff::1]/h']) {
    t.type(checkDestination(url, false), 'string', `${url}: refused`);
  }
  t.type(checkDestination('https://[2606:4700:4700::1111]/h', false), 'object', 'a public IPv6 literal passes');
  t.type(checkDestination('http://[::127.0.0.1]/h', true), 'object', 'WEBHOOK_ALLOW_PRIVATE lifts the rules');
});
