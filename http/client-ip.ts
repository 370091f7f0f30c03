// The client address of a request: the socket's peer, or, when that peer is a proxy named in TRUSTED_PROXIES,
// the address its X-Forwarded-For names. The list is read from the right (the hop nearest to us) and trusted
// proxies are skipped, so a client cannot choose its own address by sending a forged X-Forwarded-For: only
// what a trusted proxy appended counts.

import { BlockList, isIP } from 'node:net';

export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  /** `spec`: comma-separated addresses or CIDR blocks, IPv4 or IPv6 (e.g. `10.0.0.0/8, 127.0.0.1, ::1`). */
  constructor(spec: string) {
    const items = spec.split(',').map((s) => s.trim()).filter((s) => s !== '');
    for (const item of items) {
      const [addr, bits, extra] = item.split('/');
      const family = isIP(addr ?? '');
      if (family === 0 || extra !== undefined) throw new Error(`TRUSTED_PROXIES: ${JSON.stringify(item)} is not an address or CIDR block`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) {
        this.list.addAddress(addr!, type);
        continue;
      }
      const n = Number(bits);
      if (!/^\d{1,3}$/.test(bits) || n > (family === 4 ? 32 : 128)) throw new Error(`TRUSTED_PROXIES: ${JSON.stringify(item)} has a bad prefix length`);
      this.list.addSubnet(addr!, n, type);
    }
    this.size = items.length;
  }

  has(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    return this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** The client address for a request whose socket peer is `remote` and whose X-Forwarded-For is `forwarded`. */
  clientIp(remote: string, forwarded: string): string {
    const peer = normaliseAddress(remote);
    if (this.size === 0 || forwarded === '' || !this.has(peer)) return peer;
    const hops = forwarded.split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normaliseAddress(stripPort(hops[i]!.trim()));
      if (isIP(hop) === 0) break; // garbage: believe nothing further left
      client = hop;
      if (!this.has(hop)) break;
    }
    return client;
  }
}

/** `1.2.3.4:5678` and `[::1]:80` to their address; anything else unchanged. */
function stripPort(s: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (v6 !== null) return v6[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(s);
  return v4 !== null ? v4[1]! : s;
}

/**
 * One spelling per address: IPv4-mapped IPv6 (`::ffff:1.2.3.4`, or uWebSockets.js's expanded
 * `0000:0000:0000:0000:0000:ffff:0102:0304`) becomes `1.2.3.4`; other IPv6 is lower-cased.
 */
export function normaliseAddress(a: string): string {
  const s = a.toLowerCase();
  if (!s.includes(':')) return s;
  const dotted = /^(?:(?:0{1,4}:){5}|::)ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (dotted !== null) return dotted[1]!;
  const hex = /^(?:0{1,4}:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(s);
  if (hex !== null) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return s;
}
