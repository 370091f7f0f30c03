// Self-serve and agent sign-up (SPEC "Other endpoints mentioned", Rates and quotas): POST /v1/agent/signup (a
// free account and its key, shown once; 5 per address per hour), POST /v1/agent/magic-link (always the same 200,
// so it reveals nothing about which addresses have accounts; mails a one-time login link when SMTP_URL is set),
// POST /v1/agent/checkout-link (CHECKOUT_URL_TEMPLATE, or a local page saying billing is not configured), and
// the pages and posts that use the one-time links (claim an agent's account; log in to get a new key).

import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../../engine/errors.js';
import { PAID_TIERS, TIER_CREDITS, isTier, type Tier } from '../../engine/tiers.js';
import { consumeToken, countTokenRequests, pruneTokens, recordToken } from '../../sql/accounts.js';
import { sendMail } from '../../workers/webhook-mail.js';
import { normalEmail } from '../accounts.js';
import { emailField, invalidField, jsonObject, optionalString } from '../body.js';
import { WindowLimiter } from '../ip-limiter.js';
import type { RequestCtx, Route } from '../router.js';
import { isoSeconds, type Services } from '../services.js';

export interface AgentConfig {
  /** the service's public base URL, e.g. https://odds.example.com (links in answers and mails) */
  publicUrl(): string;
  /** CHECKOUT_URL_TEMPLATE: `{tier}` and `{email}` are replaced (URL-encoded); null: billing not configured */
  checkoutUrlTemplate: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  log?: (msg: string) => void;
}

export const SIGNUPS_PER_HOUR = 5;
export const LOGIN_TOKEN_TTL_MS = 15 * 60_000;
export const CLAIM_TOKEN_TTL_MS = 7 * 86_400_000;
/** login-link requests recorded per address per hour; past it the answer is the same and nothing is sent */
export const MAGIC_LINKS_PER_HOUR = 5;
/** login-link requests per client address per hour: each one for a new e-mail address wrote a row (429 past it) */
export const MAGIC_LINK_CLIENT_PER_HOUR = 30;
/** how often the expired tokens are deleted, at most (on the next sign-up or login-link request) */
const TOKEN_PRUNE_MS = 10 * 60_000;
const AGENT_BODY = 4 * 1024;
const AGENT_ID = /^[\x21-\x7e]+$/;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const object = (properties: Record<string, object>) => ({ type: 'object', required: Object.keys(properties), properties, additionalProperties: false });
/** the link pages post the token as a form; a client may send JSON */
const TOKEN_TYPES = ['application/json', 'application/x-www-form-urlencoded'];
const TokenBody = { type: 'object', required: ['token'], properties: { token: { type: 'string', minLength: 16, maxLength: 128 } } } as const;

const json = (body: unknown, status = 200) => ({ status, body: JSON.stringify(body) });
const html = (body: string, status = 200) => ({ status, body, contentType: 'text/html; charset=utf-8', headers: [['Cache-Control', 'no-store']] as [string, string][] });

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function newToken(): string {
  return randomBytes(24).toString('base64url');
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function checkoutUrl(cfg: AgentConfig, tier: Tier, email: string): { url: string; configured: boolean } {
  if (cfg.checkoutUrlTemplate === null) {
    return { url: `${cfg.publicUrl()}/v1/agent/billing?tier=${encodeURIComponent(tier)}`, configured: false };
  }
  const url = cfg.checkoutUrlTemplate.replaceAll('{tier}', encodeURIComponent(tier)).replaceAll('{email}', encodeURIComponent(email));
  return { url, configured: true };
}

/** The token of a form post (application/x-www-form-urlencoded, from the link pages) or a JSON body. */
function tokenOf(ctx: RequestCtx): string {
  let token: unknown;
  if (ctx.contentType.startsWith('application/x-www-form-urlencoded')) token = new URLSearchParams(ctx.body?.toString('utf8') ?? '').get('token');
  else token = jsonObject(ctx, ['token']).token;
  if (typeof token !== 'string' || token.length < 16 || token.length > 128) invalidField('token', 'must be the token of the link', token);
  return token;
}

function linkPage(title: string, action: string, token: string, button: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"></head>
<body style="font-family:system-ui,sans-serif;max-width:40em;margin:3em auto">
<h1>${escapeHtml(title)}</h1>
<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">${escapeHtml(button)}</button></form>
<p>The link works once. Opening this page does not use it; the button does.</p></body></html>`;
}

export function agentRoutes(s: Services, cfg: AgentConfig): Route[] {
  const signups = new WindowLimiter(SIGNUPS_PER_HOUR, 3_600_000);
  const linkClients = new WindowLimiter(MAGIC_LINK_CLIENT_PER_HOUR, 3_600_000);
  let prunedAt = 0;
  const prune = (now: number) => {
    if (now - prunedAt < TOKEN_PRUNE_MS) return;
    prunedAt = now;
    void pruneTokens(s.db, now).catch((e: unknown) => cfg.log?.(`login token pruning failed: ${String(e)}`));
  };
  const mail = (to: string, subject: string, body: string) => {
    if (cfg.smtpUrl === null) return;
    // not awaited: the answer must not wait on (or reveal) the mail server
    void sendMail(cfg.smtpUrl, { from: cfg.mailFrom, to, subject, body }).catch((e: unknown) => cfg.log?.(`login mail to ${to} failed: ${String(e)}`));
  };
  return [
    {
      method: 'POST',
      path: '/v1/agent/signup',
      auth: 'none',
      tag: 'account',
      summary: `Self-serve sign-up {email, intended_use?, agent_id?}: a free account and its API key (shown once); ${SIGNUPS_PER_HOUR} per address per hour`,
      maxBody: AGENT_BODY,
      okStatus: 201,
      requestBody: { type: 'object', required: ['email'], properties: { email: { type: 'string' }, intended_use: { type: 'string', maxLength: 500 }, agent_id: { type: 'string', maxLength: 128 } } },
      errors: ['EXCEEDED_FREQ_LIMIT', 'ACCOUNT_EXISTS'],
      response: object({
        api_key: { type: 'string', description: 'shown only in this answer' }, account_id: int, key_prefix: str, tier: { const: 'free' }, credits: int,
        period_end_iso: { type: 'string', format: 'date-time' }, claim_url: str, upgrade_url: str, instructions: str,
      }),
      handle: async (ctx) => {
        const wait = signups.hit(ctx.ip, ctx.now);
        if (wait > 0) throw new ApiError('EXCEEDED_FREQ_LIMIT', `Sign-up allows ${SIGNUPS_PER_HOUR} requests an hour per address; retry in ${wait} s`, undefined, { retryAfter: wait });
        const b = jsonObject(ctx, ['email', 'intended_use', 'agent_id']);
        const email = emailField(b, 'email');
        const intendedUse = optionalString(b, 'intended_use', 500);
        const agentId = optionalString(b, 'agent_id', 128, AGENT_ID);
        if (s.accounts.accountByEmail(email) !== undefined) throw new ApiError('ACCOUNT_EXISTS');
        let created;
        try {
          // unverified: anyone can sign up with any address (Accounts.managesKeys)
          created = await s.accounts.create({ tier: 'free', email, intendedUse, agentId, verified: false });
        } catch (e) {
          // two sign-ups of one address at once: the unique index lets one through
          if ((e as { code?: string }).code === '23505') throw new ApiError('ACCOUNT_EXISTS');
          throw e;
        }
        const a = created.state.account;
        const claim = newToken();
        await recordToken(s.db, { accountId: a.id, purpose: 'claim', tokenHash: sha256(claim), emailHash: sha256(normalEmail(email)), now: ctx.now, ttlMs: CLAIM_TOKEN_TTL_MS });
        const claimUrl = `${cfg.publicUrl()}/v1/agent/claim?token=${claim}`;
        const upgrade = checkoutUrl(cfg, 'starter', email).url;
        // the agent id is the caller's own text, sent to any address: quoted and said to be unverified, never a
        // sentence of ours (a phishing line went out as "by agent IMPORTANT: your account is suspended...")
        mail(email, 'Your linewire account', `An account was opened for this address${agentId !== null ? ` by a program that gave its name as "${agentId}" (not verified)` : ''}.\n\n` +
          `To claim it, open ${claimUrl} (valid 7 days).\n\nIf you did not expect this, ignore this message.`);
        return json({
          api_key: created.key,
          account_id: a.id,
          key_prefix: created.state.prefix,
          tier: a.tier,
          credits: a.remaining,
          period_end_iso: isoSeconds(a.periodEnd),
          claim_url: claimUrl,
          upgrade_url: upgrade,
          instructions: `Store api_key now: it is shown only this once. Send it as the X-API-Key header (or Authorization: Bearer, or ?apiKey=). ` +
            `The free tier has ${TIER_CREDITS.free.toLocaleString('en-US')} credits a month and 60 requests per second; GET /v1/usage shows what is left, ` +
            `GET /v1/meta/credit-costs what each call costs. Give claim_url to the person who owns ${email} so they can claim the account; ` +
            `upgrade_url starts a paid plan. A lost key is replaced through POST /v1/agent/magic-link {email}.`,
        }, 201);
      },
    },
    {
      method: 'POST',
      path: '/v1/agent/magic-link',
      auth: 'none',
      tag: 'account',
      summary: `Mails a one-time login link to the address if it has an account; always the same 200 (${MAGIC_LINK_CLIENT_PER_HOUR} per client address per hour)`,
      maxBody: AGENT_BODY,
      errors: ['EXCEEDED_FREQ_LIMIT'],
      requestBody: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
      response: object({ status: { const: 'ok' }, message: str }),
      handle: async (ctx) => {
        const wait = linkClients.hit(ctx.ip, ctx.now);
        if (wait > 0) throw new ApiError('EXCEEDED_FREQ_LIMIT', `Login links allow ${MAGIC_LINK_CLIENT_PER_HOUR} requests an hour per address; retry in ${wait} s`, undefined, { retryAfter: wait });
        prune(ctx.now);
        const email = emailField(jsonObject(ctx, ['email']), 'email');
        const emailHash = sha256(normalEmail(email));
        const a = s.accounts.accountByEmail(email);
        // the same two statements whatever the address: a count, then one insert (a token, or the bare request)
        const recent = await countTokenRequests(s.db, emailHash, ctx.now - 3_600_000);
        if (recent < MAGIC_LINKS_PER_HOUR) {
          const token = a === undefined ? null : newToken();
          await recordToken(s.db, { accountId: a?.id ?? null, purpose: 'login', tokenHash: token === null ? null : sha256(token), emailHash, now: ctx.now, ttlMs: LOGIN_TOKEN_TTL_MS });
          if (a !== undefined && token !== null) {
            mail(a.email!, 'Your linewire login link', `Open ${cfg.publicUrl()}/v1/agent/login?token=${token} within 15 minutes to get a new API key ` +
              `for your account (your other keys keep working).\n\nIf you did not ask for this, ignore this message.`);
          }
        }
        // without SMTP_URL nothing is mailed: say so rather than claim a mail went out (the same text for every address)
        return json({
          status: 'ok',
          message: cfg.smtpUrl === null
            ? 'This server sends no mail (SMTP_URL is not set), so no login link was sent to this address: ask the server\'s operator for a key (POST /v1/admin/keys).'
            : 'If an account exists for this address, a login link valid for 15 minutes has been sent to it.',
        });
      },
    },
    {
      method: 'POST',
      path: '/v1/agent/checkout-link',
      auth: 'none',
      tag: 'account',
      summary: 'An upgrade (checkout) URL for {email, tier} from CHECKOUT_URL_TEMPLATE; a local page when billing is not configured',
      maxBody: AGENT_BODY,
      requestBody: { type: 'object', required: ['email', 'tier'], properties: { email: { type: 'string' }, tier: { type: 'string', enum: PAID_TIERS } } },
      response: object({ checkout_url: str, tier: str, configured: { type: 'boolean', description: 'false: CHECKOUT_URL_TEMPLATE is not set and the URL is the local billing page' } }),
      handle: (ctx) => {
        const b = jsonObject(ctx, ['email', 'tier']);
        const email = emailField(b, 'email');
        if (typeof b.tier !== 'string' || !isTier(b.tier) || !PAID_TIERS.includes(b.tier)) invalidField('tier', `must be one of ${PAID_TIERS.join(', ')}`, b.tier);
        const { url, configured } = checkoutUrl(cfg, b.tier, email);
        return json({ checkout_url: url, tier: b.tier, configured });
      },
    },
    {
      method: 'GET',
      path: '/v1/agent/billing',
      contentType: 'text/html; charset=utf-8',
      auth: 'none',
      tag: 'account',
      summary: 'The page upgrade links point to when CHECKOUT_URL_TEMPLATE is not set',
      params: [{ name: 'tier', type: 'enum', values: PAID_TIERS, description: 'Tier asked for' }],
      handle: (ctx) => html(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Billing is not configured</title></head>
<body style="font-family:system-ui,sans-serif;max-width:40em;margin:3em auto"><h1>Billing is not configured</h1>
<p>This linewire server takes no payments${typeof ctx.params.tier === 'string' ? ` (the ${escapeHtml(ctx.params.tier)} tier was asked for)` : ''}.
Its operator changes tiers with <code>PATCH /v1/admin/accounts/{id}</code>, or sets <code>CHECKOUT_URL_TEMPLATE</code> to a payment provider's checkout.</p>
<p>Tiers and their allowances: <a href="/v1/pricing">/v1/pricing</a>.</p></body></html>`),
    },
    {
      method: 'GET',
      path: '/v1/agent/login',
      contentType: 'text/html; charset=utf-8',
      auth: 'none',
      tag: 'account',
      summary: 'The page of a magic link: a button that uses the one-time token to issue a new key',
      params: [{ name: 'token', type: 'string', required: true, description: 'The token of the link' }],
      handle: (ctx) => html(linkPage('Log in to linewire', '/v1/agent/login', String(ctx.params.token), 'Issue a new API key')),
    },
    {
      method: 'POST',
      path: '/v1/agent/login',
      auth: 'none',
      tag: 'account',
      summary: 'Uses a magic-link token once: a new API key for its account (the other keys keep working)',
      maxBody: AGENT_BODY,
      okStatus: 201,
      requestBody: TokenBody,
      requestTypes: TOKEN_TYPES,
      errors: ['INVALID_LOGIN_TOKEN'],
      response: object({ api_key: { type: 'string', description: 'shown only in this answer' }, key_id: int, key_prefix: str, account_id: int, message: str }),
      handle: async (ctx) => {
        const used = await consumeToken(s.db, sha256(tokenOf(ctx)), 'login', ctx.now);
        const a = used === null ? undefined : s.accounts.account(used.accountId);
        if (a === undefined) throw new ApiError('INVALID_LOGIN_TOKEN');
        const { key, state } = await s.accounts.create({ tier: a.tier, accountId: a.id });
        return json({ api_key: key, key_id: state.id, key_prefix: state.prefix, account_id: a.id, message: 'Store this key now: it is shown only once.' }, 201);
      },
    },
    {
      method: 'GET',
      path: '/v1/agent/claim',
      contentType: 'text/html; charset=utf-8',
      auth: 'none',
      tag: 'account',
      summary: 'The page of a sign-up\'s claim link: a button that claims the account for the owner of its e-mail',
      params: [{ name: 'token', type: 'string', required: true, description: 'The token of the link' }],
      handle: (ctx) => html(linkPage('Claim your linewire account', '/v1/agent/claim', String(ctx.params.token), 'Claim the account')),
    },
    {
      method: 'POST',
      path: '/v1/agent/claim',
      auth: 'none',
      tag: 'account',
      summary: 'Uses a claim token once: the account is marked claimed by the owner of its e-mail',
      maxBody: AGENT_BODY,
      requestBody: TokenBody,
      requestTypes: TOKEN_TYPES,
      errors: ['INVALID_LOGIN_TOKEN'],
      response: object({ account_id: int, email: { type: ['string', 'null'] }, claimed: { const: true }, claimed_at_iso: { type: 'string', format: 'date-time' }, message: str }),
      handle: async (ctx) => {
        const used = await consumeToken(s.db, sha256(tokenOf(ctx)), 'claim', ctx.now);
        const a = used === null ? undefined : s.accounts.account(used.accountId);
        if (a === undefined) throw new ApiError('INVALID_LOGIN_TOKEN');
        await s.accounts.claim(a);
        return json({ account_id: a.id, email: a.email, claimed: true, claimed_at_iso: isoSeconds(a.claimedAt),
          message: 'The account is claimed. A new key can be issued at any time with POST /v1/agent/magic-link.' });
      },
    },
  ];
}
