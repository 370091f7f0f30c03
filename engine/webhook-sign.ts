// Webhook signatures and ids (SPEC Events). Both variants sign "<unix seconds>.<raw body>" with HMAC-SHA256 keyed
// with the subscription secret; they differ in how the result travels:
//   Variant A: X-Service-Signature: t=<unix>,v1=<hex>
//   Variant B: X-Service-Signature: <hex>, X-Service-Timestamp: <unix>
// A receiver rejects a signature whose timestamp is more than 300 s from its clock (REPLAY_TOLERANCE_S).

import { createHmac, randomBytes } from 'node:crypto';

export const REPLAY_TOLERANCE_S = 300;

export function hmacHex(secret: string, unixSeconds: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
}

/** Variant A header value. */
export function signatureA(secret: string, unixSeconds: number, body: string | Uint8Array): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, unixSeconds, body)}`;
}

/** Variant A secret: whsec_ + 43 base64url characters (32 random bytes). */
export function secretA(): string {
  return 'whsec_' + randomBytes(32).toString('base64url');
}

/** Variant B signing secret: 32 random bytes as hex. */
export function secretB(): string {
  return 'wss_' + randomBytes(32).toString('hex');
}

function rid(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
}

export const newEventId = (): string => rid('evt_');
export const newDeliveryId = (): string => rid('dlv_');
export const newPublicId = (): string => rid('wh_');
