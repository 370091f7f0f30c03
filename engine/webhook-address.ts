// Where a webhook may be sent (SSRF guard). A destination is an https URL whose host is never a loopback,
// private, link-local, carrier-grade NAT, multicast, reserved or cloud-metadata address. The check runs on the
// URL at creation and on every address the name resolves to at each delivery (the sender then connects to the
// address it checked, so a DNS answer that changes between check and connect cannot redirect it).
// `allowPrivate` (WEBHOOK_ALLOW_PRIVATE=1, local testing) lifts the address rules and admits http as well.

import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32],
  ['100::', 64], ['2001::', 32],
  // local-use NAT64 (RFC 8215), SRv6 SIDs (RFC 9602), documentation (RFC 9637), ORCHID and ORCHIDv2 (RFC 7343)
  ['64:ff9b:1::', 48], ['5f00::', 16], ['3fff::', 20], ['2001:10::', 28], ['2001:20::', 28],
] as const) blocked.addSubnet(net, bits, 'ipv6');

/** Host names that reach metadata services or this machine whatever they resolve to. */
const BLOCKED_NAMES = /^(localhost|.*\.localhost|metadata|metadata\.google\.internal|.*\.internal|.*\.local)$/i;

/** The eight 16-bit groups of an IPv6 literal (a trailing dotted IPv4 counts as two), or null. */
function groups(addr: string): number[] | null {
  let a = addr.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4 !== null) {
    const [b0, b1, b2, b3] = v4.slice(1).map(Number);
    a = `${a.slice(0, v4.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array.from({ length: fill }, () => '0'), ...tail];
  if (all.length !== 8) return null;
  const out = all.map((h) => parseInt(h, 16));
  return out.every((n) => n >= 0 && n <= 0xffff) ? out : null;
}

/** IPv4 embedded in an IPv6 address, in whatever spelling the URL parser left it (it writes [::127.0.0.1] as
 *  [::7f00:1]): IPv4-compatible ::/96, mapped ::ffff:0:0/96, translated ::ffff:0:0:0/96 (RFC 2765), NAT64
 *  64:ff9b::/96 and 6to4 2002::/16; else null. */
function embeddedV4(addr: string): string | null {
  const g = groups(addr);
  if (g === null) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((n) => n === 0);
  if (zero(0, 6) || (zero(0, 5) && g[5] === 0xffff) || (zero(0, 4) && g[4] === 0xffff && g[5] === 0)
    || (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6))) return v4(g[6], g[7]);
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  return null;
}

/** True when an IP literal is one a webhook must never reach. */
export function isForbiddenAddress(addr: string): boolean {
  const fam = isIP(addr);
  if (fam === 4) return blocked.check(addr, 'ipv4');
  if (fam === 6) {
    const v4 = embeddedV4(addr);
    if (v4 !== null) return blocked.check(v4, 'ipv4');
    return blocked.check(addr, 'ipv6');
  }
  return true;
}

export interface Destination {
  url: URL;
  /** host without IPv6 brackets */
  host: string;
  /** the host is an IP literal */
  literal: boolean;
}

/** Validates a destination URL; a string says why it is refused. */
export function checkDestination(raw: unknown, allowPrivate: boolean): Destination | string {
  if (typeof raw !== 'string' || raw.length === 0) return 'must be an https URL';
  if (raw.length > 2048) return 'must be at most 2048 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'must use https';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return 'has no host';
  const literal = isIP(host) !== 0;
  if (!allowPrivate) {
    if (literal && isForbiddenAddress(host)) return 'must not point at a loopback, private, link-local or metadata address';
    if (!literal && (BLOCKED_NAMES.test(host) || !host.includes('.'))) return 'must name a public host';
  }
  return { url, host, literal };
}
