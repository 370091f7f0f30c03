// Streamed responses (closing-line exports): the body is produced page by page from a database cursor and
// written to the socket with uWebSockets.js backpressure, so an export of 500,000 rows is never held whole in
// memory. `res.write` queues a chunk even when the socket is full and returns false; the next page is then read
// only once `onWritable` reports the socket drained (uWebSockets.js examples/Backpressure.js), so the process
// holds at most one page and what the kernel has not taken yet.
//
// These routes keep the Router's contract (auth, rate cap, 422 parameters, credits reserved before the body and
// refunded for what was not delivered, error bodies, X-Request-ID, X-Response-Time, usage headers) but own the
// response, which the Router's one-shot Reply cannot stream.

import { randomBytes } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { ApiError } from '../engine/errors.js';
import type { Accounts } from './accounts.js';
import { endpointLabel } from './credit-costs.js';
import { parseParams } from './params.js';
import { writeCommonHeaders, type RequestCtx, type Route, type RouterOptions } from './router.js';
import { errorBody } from './serialize.js';

export interface StreamPlan {
  contentType: string;
  headers: readonly (readonly [string, string])[];
  /** credits reserved before the first byte (the cost if everything is delivered) */
  cost: number;
  body: AsyncIterable<string>;
  /** the credits owed once the body ended or the client left, from what was delivered */
  owed(completed: boolean): number;
}

/** A route described like the Router's (for /openapi.json) whose answer is streamed. */
export interface StreamRoute extends Omit<Route, 'handle' | 'cost'> {
  plan(ctx: RequestCtx): Promise<StreamPlan>;
}

/** the same options as the Router's (the streamed routes are mounted beside it) */
export type StreamOptions = RouterOptions;

const ID_PREFIX = randomBytes(8).toString('hex');
let idCounter = 0;
const decoder = new TextDecoder();

interface State {
  aborted: boolean;
  /** resolves a pending wait for the socket to drain */
  wake: (() => void) | null;
}

export function mountStreamed(app: TemplatedApp, routes: readonly StreamRoute[], opts: StreamOptions): void {
  for (const route of routes) {
    const names = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
    const pattern = route.path.replace(/\{([a-z_]+)\}/g, ':$1');
    const handler = (res: HttpResponse, req: HttpRequest) => void serve(route, names, res, req, opts);
    app.get(pattern, handler);
    if (route.path.startsWith('/v1/')) app.get('/v4' + pattern.slice(3), handler);
  }
}

function capture(res: HttpResponse, req: HttpRequest, names: string[], now: number): RequestCtx {
  const args: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const raw = req.getParameter(i) ?? '';
    let v = raw;
    try { v = decodeURIComponent(raw); } catch { /* malformed escape: keep the raw text */ }
    args.push(v);
  }
  const query = new URLSearchParams(req.getQuery() ?? '');
  const auth = req.getHeader('authorization');
  let key = req.getHeader('x-api-key');
  if (key === '' && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') key = auth.slice(7).trim();
  if (key === '') key = query.get('apiKey') ?? '';
  idCounter++;
  return {
    method: 'GET', path: req.getUrl(), query, args, ifNoneMatch: req.getHeader('if-none-match'), contentType: '',
    ip: decoder.decode(res.getRemoteAddressAsText()), body: null,
    requestId: ID_PREFIX + idCounter.toString(16).padStart(16, '0'),
    now, idempotencyKey: '', presentedKey: key, key: null, params: {},
  };
}

async function serve(route: StreamRoute, names: string[], res: HttpResponse, req: HttpRequest, opts: StreamOptions): Promise<void> {
  const started = performance.now();
  const ctx = capture(res, req, names, opts.now());
  const state: State = { aborted: false, wake: null };
  res.onAborted(() => {
    state.aborted = true;
    state.wake?.();
  });
  let plan: StreamPlan;
  let reserved = 0;
  try {
    authenticate(route, ctx, opts.accounts);
    ctx.params = route.params === undefined ? {} : parseParams(route.params, ctx.query);
    plan = await route.plan(ctx);
    if (ctx.key !== null) {
      if (!opts.accounts.reserve(ctx.key, plan.cost, ctx.now)) {
        throw new ApiError('OUT_OF_USAGE_CREDITS', `This export costs ${plan.cost} credits and ${ctx.key.remaining} remain in the period`);
      }
      reserved = plan.cost;
    }
  } catch (err) {
    if (!state.aborted) res.cork(() => fail(res, ctx, err, started, route.path, opts));
    return;
  }
  if (state.aborted) {
    settle(ctx, reserved, 0, opts);
    return;
  }
  res.cork(() => {
    res.writeStatus('200 OK');
    writeCommon(res, ctx, reserved, opts);
    for (const [k, v] of plan.headers) res.writeHeader(k, v);
    res.writeHeader('Content-Type', plan.contentType);
    // time to the first byte: the body follows as the client takes it
    res.writeHeader('X-Response-Time', (performance.now() - started).toFixed(3));
  });
  let completed = false;
  try {
    for await (const chunk of plan.body) {
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
    // the status line is out: a truncated body closed without its terminating chunk tells the client
    opts.onError?.(err, ctx);
  }
  const owed = Math.min(reserved, Math.max(0, plan.owed(completed)));
  settle(ctx, reserved, owed, opts);
  if (ctx.key !== null && (completed || owed > 0)) opts.accounts.recordUsage(ctx.key, endpointLabel('GET', route.path), owed);
  if (state.aborted) return;
  if (completed) res.cork(() => res.end());
  else res.close();
  opts.onResponse?.(route.path, completed ? 200 : 500, performance.now() - started);
}

function authenticate(route: StreamRoute, ctx: RequestCtx, accounts: Accounts): void {
  if (route.auth === 'none') return;
  if (ctx.presentedKey === '') throw new ApiError('MISSING_KEY');
  const key = accounts.resolve(ctx.presentedKey);
  if (key === null) throw new ApiError('INVALID_KEY');
  ctx.key = key;
  const wait = accounts.rateLimit(key, ctx.now);
  if (wait > 0) throw new ApiError('EXCEEDED_FREQ_LIMIT', `Free keys are limited to 60 requests per second; retry in ${wait} s`, undefined, { retryAfter: wait });
}

/** refunds what was reserved beyond what is owed */
function settle(ctx: RequestCtx, reserved: number, owed: number, opts: StreamOptions): void {
  if (ctx.key !== null && reserved > owed) opts.accounts.refund(ctx.key, reserved - Math.max(0, owed));
}

function writeCommon(res: HttpResponse, ctx: RequestCtx, charged: number, opts: StreamOptions): void {
  writeCommonHeaders(res, ctx, charged, opts.headers);
}

function fail(res: HttpResponse, ctx: RequestCtx, err: unknown, started: number, path: string, opts: StreamOptions): void {
  let e: ApiError;
  if (err instanceof ApiError) e = err;
  else {
    opts.onError?.(err, ctx);
    e = new ApiError('INTERNAL_ERROR', undefined, undefined, { cause: err });
  }
  res.writeStatus(`${e.status} ${e.status === 422 ? 'Unprocessable Entity' : e.status === 404 ? 'Not Found' : e.status === 401 ? 'Unauthorized' : e.status === 429 ? 'Too Many Requests' : 'Error'}`);
  writeCommon(res, ctx, 0, opts);
  if (e.code === 'EXCEEDED_FREQ_LIMIT') res.writeHeader('Retry-After', String(e.retryAfter));
  res.writeHeader('Content-Type', 'application/json');
  res.writeHeader('X-Response-Time', (performance.now() - started).toFixed(3));
  res.end(errorBody(e, ctx.requestId));
  opts.onResponse?.(path, e.status, performance.now() - started);
}
