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
] as const) blocked.addSubnet(net, bits, 'ipv6');

/** Host names that reach metadata services or this machine whatever they resolve to. */
const BLOCKED_NAMES = /^(localhost|.*\.localhost|metadata|metadata\.google\.internal|.*\.internal|.*\.local)$/i;

/** IPv4 embedded in an IPv6 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16), else null. */
function embeddedV4(addr: string): string | null {
  const a = addr.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted !== null) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  const six = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4}):/.exec(a);
  const m = hex ?? six;
  if (m === null) return null;
  const hi = parseInt(m[1], 16);
  const lo = parseInt(m[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
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
