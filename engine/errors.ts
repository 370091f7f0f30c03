// Every client-facing error code, in one catalogue: a stable code string, its HTTP status and a default
// message (fastify lib/errors.js style). Item-level ingest rejections use the same codes with status 422.

export interface ErrorDef {
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

function def(code: string, status: number, message: string): ErrorDef {
  return Object.freeze({ code, status, message });
}

export const ERRORS = {
  MISSING_KEY: def('MISSING_KEY', 401, 'An API key is required: send X-API-Key, Authorization: Bearer, or apiKey (api_key)'),
  INVALID_KEY: def('INVALID_KEY', 401, 'The API key does not validate'),
  OUT_OF_USAGE_CREDITS: def('OUT_OF_USAGE_CREDITS', 401, 'Usage quota has been reached for this period'),
  ADMIN_KEY_REQUIRED: def('ADMIN_KEY_REQUIRED', 401, 'This endpoint requires the admin key'),
  TIER_REQUIRED: def('TIER_REQUIRED', 403, 'Your tier does not include this endpoint'),
  UNKNOWN_SPORT: def('UNKNOWN_SPORT', 404, 'Unknown sport key'),
  EVENT_NOT_FOUND: def('EVENT_NOT_FOUND', 404, 'Event not found'),
  NOT_FOUND: def('NOT_FOUND', 404, 'No such endpoint'),
  METHOD_NOT_ALLOWED: def('METHOD_NOT_ALLOWED', 405, 'Method not allowed on this path'),
  UPGRADE_REQUIRED: def('UPGRADE_REQUIRED', 426, 'This path is a WebSocket stream: connect with a WebSocket client (Upgrade: websocket)'),
  MALFORMED_BODY: def('MALFORMED_BODY', 400, 'The request body could not be parsed'),
  UNSUPPORTED_MEDIA_TYPE: def('UNSUPPORTED_MEDIA_TYPE', 415, 'Send application/json or application/msgpack'),
  UNSUPPORTED_EVENT_TYPE: def('UNSUPPORTED_EVENT_TYPE', 400, 'Unsupported webhook event type'),
  WEBHOOK_NOT_FOUND: def('WEBHOOK_NOT_FOUND', 404, 'No such webhook'),
  DELIVERY_NOT_FOUND: def('DELIVERY_NOT_FOUND', 404, 'No such webhook delivery'),
  WEBHOOK_LIMIT: def('WEBHOOK_LIMIT', 409, 'Your tier\'s webhook limit is reached'),
  DELIVERY_IN_PROGRESS: def('DELIVERY_IN_PROGRESS', 409, 'The delivery is still on its retry schedule'),
  IDEMPOTENCY_KEY_REUSED: def('IDEMPOTENCY_KEY_REUSED', 422, 'Idempotency-Key was used with a different request body'),
  ACCOUNT_EXISTS: def('ACCOUNT_EXISTS', 409, 'An account with this e-mail exists; its keys are never shown again: request a login link with POST /v1/agent/magic-link'),
  ACCOUNT_NOT_FOUND: def('ACCOUNT_NOT_FOUND', 404, 'No such account'),
  KEY_NOT_FOUND: def('KEY_NOT_FOUND', 404, 'No such API key'),
  KEY_LIMIT: def('KEY_LIMIT', 409, 'The account holds the most active keys allowed; revoke one first'),
  KEY_NOT_VERIFIED: def('KEY_NOT_VERIFIED', 403, 'This key was made by a sign-up, and the account\'s e-mail holder has logged in since: manage keys and webhook subscriptions with a key from the login link (POST /v1/agent/magic-link)'),
  SIMULATOR_NOT_RUNNING: def('SIMULATOR_NOT_RUNNING', 409, 'The built-in simulator does not run on this node (FEED has no sim): there is nothing to stall'),
  INVALID_LOGIN_TOKEN: def('INVALID_LOGIN_TOKEN', 400, 'The link is unknown, used or expired; request a new one'),
  BODY_TOO_LARGE: def('BODY_TOO_LARGE', 413, 'The request body is too large'),
  VALIDATION_ERROR: def('VALIDATION_ERROR', 422, 'Parameter validation failed'),
  EXCEEDED_FREQ_LIMIT: def('EXCEEDED_FREQ_LIMIT', 429, 'Request rate limit exceeded'),
  CONCURRENCY_LIMIT: def('CONCURRENCY_LIMIT', 429, 'Too many requests of this kind in flight for this account'),
  INTERNAL_ERROR: def('INTERNAL_ERROR', 500, 'Internal error'),
  SERVICE_UNAVAILABLE: def('SERVICE_UNAVAILABLE', 503, 'Service unavailable'),
  // Item-level ingest rejections (POST /v1/ingest `rejected[]`).
  INVALID_EVENT: def('INVALID_EVENT', 422, 'Event is invalid'),
  INVALID_PRICE: def('INVALID_PRICE', 422, 'Price must be decimal odds above 1'),
  UNKNOWN_BOOK: def('UNKNOWN_BOOK', 422, 'Unknown bookmaker key'),
  INACTIVE_BOOK: def('INACTIVE_BOOK', 422, 'Bookmaker is not active'),
  UNKNOWN_MARKET: def('UNKNOWN_MARKET', 422, 'Unknown market key'),
  MARKET_NOT_OFFERED: def('MARKET_NOT_OFFERED', 422, 'Market does not apply to this sport'),
  INVALID_OUTCOME: def('INVALID_OUTCOME', 422, 'Outcome does not belong to this market'),
  INVALID_POINT: def('INVALID_POINT', 422, 'Point is missing, not allowed, or out of range'),
  INVALID_PLAYER: def('INVALID_PLAYER', 422, 'Player is missing or not allowed'),
  INVALID_TIMESTAMP: def('INVALID_TIMESTAMP', 422, 'ts must be epoch milliseconds, not in the future'),
  INVALID_ITEM: def('INVALID_ITEM', 422, 'Item is not an object'),
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** A client-facing error with a catalogue code; `detail` carries 422 validation items. */
export class ApiError extends Error {
  readonly status: number;
  /** seconds the caller should wait (Retry-After: always on a 429, on another status when above 0) */
  readonly retryAfter: number;
  constructor(readonly code: ErrorCode, message?: string, readonly detail?: ValidationItem[],
    options?: { cause?: unknown; retryAfter?: number }) {
    super(message ?? ERRORS[code].message, options);
    this.status = ERRORS[code].status;
    this.retryAfter = options?.retryAfter ?? 0;
  }
}

export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  input: unknown;
}
