// Account metering endpoints: GET /v1/usage, GET /v1/pricing, GET /v1/meta/credit-costs, POST /v1/meta/quote and
// GET /v1/meta/api-key-check. None of them charges credits; the catalogue and the quote read the same table the
// meter uses (http/credit-costs.ts).

import { resolveSportKeys } from '../../engine/catalogue.js';
import { TIERS, webhookLimits } from '../../engine/tiers.js';
import { SubscriptionSchema, subscriptionJson } from '../account-json.js';
import { invalidField, jsonObject } from '../body.js';
import { CREDIT_COSTS, costEntry, endpointLabel } from '../credit-costs.js';
import { parseParams, type Params } from '../params.js';
import { decodePathPart, type RequestCtx, type Route } from '../router.js';
import { UPCOMING } from './odds.js';
import { isoSeconds } from '../services.js';

type Described = Omit<Route, 'handle'>;

const json = (body: unknown, status = 200) => ({ status, body: JSON.stringify(body) });
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const intOrNull = { type: ['integer', 'null'] } as const;
const iso = { type: 'string', format: 'date-time' } as const;
const object = (properties: Record<string, object>, optional: readonly string[] = []) => ({
  type: 'object', required: Object.keys(properties).filter((k) => !optional.includes(k)), properties, additionalProperties: false,
});

const UsageSchema = object({
  account_id: int, tier: str, period_start_iso: iso, period_end_iso: iso, monthly_credits: int, used: int, remaining: int, calls: int,
  by_endpoint: { type: 'array', description: 'with by_endpoint=true', items: object({ endpoint: str, calls: int, credits: int }) },
}, ['by_endpoint']);

const PricingSchema = object({
  tiers: {
    type: 'array',
    items: object({
      tier: str, monthly_credits: int, requests_per_second: { ...intOrNull, description: 'null: no per-second cap' },
      websocket: object({ allowed: { type: 'boolean' }, coalesce_ms: intOrNull, max_streams: { ...intOrNull, description: 'streams an account may hold open at once (per node); one more is closed with 4029' } }),
      webhooks: object({ allowed: { type: 'boolean' }, max_webhooks: intOrNull, max_events_per_minute: intOrNull }),
    }),
  },
  period: str, credit_costs: str, upgrade: str,
});

const CreditCostsSchema = object({
  costs: {
    type: 'array',
    items: object({ endpoint: str, method: str, path: str, credits: { ...intOrNull, description: 'null: the parameters or the rows decide (rule)' }, minimum: int, rule: str }),
  },
  free: { type: 'array', items: str },
  notes: { type: 'array', items: str },
});

const QuoteSchema = object({
  method: str, path: str, endpoint: str, credits: int, exact: { type: 'boolean', description: 'false for exports: the minimum, the rows decide' }, rule: str,
});

const KeyCheckSchema = object({
  valid: { const: true }, key_id: int, key_prefix: str, account_id: int, tier: str, credits_remaining: int, credits_used: int,
  subscription: SubscriptionSchema,
});

export function pricingBody(): Record<string, unknown> {
  return {
    tiers: TIERS.map((t) => {
      const hooks = webhookLimits(t.tier);
      return {
        tier: t.tier,
        monthly_credits: t.monthlyCredits,
        requests_per_second: t.requestsPerSecond === 0 ? null : t.requestsPerSecond,
        websocket: { allowed: t.wsWindowMs !== null, coalesce_ms: t.wsWindowMs, max_streams: t.wsStreams },
        webhooks: { allowed: hooks !== null, max_webhooks: hooks?.hooks ?? null, max_events_per_minute: hooks?.perMinute ?? null },
      };
    }),
    period: 'monthly from the account\'s start; the balance is reset to the tier\'s allowance at the period end (unused credits do not carry over)',
    credit_costs: '/v1/meta/credit-costs',
    upgrade: 'POST /v1/agent/checkout-link {email, tier}',
  };
}

/** The catalogue: every priced endpoint from the meter's table, then every other served endpoint at 0 credits. */
export function creditCostsBody(routes: readonly Described[]): Record<string, unknown> {
  const free = routes.filter((r) => costEntry(r.method, r.path) === undefined).map((r) => endpointLabel(r.method, r.path));
  return {
    costs: CREDIT_COSTS.map((e) => ({ endpoint: endpointLabel(e.method, e.path), method: e.method, path: e.path, credits: e.credits, minimum: e.minimum, rule: e.rule })),
    free: [...new Set(free)].sort(),
    notes: [
      'Every /v1 path is also served under /v4 at the same cost.',
      'HEAD costs nothing; a call that fails (4xx/5xx) or that the client abandons before the answer is not charged.',
      'A call the balance cannot cover is 401 OUT_OF_USAGE_CREDITS and charges nothing.',
      'WebSocket streams are not metered in credits (business tier and above).',
    ],
  };
}

function patternOf(path: string): RegExp {
  return new RegExp('^' + path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '[^/]+') + '$');
}

const QUOTE_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];

export function usageRoutes(routes: () => readonly Described[]): Route[] {
  let patterns: { re: RegExp; route: Described }[] | null = null;
  const match = (method: string, path: string): Described | null => {
    patterns ??= routes().map((route) => ({ re: patternOf(route.path), route }));
    const m = method === 'HEAD' ? 'GET' : method;
    return patterns.find((p) => p.route.method === m && p.re.test(path))?.route ?? null;
  };
  return [
    {
      method: 'GET',
      path: '/v1/usage',
      auth: 'key',
      introspects: true,
      tag: 'account',
      summary: 'Credits used and remaining in the current period; by_endpoint=true splits them by endpoint template',
      params: [{ name: 'by_endpoint', type: 'boolean', default: false, description: 'Add calls and credits per endpoint template' }],
      response: UsageSchema,
      handle: (ctx) => {
        const a = ctx.key!.account;
        const cells = [...a.usage.entries()].filter(([, c]) => c.calls > 0 || c.credits > 0);
        const body: Record<string, unknown> = {
          account_id: a.id,
          tier: a.tier,
          period_start_iso: isoSeconds(a.periodStart),
          period_end_iso: isoSeconds(a.periodEnd),
          monthly_credits: TIERS.find((t) => t.tier === a.tier)!.monthlyCredits,
          used: a.used,
          remaining: a.remaining,
          calls: cells.reduce((n, [, c]) => n + c.calls, 0),
        };
        if (ctx.params.by_endpoint === true) {
          body.by_endpoint = cells
            .map(([endpoint, c]) => ({ endpoint, calls: c.calls, credits: c.credits }))
            .sort((x, y) => y.credits - x.credits || y.calls - x.calls || (x.endpoint < y.endpoint ? -1 : 1));
        }
        return json(body);
      },
    },
    {
      method: 'GET',
      path: '/v1/pricing',
      auth: 'none',
      tag: 'account',
      summary: 'Tiers: monthly credits, per-second cap, WebSocket and webhook entitlements',
      response: PricingSchema,
      handle: () => json(pricingBody()),
    },
    {
      method: 'GET',
      path: '/v1/meta/credit-costs',
      auth: 'none',
      tag: 'account',
      summary: 'The credit cost of every endpoint, from the table the meter charges by',
      response: CreditCostsSchema,
      handle: () => json(creditCostsBody(routes())),
    },
    {
      method: 'POST',
      path: '/v1/meta/quote',
      auth: 'none',
      tag: 'account',
      summary: 'The credits a call would cost, without making it: {method, path, query}',
      maxBody: 8 * 1024,
      requestBody: { type: 'object', required: ['path'], properties: { method: { type: 'string', enum: QUOTE_METHODS }, path: { type: 'string', maxLength: 2048 }, query: { type: ['string', 'object', 'null'] } } },
      response: QuoteSchema,
      handle: (ctx) => quote(ctx, match),
    },
    {
      method: 'GET',
      path: '/v1/meta/api-key-check',
      auth: 'key',
      introspects: true,
      tag: 'account',
      summary: 'Validates the key without charging: tier, balance and the subscription block',
      response: KeyCheckSchema,
      handle: (ctx) => {
        const k = ctx.key!;
        const a = k.account;
        return json({
          valid: true,
          key_id: k.id,
          key_prefix: k.prefix,
          account_id: a.id,
          tier: a.tier,
          credits_remaining: a.remaining,
          credits_used: a.used,
          subscription: subscriptionJson(a),
        });
      },
    },
  ];
}

function quote(ctx: RequestCtx, match: (method: string, path: string) => Described | null) {
  const b = jsonObject(ctx, ['method', 'path', 'query']);
  let method = 'GET';
  if (b.method !== undefined) {
    if (typeof b.method !== 'string' || !QUOTE_METHODS.includes(b.method.toUpperCase())) invalidField('method', `must be one of ${QUOTE_METHODS.join(', ')}`, b.method);
    method = b.method.toUpperCase();
  }
  if (typeof b.path !== 'string' || b.path.length === 0 || b.path.length > 2048 || !b.path.startsWith('/')) {
    invalidField('path', 'must be a path of at most 2048 characters starting with /', b.path);
  }
  const [rawPath, inlineQuery] = splitOnce(b.path, '?');
  const query = new URLSearchParams(inlineQuery);
  if (b.query !== undefined && b.query !== null) {
    if (typeof b.query === 'string') {
      if (b.query.length > 4096) invalidField('query', 'at most 4096 characters', b.query.length);
      for (const [k, v] of new URLSearchParams(b.query.startsWith('?') ? b.query.slice(1) : b.query)) query.append(k, v);
    } else if (typeof b.query === 'object' && !Array.isArray(b.query)) {
      const entries = Object.entries(b.query as Record<string, unknown>);
      if (entries.length > 64) invalidField('query', 'at most 64 parameters', entries.length);
      for (const [k, v] of entries) {
        const values = Array.isArray(v) ? v : [v];
        if (!values.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) {
          invalidField('query', `${k} must be a string, number, boolean or an array of them`, v);
        }
        query.append(k, values.map(String).join(','));
      }
    } else invalidField('query', 'must be a query string or an object of parameters', b.query);
  }
  let path = rawPath;
  if (path.startsWith('/v4/')) path = '/v1' + path.slice(3);
  const route = match(method, path);
  if (route === null) invalidField('path', `no endpoint ${method} ${rawPath}`, b.path);
  // a call naming no sport is answered 404 UNKNOWN_SPORT and charged nothing: no price to quote
  const at = route.path.split('/').indexOf('{sport_key}');
  if (at >= 0) {
    const sport = decodePathPart(path.split('/')[at] ?? '');
    if (resolveSportKeys(sport) === null && !(sport === UPCOMING && route.path === '/v1/sports/{sport_key}/odds')) {
      invalidField('path', `names no sport (${sport}): the call would be 404 UNKNOWN_SPORT, free; see /v1/sports?all=true`, b.path);
    }
  }
  const entry = costEntry(route.method, route.path);
  const params: Params = route.params === undefined ? {} : parseParams(route.params, query);
  let credits = 0;
  let exact = true;
  if (method === 'HEAD') credits = 0;
  else if (entry !== undefined && entry.credits !== null) credits = entry.credits;
  else if (entry !== undefined) {
    const rule = (route as { cost?: Route['cost'] }).cost;
    if (rule !== undefined) credits = rule(params, ctx);
    else {
      // priced by the rows delivered (exports): known once they are counted; the least is the minimum
      credits = entry.minimum;
      exact = false;
    }
  }
  return json({
    method,
    path: rawPath,
    endpoint: endpointLabel(route.method, route.path),
    credits,
    exact,
    rule: method === 'HEAD' ? 'HEAD costs nothing' : entry?.rule ?? 'free',
  });
}

function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)];
}
