// The request lifecycle on uWebSockets.js: one table of routes drives registration (with the /v4 alias),
// authentication, the free-tier rate cap, parameter validation, credit reservation (charged only on success),
// error bodies, and the headers every response carries. The same table feeds /openapi.json.

import { randomBytes } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { ApiError, type ErrorCode } from '../engine/errors.js';
import type { Accounts, KeyState } from './accounts.js';
import { normaliseAddress, type TrustedProxies } from './client-ip.js';
import { endpointLabel, meteredRoute } from './credit-costs.js';
import { GZIP_MIN_BYTES, Gzip, acceptsGzip, gzipChunks } from './compress.js';
import { errorBody } from './serialize.js';
import { DatabaseTimeout, type DatabaseWatch } from '../sql/watch.js';
import { ignoredParams, parseParams, type ParamSpec, type Params } from './params.js';

/** the presented key of a request whose query names two different apiKey values (no real key contains a NUL) */
export const AMBIGUOUS_KEY = '\u0000ambiguous';

/** The apiKey of a query: '' when none, AMBIGUOUS_KEY when it names two different ones (neither is taken). `api_key`
 *  is the same parameter: The Odds API documents apiKey, but its own sample code sends api_key. REST and the
 *  WebSocket upgrade read it alike. */
export function queryKey(query: URLSearchParams): string {
  const keys = [...query.getAll('apiKey'), ...query.getAll('api_key')];
  return keys.length === 0 ? '' : keys.every((k) => k === keys[0]) ? keys[0] : AMBIGUOUS_KEY;
}

/** the WebSocket streams' paths (http/ws/server.ts) */
const STREAM_PATH = /^((\/v4)?\/ws\/(odds|live)|\/v[14]\/ws\/odds-fast)\/[^/]+\/?$/;

const credits = (n: number): string => (n === 1 ? '1 credit' : `${n} credits`);

export interface RequestCtx {
  method: string;
  path: string;
  query: URLSearchParams;
  /** path parameters in pattern order */
  args: string[];
  ifNoneMatch: string;
  contentType: string;
  /** Accept-Encoding admits gzip (http/compress.ts) */
  acceptGzip: boolean;
  ip: string;
  body: Buffer | null;
  requestId: string;
  now: number;
  /** Idempotency-Key request header, '' when none */
  idempotencyKey: string;
  /** the API key as presented (X-API-Key, then Authorization: Bearer, then apiKey), '' when none */
  presentedKey: string;
  /** the key came from the query string (apiKey, api_key), not a header */
  keyInQuery: boolean;
  key: KeyState | null;
  params: Params;
  /** query parameters the route does not know, comma-separated ('' when none): X-Ignored-Params */
  ignored: string;
}

export interface Reply {
  status: number;
  body: string | Uint8Array;
  contentType?: string;
  headers?: readonly (readonly [string, string])[];
}

/** A 200 whose body is produced chunk by chunk (pages read from the database) and written as the socket takes it:
 *  uWebSockets.js `write` returns false once it had to buffer a chunk, and the next chunk is asked for only after
 *  `onWritable` reports the socket drained (uWebSockets.js examples/Backpressure.js), so the process holds about
 *  one chunk (and what the producer reads ahead) per slow client. Its credits are reserved when the reply is known (`cost`, before the first byte)
 *  and settled from what was delivered (`settle`) once the body ended or the client left. */
export interface StreamReply {
  status: 200;
  contentType: string;
  headers: readonly (readonly [string, string])[];
  chunks: AsyncIterable<string | Uint8Array>;
  cost: number;
  /** The period's last credits pay for less than `cost` (Accounts.reserveUpTo takes what is left): a reply priced by
   *  what it delivers delivers only what `credits` pay for, and says so in its headers (read after this call). Called
   *  before the first byte (for a HEAD with what its GET would reserve); absent, the whole body goes for them. */
  shorten?(credits: number): void;
  /** called exactly once when the reply is over (delivered, abandoned, refused, or a HEAD): the credits owed, at
   *  most `cost`; a reply holding a resource (a cache file) releases it here */
  settle(completed: boolean): number;
}

/** `optional`: free and open, but a key given is checked (401 when it is not one) and answered with its balance,
 *  as The Odds API's free calls are (a v4 client checks its key and quota on /sports) */
export type Auth = 'none' | 'optional' | 'key' | 'admin';

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path under /v1 or at the root, e.g. /v1/sports/{sport_key}/odds */
  path: string;
  auth: Auth;
  summary: string;
  tag: string;
  params?: readonly ParamSpec[];
  /** credits this call costs once its parameters are valid; absent means free */
  cost?(params: Params, ctx: RequestCtx): number;
  /** reads the caller's own meter (/v1/usage, /v1/meta/api-key-check): not counted as a call, so that reading the
   *  meter does not move it; every other keyed call is counted per endpoint and moves last_request_at, free or not */
  introspects?: boolean;
  /** answers with a StreamReply that carries its own cost (charged as delivered), instead of `cost` */
  streamed?: boolean;
  /** read a request body up to this many bytes */
  maxBody?: number;
  /** JSON schema of the 2xx body, for /openapi.json */
  response?: object;
  /** JSON schema of the request body, for /openapi.json */
  requestBody?: object;
  /** a status the route also answers with its success body (/health: 503 while degraded), for /openapi.json */
  degradedStatus?: number;
  /** status of success, for /openapi.json (default 200) */
  okStatus?: number;
  /** media type of the success body, for /openapi.json (default application/json) */
  contentType?: string;
  /** media types the request body is accepted in, for /openapi.json (default application/json) */
  requestTypes?: readonly string[];
  /** the least tier the route serves (below it: 403 TIER_REQUIRED), for /openapi.json */
  tier?: string;
  /** error codes the handler throws beyond those the declaration implies (auth, tier, {sport_key}, params, body),
   *  for /openapi.json */
  errors?: readonly ErrorCode[];
  /** how long the handler may wait on something other than the database (a webhook test's attempt), added to the
   *  database bound (RouterOptions.watch) */
  extraWaitMs?: number;
  /** request headers the route reads beyond the key's (for /openapi.json) */
  requestHeaders?: readonly { name: string; description: string }[];
  /** headers of the success response beyond those of every response (names in http/openapi.ts RESPONSE_HEADERS) */
  responseHeaders?: readonly string[];
  handle(ctx: RequestCtx): Reply | StreamReply | Promise<Reply | StreamReply>;
}

interface ReqState {
  aborted: boolean;
  /** resolves a streamed reply's wait for the socket to drain (also on abort) */
  wake: (() => void) | null;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 202: '202 Accepted', 204: '204 No Content', 304: '304 Not Modified',
  400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found',
  405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large', 415: '415 Unsupported Media Type', 426: '426 Upgrade Required',
  422: '422 Unprocessable Entity', 429: '429 Too Many Requests', 500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

const ID_PREFIX = randomBytes(8).toString('hex');
let idCounter = 0;
/** 32 hex characters: a random per-process prefix and a counter. */
export function nextRequestId(): string {
  idCounter++;
  return ID_PREFIX + idCounter.toString(16).padStart(16, '0');
}

const decoder = new TextDecoder();

export interface RouterOptions {
  accounts: Accounts;
  /** headers added to every response (e.g. the feed label) */
  headers: readonly (readonly [string, string])[];
  now(): number;
  onResponse?(route: string, status: number, ms: number): void;
  onError?(error: unknown, ctx: RequestCtx): void;
  /** TRUSTED_PROXIES: peers whose X-Forwarded-For names the client (ctx.ip) */
  trustedProxies?: TrustedProxies;
  /** bounds what a handler awaits (the database, for every handler that awaits: DATABASE_TIMEOUT_MS): past it the
   *  request is answered 503 and what the handler gives later is dropped */
  watch?: DatabaseWatch;
}

/** A path parameter percent-decoded; a malformed escape (e.g. %ZZ) keeps the raw text, since a throw inside a
 *  uWS handler aborts the process. */
export function decodePathPart(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function uwsPattern(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}

function patternRegex(path: string): RegExp {
  return new RegExp('^' + path.replace(/\{[a-z_]+\}/g, '[^/]+') + '$');
}

export class Router {
  readonly routes: Route[] = [];
  /** each route's usage label, built once (GET /v1/usage?by_endpoint=true) */
  private readonly usageLabels = new Map<Route, string>();
  /** requests accepted and not yet answered or abandoned, by their response object (Router.drain) */
  private readonly inFlight = new Set<HttpResponse>();
  private readonly gzip = new Gzip();
  private draining = false;
  private idle: (() => void) | null = null;

  constructor(private readonly opts: RouterOptions) {}

  /** Adds routes, each bound to the credit-cost table (http/credit-costs.ts), the one source of prices. */
  add(...routes: Route[]): void {
    for (const r of routes) {
      const m = meteredRoute(r);
      this.routes.push(m);
      this.usageLabels.set(m, endpointLabel(m.method, m.path));
    }
  }

  mount(app: TemplatedApp): void {
    for (const route of this.routes) {
      const handler = (res: HttpResponse, req: HttpRequest) => this.serve(route, res, req);
      // GET routes answer HEAD too (RFC 9110 section 9.3.2): same status and headers, no body
      const methods = route.method === 'GET' ? (['get', 'head'] as const) : route.method === 'POST' ? (['post'] as const)
        : route.method === 'PATCH' ? (['patch'] as const) : (['del'] as const);
      // each path also with a trailing slash: The Odds API's own examples write /v4/sports/?apiKey=..., and clients
      // copied from them got 404
      const paths = route.path.startsWith('/v1/') ? [route.path, '/v4' + route.path.slice(3)] : [route.path];
      for (const method of methods) {
        for (const path of paths) {
          app[method](uwsPattern(path), handler);
          if (path !== '/') app[method](uwsPattern(path) + '/', handler);
        }
      }
    }
    const known = this.routes.map((r) => ({ re: patternRegex(r.path), method: r.method }));
    app.any('/*', (res, req) => {
      const url = req.getUrl();
      const bare = url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
      const path = bare.startsWith('/v4/') ? '/v1' + bare.slice(3) : bare;
      const method = req.getMethod().toUpperCase();
      const allow: string[] = [...new Set(known.filter((k) => k.re.test(path)).map((k) => k.method))];
      // every GET route answers HEAD as well (mount above)
      if (allow.includes('GET')) allow.push('HEAD');
      // a stream's path asked without an upgrade (a browser, curl): it exists, as a WebSocket (RFC 9110 section 15.5.22)
      const stream = allow.length === 0 && STREAM_PATH.test(url);
      const code = stream ? 'UPGRADE_REQUIRED' : allow.length > 0 && !allow.includes(method) ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND';
      const ctx = this.capture(res, req, []);
      // RFC 9110 section 15.5.6: a 405 names the methods the path does serve
      const extra: [string, string][] = code === 'METHOD_NOT_ALLOWED' ? [['Allow', allow.join(', ')]] : stream ? [['Upgrade', 'websocket']] : [];
      this.fail(res, ctx, new ApiError(code, code === 'NOT_FOUND' ? `No endpoint ${method} ${url}` : undefined), performance.now(), 'unmatched', false, extra);
    });
  }

  private capture(res: HttpResponse, req: HttpRequest, names: string[]): RequestCtx {
    const args: string[] = [];
    for (let i = 0; i < names.length; i++) args.push(decodePathPart(req.getParameter(i) ?? ''));
    const apiKey = req.getHeader('x-api-key');
    const auth = req.getHeader('authorization');
    const query = new URLSearchParams(req.getQuery() ?? '');
    let key = apiKey;
    if (key === '' && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') key = auth.slice(7).trim();
    // two different keys in one request: neither is charged, the request is refused (authenticate)
    const keyInQuery = key === '';
    if (keyInQuery) key = queryKey(query);
    return {
      method: req.getMethod().toUpperCase(),
      path: req.getUrl(),
      query,
      args,
      ifNoneMatch: req.getHeader('if-none-match'),
      contentType: req.getHeader('content-type'),
      acceptGzip: acceptsGzip(req.getHeader('accept-encoding')),
      ip: clientIp(res, req, this.opts.trustedProxies),
      body: null,
      requestId: nextRequestId(),
      now: this.opts.now(),
      presentedKey: key,
      keyInQuery: keyInQuery && key !== '',
      idempotencyKey: req.getHeader('idempotency-key'),
      key: null,
      params: {},
      ignored: '',
    };
  }

  /** Stops taking requests and waits (at most `timeoutMs`) until every request taken has been answered: a request
   *  on a kept-alive connection after this is answered 503 with the connection closed, so none is acknowledged by a
   *  process that is closing the services behind it (an ingest's 202 promises its webhook events are in the
   *  outbox). */
  drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.idle = done;
    });
  }

  private settle(res: HttpResponse): void {
    if (this.inFlight.delete(res) && this.inFlight.size === 0) this.idle?.();
  }

  private serve(route: Route, res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    const names = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
    const ctx = this.capture(res, req, names);
    if (this.draining) {
      this.fail(res, ctx, new ApiError('SERVICE_UNAVAILABLE', 'This node is shutting down; retry, on another node if there is one'),
        started, route.path, true, [['Retry-After', '1']]);
      return;
    }
    const state: ReqState = { aborted: false, wake: null };
    this.inFlight.add(res);
    res.onAborted(() => {
      state.aborted = true;
      state.wake?.();
      this.settle(res);
    });
    if (route.maxBody === undefined) {
      this.run(route, res, ctx, started, state);
      return;
    }
    // authenticate before reading a byte of the body: nobody without the key makes the server buffer 16 MiB
    try {
      this.authenticate(route, ctx);
    } catch (err) {
      this.fail(res, ctx, err, started, route.path, true);
      return;
    }
    const declared = Number(req.getHeader('content-length'));
    if (declared > route.maxBody) {
      this.fail(res, ctx, new ApiError('BODY_TOO_LARGE', `body above ${route.maxBody} bytes`), started, route.path, true);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > route.maxBody!) {
        done = true;
        if (!state.aborted) this.fail(res, ctx, new ApiError('BODY_TOO_LARGE', `body above ${route.maxBody} bytes`), started, route.path, true);
        state.aborted = true;
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        done = true;
        ctx.body = Buffer.concat(chunks, size);
        if (!state.aborted) res.cork(() => this.run(route, res, ctx, started, state, true));
      }
    });
  }

  private run(route: Route, res: HttpResponse, ctx: RequestCtx, started: number, state: ReqState,
    authenticated = false): void {
    let charged = 0;
    let reply: Reply | StreamReply | Promise<Reply | StreamReply>;
    try {
      if (!authenticated) this.authenticate(route, ctx);
      ctx.ignored = ignoredParams(route.params ?? [], ctx.query);
      ctx.params = route.params === undefined ? {} : parseParams(route.params, ctx.query);
      // HEAD delivers no body, so it costs nothing; it answers with the status its GET would have, a refusal too
      if (route.cost !== undefined && ctx.key !== null) {
        const cost = route.cost(ctx.params, ctx);
        const head = ctx.method === 'HEAD';
        // the period's last credits serve a call that costs more (Accounts.reserveUpTo): refused only at 0
        const taken = head ? (this.opts.accounts.affords(ctx.key, cost, ctx.now) ? 0 : -1) : this.opts.accounts.reserveUpTo(ctx.key, cost, ctx.now);
        if (taken < 0) throw new ApiError('OUT_OF_USAGE_CREDITS', `This call costs ${credits(cost)} and none remain in the period`);
        charged = taken;
      }
      reply = route.handle(ctx);
    } catch (err) {
      this.refund(ctx, charged);
      this.fail(res, ctx, err, started, route.path);
      return;
    }
    if (!(reply instanceof Promise)) {
      this.finish(res, ctx, reply, charged, started, route, state);
      return;
    }
    const watch = this.opts.watch;
    const pending = reply;
    (watch === undefined ? pending : watch.within(pending, watch.boundMs + (route.extraWaitMs ?? 0))).then(
      (r) => this.finish(res, ctx, r, charged, started, route, state),
      (err: unknown) => {
        // answered without the handler: a reply it makes later releases what it holds (an export's cache file)
        if (err instanceof DatabaseTimeout) pending.then((r) => { if ('chunks' in r) r.settle(false); }, () => undefined);
        this.refund(ctx, charged);
        if (!state.aborted) res.cork(() => this.fail(res, ctx, err, started, route.path));
      },
    );
  }

  private authenticate(route: Route, ctx: RequestCtx): void {
    if (route.auth === 'none') return;
    const raw = ctx.presentedKey;
    if (route.auth === 'optional' && raw === '') return;
    if (raw === '') throw new ApiError(route.auth === 'admin' ? 'ADMIN_KEY_REQUIRED' : 'MISSING_KEY');
    if (route.auth === 'admin') {
      if (!this.opts.accounts.isAdmin(raw)) throw new ApiError('ADMIN_KEY_REQUIRED');
      // the master credential never in a URL, which proxies, access logs and browser histories keep
      if (ctx.keyInQuery) throw new ApiError('ADMIN_KEY_REQUIRED', 'Send the admin key in the Authorization header (Bearer) or X-API-Key, never in the URL');
      return;
    }
    if (raw === AMBIGUOUS_KEY) throw new ApiError('INVALID_KEY', 'apiKey is given more than once with different keys: send one');
    const key = this.opts.accounts.resolve(raw);
    if (key === null) throw new ApiError('INVALID_KEY');
    ctx.key = key;
    const wait = this.opts.accounts.rateLimit(key, ctx.now);
    if (wait > 0) throw new ApiError('EXCEEDED_FREQ_LIMIT', `Free keys are limited to 60 requests per second; retry in ${wait} s`, undefined, { retryAfter: wait });
  }

  private refund(ctx: RequestCtx, charged: number): void {
    if (charged > 0 && ctx.key !== null) this.opts.accounts.refund(ctx.key, charged);
  }

  private finish(res: HttpResponse, ctx: RequestCtx, reply: Reply | StreamReply, charged: number, started: number, route: Route,
    state: ReqState, encoded = false): void {
    if ('chunks' in reply) {
      void this.stream(res, ctx, reply, charged, started, route, state);
      return;
    }
    if (!encoded && !state.aborted) {
      const now = this.encode(ctx, reply, (later) => this.finish(res, ctx, later, charged, started, route, state, true));
      // compressed off the main thread: finished again with the bytes
      if (now === null) return;
      reply = now;
    }
    if (reply.status >= 400 || state.aborted) {
      // a failed call, or a client gone before the answer: nothing delivered, nothing charged
      this.refund(ctx, charged);
      charged = 0;
      if (state.aborted) return;
    } else if (ctx.key !== null && ctx.method !== 'HEAD' && route.introspects !== true) {
      // delivered: the credits held for it are charged. A free call is a call too (calls per endpoint,
      // last_request_at); a priced one moves the time as it is charged
      if (route.cost === undefined) this.opts.accounts.touch(ctx.key, ctx.now);
      this.opts.accounts.settle(ctx.key, charged, ctx.now);
      this.opts.accounts.recordUsage(ctx.key, this.usageLabels.get(route)!, charged);
    } else if (ctx.key !== null && charged > 0) this.opts.accounts.settle(ctx.key, charged, ctx.now);
    res.cork(() => this.write(res, ctx, reply, charged, started, route.path));
  }

  /** A 200 of GZIP_MIN_BYTES or more: gzipped for a client that accepts it, and marked as varying with
   *  Accept-Encoding either way. Returns the reply to send now, or null when `later` will be called with it. A HEAD
   *  is answered with the headers of its GET, the compressed length too. */
  private encode(ctx: RequestCtx, reply: Reply, later: (r: Reply) => void): Reply | null {
    const body = reply.body;
    // a 304 names the representation the client holds: the gzipped one's tag is the weak form. It says Vary for a
    // client without gzip too: a 304 carries the Vary its 200 would have (RFC 9110 section 15.4.5), and only the
    // bodies under GZIP_MIN_BYTES have none, which a Vary on their 304 costs a cache nothing but a key
    if (reply.status === 304) {
      return { status: 304, body, contentType: reply.contentType, headers: ctx.acceptGzip ? [...weakTags(reply.headers ?? []), VARY] : [...(reply.headers ?? []), VARY] };
    }
    if (reply.status !== 200 || (typeof body === 'string' ? body.length : body.byteLength) < GZIP_MIN_BYTES) return reply;
    const headers = [...(reply.headers ?? []), VARY];
    if (!ctx.acceptGzip) return { status: reply.status, body, contentType: reply.contentType, headers };
    const gzipped = (gz: Buffer | null): Reply => (gz === null
      ? { status: reply.status, body, contentType: reply.contentType, headers }
      : { status: reply.status, body: gz, contentType: reply.contentType, headers: gzipHeaders(headers) });
    const gz = this.gzip.compress(body, (done) => later(gzipped(done)));
    return gz === null ? null : gzipped(gz);
  }

  private async stream(res: HttpResponse, ctx: RequestCtx, reply: StreamReply, charged: number, started: number,
    route: Route, state: ReqState): Promise<void> {
    let reserved = 0;
    // HEAD delivers no body, so it costs nothing, but is refused where its GET would be
    if (reply.cost > 0 && ctx.key !== null) {
      const head = ctx.method === 'HEAD';
      const taken = head ? (this.opts.accounts.affords(ctx.key, reply.cost, ctx.now) ? 0 : -1) : this.opts.accounts.reserveUpTo(ctx.key, reply.cost, ctx.now);
      if (taken < 0) {
        this.refund(ctx, charged);
        reply.settle(false);
        const err = new ApiError('OUT_OF_USAGE_CREDITS', `This call costs ${credits(reply.cost)} and none remain in the period`);
        if (!state.aborted) res.cork(() => this.fail(res, ctx, err, started, route.path));
        return;
      }
      reserved = taken;
      const pays = head ? Math.min(reply.cost, ctx.key.remaining) : taken;
      if (pays < reply.cost) reply.shorten?.(pays);
    }
    if (state.aborted) {
      this.refund(ctx, charged + reserved);
      reply.settle(false);
      return;
    }
    res.cork(() => {
      res.writeStatus(STATUS_TEXT[200]);
      writeCommonHeaders(res, ctx, charged + reserved, this.opts.headers);
      // gzipped as it goes for a client that accepts it, as every other body of 1 KiB or more is: an export's
      // length is not known before it ends, so every one varies (an empty day's is a few bytes, framing included)
      for (const [k, v] of ctx.acceptGzip ? gzipHeaders(reply.headers) : reply.headers) res.writeHeader(k, v);
      res.writeHeader(VARY[0], VARY[1]);
      res.writeHeader('Content-Type', reply.contentType);
      // time to the first byte: the body follows as the client takes it
      res.writeHeader('X-Response-Time', (performance.now() - started).toFixed(3));
      if (ctx.method === 'HEAD') res.endWithoutBody();
    });
    if (ctx.method === 'HEAD') {
      reply.settle(false);
      this.settle(res);
      this.opts.onResponse?.(route.path, 200, performance.now() - started);
      return;
    }
    let completed = false;
    try {
      for await (const chunk of ctx.acceptGzip ? gzipChunks(reply.chunks) : reply.chunks) {
        if (state.aborted) break;
        let ok = true;
        res.cork(() => { ok = res.write(chunk); });
        if (!ok && !state.aborted) {
          await new Promise<void>((resolve) => {
            state.wake = resolve;
            res.onWritable(() => {
              state.wake = null;
              resolve();
              return true;
            });
          });
        }
      }
      completed = !state.aborted;
    } catch (err) {
      // the status line is out: a body closed without its terminating chunk tells the client it is truncated
      this.opts.onError?.(err, ctx);
    }
    // credits counted as delivered: a client that leaves pays for what it was sent
    const owed = Math.min(reserved, Math.max(0, reply.settle(completed)));
    this.refund(ctx, reserved - owed);
    if (ctx.key !== null && (completed || charged + owed > 0)) this.opts.accounts.settle(ctx.key, charged + owed, ctx.now);
    if (ctx.key !== null && (completed || owed > 0)) this.opts.accounts.recordUsage(ctx.key, this.usageLabels.get(route)!, charged + owed);
    if (state.aborted) return;
    if (completed) res.cork(() => res.end());
    else res.close();
    this.settle(res);
    this.opts.onResponse?.(route.path, completed ? 200 : 500, performance.now() - started);
  }

  private fail(res: HttpResponse, ctx: RequestCtx, err: unknown, started: number, routePath: string, close = false,
    extra: readonly [string, string][] = []): void {
    let apiErr: ApiError;
    const headers: [string, string][] = [...extra];
    if (err instanceof ApiError) apiErr = err;
    else if (err instanceof DatabaseTimeout) {
      // logged once by the watch, not per request
      apiErr = new ApiError('SERVICE_UNAVAILABLE', `The database did not answer within ${err.ms / 1000} s; retry shortly`, undefined, { cause: err });
      headers.push(['Retry-After', '5']);
    } else if (unreachable(err)) {
      // the database is out of reach: a passing outage, not a fault of the request or of the service's code
      this.opts.onError?.(err, ctx);
      apiErr = new ApiError('SERVICE_UNAVAILABLE', 'The database is unreachable; retry shortly', undefined, { cause: err });
      headers.push(['Retry-After', '5']);
    } else {
      this.opts.onError?.(err, ctx);
      apiErr = new ApiError('INTERNAL_ERROR', undefined, undefined, { cause: err });
    }
    if (apiErr.status === 429 || apiErr.retryAfter > 0) headers.push(['Retry-After', String(Math.max(1, apiErr.retryAfter))]);
    let body: string;
    try {
      body = errorBody(apiErr, ctx.requestId);
    } catch (e) {
      // a throw here would leave uWebSockets.js' callback and end the process: the body without its detail
      this.opts.onError?.(e, ctx);
      body = errorBody(new ApiError(apiErr.code, apiErr.message), ctx.requestId);
    }
    const reply: Reply = { status: apiErr.status, body, headers };
    this.write(res, ctx, reply, 0, started, routePath, close);
  }

  private write(res: HttpResponse, ctx: RequestCtx, reply: Reply, charged: number, started: number, routePath: string,
    close = false): void {
    res.writeStatus(STATUS_TEXT[reply.status] ?? `${reply.status} Status`);
    writeCommonHeaders(res, ctx, charged, this.opts.headers);
    if (reply.headers !== undefined) for (const [k, v] of reply.headers) res.writeHeader(k, v);
    if (reply.status !== 304) res.writeHeader('Content-Type', reply.contentType ?? 'application/json');
    const ms = performance.now() - started;
    res.writeHeader('X-Response-Time', ms.toFixed(3));
    if (reply.status === 304 || ctx.method === 'HEAD') {
      // uWebSockets.js 20.30 leaves a response unfinished when endWithoutBody is given any length but 0 (its next
      // request on the connection then found it closed), and writes Content-Length: 0 with 0: a HEAD's length goes as a
      // header of its own, a 304 has none, and endWithoutBody takes no argument (so a close is asked of the client)
      if (reply.status !== 304) {
        res.writeHeader('Content-Length', String(typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength));
      }
      if (close) res.writeHeader('Connection', 'close');
      res.endWithoutBody();
    } else res.end(reply.body, close);
    this.settle(res);
    this.opts.onResponse?.(routePath, reply.status, ms);
  }
}

const VARY: readonly [string, string] = ['Vary', 'Accept-Encoding'];

/** A gzipped body's headers: Content-Encoding, and its ETag made weak (the bytes differ from the identity body's, which
 *  the strong ETag names; If-None-Match compares weakly: serialize.ts etagMatches). */
function gzipHeaders(headers: readonly (readonly [string, string])[]): [string, string][] {
  const out = weakTags(headers);
  out.push(['Content-Encoding', 'gzip']);
  return out;
}

function weakTags(headers: readonly (readonly [string, string])[]): [string, string][] {
  return headers.map(([k, v]) => [k, k === 'ETag' && !v.startsWith('W/') ? `W/${v}` : v]);
}

/** error codes of a connection that failed or broke: the socket's, and postgres.js' own */
const UNREACHABLE = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
]);

/** Whether an error (or one of its causes) is a connection that failed or broke: the only connections a request
 *  handler makes are the database's (a webhook test delivery reports its own failures). */
function unreachable(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 4 && e instanceof Error; i++, e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
    // the embedded database's unix socket gone with its thread (sql/connection.ts starts it again): a missing file
    // elsewhere is no outage
    if (code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return true;
  }
  return false;
}

/** The client address: the socket peer, or what a trusted proxy's X-Forwarded-For names (http/client-ip.ts). */
export function clientIp(res: HttpResponse, req: HttpRequest, trusted: TrustedProxies | undefined): string {
  const peer = decoder.decode(res.getRemoteAddressAsText());
  return trusted === undefined ? normaliseAddress(peer) : trusted.clientIp(peer, req.getHeader('x-forwarded-for'));
}

/** The headers every answer carries: request id, the configured ones (the feed label), and the key's balance with
 *  what this call charged. */
export function writeCommonHeaders(res: HttpResponse, ctx: RequestCtx, charged: number,
  headers: readonly (readonly [string, string])[]): void {
  res.writeHeader('X-Request-ID', ctx.requestId);
  if (ctx.ignored !== '') res.writeHeader('X-Ignored-Params', ctx.ignored);
  for (const [k, v] of headers) res.writeHeader(k, v);
  if (ctx.key !== null) {
    const remaining = String(ctx.key.remaining);
    res.writeHeader('X-RateLimit-Remaining', remaining);
    res.writeHeader('x-requests-remaining', remaining);
    res.writeHeader('x-requests-used', String(ctx.key.used));
    res.writeHeader('x-requests-last', String(charged));
  }
}
