// FEED=theoddsapi: polls The Odds API v4 and applies what it answers through the ingest path of POST /v1/ingest
// (events upserted, prices applied, bad items rejected one by one and counted towards parser.degraded).
//
// One cycle: the sports list (`/v4/sports?all=true`, free, refreshed hourly) tells which configured sports are in
// season (`active`); for each one in season, the featured markets of all its events in one call
// (`/v4/sports/{sport}/odds`), then the other markets (player props) per event starting within the props window
// (`/v4/sports/{sport}/events/{id}/odds`). Each sport's batch is ingested as soon as it is read. Events that
// upstream stops listing after they started are sent as final (they leave the store).
//
// Spending: every response's x-requests-remaining / -used / -last are kept (engine/upstream-quota.ts); the next
// cycle waits max(min interval, time left in the period × cycle cost / (remaining − reserve)). A paid call the
// credits left cannot pay is not made; 401 OUT_OF_USAGE_CREDITS or remaining − reserve below one cycle stops
// polling until the period rolls over (a free /v4/sports call every `exhaustedProbeMs` notices credits that come
// back earlier). Failures (timeouts, network errors, 429 with its Retry-After, 5xx, other 4xx, bodies that are
// not the v4 shape) go to the feed's Poller (engine/poller.ts): backoff with jitter, breaker after repeated
// failures, one half-open trial cycle after the wait. Every fact shows in /v1/status poller_health.

import { FEATURED_MARKETS, eventRefs, mapEventOdds, mapSportOdds, newMapStats, parseJson, parseSports, readError,
  readUsage, retryAfterMs, UpstreamShapeError, type EventRef, type MappedBatch, type MappedEvent, type MapStats,
  type UpstreamSport } from '../engine/theoddsapi.js';
import type { PriceInput, WithdrawalInput } from '../engine/types.js';
import { Quota } from '../engine/upstream-quota.js';
import type { Poller } from '../engine/poller.js';
import { MAX_INGEST_EVENTS, MAX_INGEST_PRICES, type IngestResult } from './hub.js';

export const THE_ODDS_API_PUBLIC_BASE = 'https://api.the-odds-api.com';

export interface TheOddsApiConfig {
  apiKey: string;
  /** origin (and optional path prefix) the /v4 paths are appended to */
  base: string;
  sports: string[];
  markets: string[];
  regions: string[];
  /** shortest wait between cycles */
  minIntervalMs: number;
  /** per request, headers and body */
  timeoutMs: number;
  /** day of the month the quota renews (00:00 UTC) */
  resetDay: number;
  /** credits never spent */
  reserve: number;
  /** player props are asked for events starting within this (and live ones) */
  propsWithinMs: number;
  /** how long the sports list (who is in season) is reused */
  sportsRefreshMs: number;
  /** while the quota is spent, how often the free sports call checks whether credits came back */
  exhaustedProbeMs: number;
}

export const DEFAULT_THE_ODDS_API: Omit<TheOddsApiConfig, 'apiKey' | 'sports'> = {
  base: THE_ODDS_API_PUBLIC_BASE,
  markets: ['h2h', 'spreads', 'totals'],
  regions: ['us'],
  minIntervalMs: 60_000,
  timeoutMs: 10_000,
  resetDay: 1,
  reserve: 0,
  propsWithinMs: 24 * 3_600_000,
  sportsRefreshMs: 3_600_000,
  exhaustedProbeMs: 3_600_000,
};

export interface TheOddsApiDeps {
  /** the ingest path: hub.ingest with the feed's label, then the webhook evaluator's settle */
  ingest(batch: { events: MappedEvent[]; prices: (PriceInput | WithdrawalInput)[] }, now: number): Promise<IngestResult>;
  poller: Poller;
  now(): number;
  log?(msg: string): void;
  fetch?: typeof fetch;
}

/** A request that failed; `retryAfterMs` when the upstream said how long to wait; `rateLimited` on a 429 (the
 *  upstream's frequency limit is the key's, not the sport's). */
class FeedError extends Error {
  constructor(message: string, readonly retryAfterMs = 0, options?: { cause?: unknown }, readonly rateLimited = false) {
    super(message, options);
  }
}

/** The credits are spent (the upstream said so, or what is left cannot pay the next call). */
class QuotaSpent extends Error {
  constructor(readonly reason: string) {
    super(`quota spent (${reason})`);
  }
}

type SportState = 'in_season' | 'out_of_season' | 'not_listed' | 'pending';

interface SportFacts {
  state: SportState;
  events: number;
  prices: number;
  polledAt: number;
  /** why its last poll failed, null when it did not */
  lastError: string | null;
}

/** the largest upstream body read: a sport's featured markets are a few MB at most; a 700 MB answer was read whole
 *  into memory, 1.4 GB of it kept for good (the connector audit) */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export type TickResult = 'polled' | 'failed' | 'not_due' | 'backoff' | 'exhausted';

export class TheOddsApiFeed {
  readonly quota: Quota;
  /** when the next cycle is due (ms), 0 at once */
  nextCycleAt = 0;
  intervalMs = 0;
  /** what the last complete cycle cost (x-requests-last summed), NaN before one */
  cycleCost = Number.NaN;
  cycles = 0;
  readonly totals = { requests: 0, events: 0, accepted: 0, rejected: 0, malformed: 0, layMarkets: 0 };
  readonly unknownBooks = new Set<string>();
  private upstreamSports: Map<string, UpstreamSport> | null = null;
  private sportsAt = 0;
  private nextProbeAt = 0;
  /** x-requests-last of the last response, NaN when it had none */
  private lastUsage = Number.NaN;
  /** credits the upstream said it charged (x-requests-last), summed over every response */
  private charged = 0;
  private readonly sports = new Map<string, SportFacts>();
  /** events seen per sport at its last poll (to send those that vanished after their start as final) */
  private readonly listed = new Map<string, Map<string, EventRef>>();
  /** per sport and event, the (book, market, player) its books offered at the last poll, with the newest time it
   *  was observed at (withdrawals()) */
  private readonly offered = new Map<string, Map<string, Map<string, number>>>();
  /** per sport, events that vanished before their start and have not come back: final once their start passes */
  private readonly vanished = new Map<string, Map<string, EventRef>>();
  private readonly featured: string[];
  private readonly props: string[];
  private readonly fetchFn: typeof fetch;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(readonly cfg: TheOddsApiConfig, private readonly d: TheOddsApiDeps) {
    this.quota = new Quota(cfg.resetDay, cfg.reserve);
    this.featured = cfg.markets.filter((m) => FEATURED_MARKETS.has(m));
    this.props = cfg.markets.filter((m) => !FEATURED_MARKETS.has(m));
    this.fetchFn = d.fetch ?? fetch;
    for (const s of cfg.sports) this.sports.set(s, { state: 'pending', events: 0, prices: 0, polledAt: 0, lastError: null });
    d.poller.describe = (now) => this.describe(now);
  }

  /** Runs cycles from a timer until stop(). */
  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().catch((e: unknown) => this.d.log?.(`theoddsapi: ${String(e)}`))
        .finally(() => this.schedule(this.wakeInMs()));
    }, ms);
    this.timer.unref();
  }

  /** ms until something may be due: the next cycle, the end of a backoff, or a quota probe (at most a minute) */
  wakeInMs(): number {
    const now = this.d.now();
    let at = Math.max(this.nextCycleAt, this.d.poller.nextAttemptAt);
    if (this.quota.exhaustedUntil > now) at = Math.min(this.quota.exhaustedUntil, this.nextProbeAt);
    return Math.min(60_000, Math.max(10, at - now));
  }

  /** called after every tick with its result (tests await cycles with it), null when none */
  onTick: ((r: TickResult) => void) | null = null;

  /** One step: a cycle when one is due and allowed. Never throws. */
  async tick(): Promise<TickResult> {
    const r = await this.step();
    this.onTick?.(r);
    return r;
  }

  private async step(): Promise<TickResult> {
    const now = this.d.now();
    if (this.quota.exhausted(now)) {
      if (now >= this.nextProbeAt) await this.probe(now);
      return 'exhausted';
    }
    if (now < this.nextCycleAt) return 'not_due';
    const p = this.d.poller;
    if (!p.canPoll(now)) return 'backoff';
    const chargedBefore = this.charged;
    try {
      const { books, cost } = await this.cycle(now);
      const end = this.d.now();
      p.pulse(end, books);
      this.cycles++;
      this.cycleCost = cost;
      const c = this.quota.cadence(end, cost, this.cfg.minIntervalMs);
      this.intervalMs = c.intervalMs;
      if (c.spent) this.spend(end, 'remaining');
      else this.nextCycleAt = end + c.intervalMs;
      return 'polled';
    } catch (e) {
      const end = this.d.now();
      if (e instanceof QuotaSpent) {
        this.spend(end, e.reason);
        return 'exhausted';
      }
      const msg = e instanceof Error ? e.message : String(e);
      p.failure(end, msg, e instanceof FeedError ? e.retryAfterMs : 0);
      // a failed cycle that was charged for calls (a timeout after the upstream answered) is retried no sooner than
      // the shortest wait between cycles, however short the backoff (the connector audit: a failing cycle retried
      // at the backoff's pace spent 57 credits in 6 minutes against 7 every 40 minutes planned); one that cost
      // nothing (a 5xx, the upstream down) at the backoff's pace
      if (this.charged > chargedBefore) this.nextCycleAt = end + this.cfg.minIntervalMs;
      this.d.log?.(`theoddsapi poll failed: ${msg}`);
      return 'failed';
    }
  }

  private spend(now: number, reason: string): void {
    this.quota.exhaust(now, reason);
    this.nextProbeAt = now + this.cfg.exhaustedProbeMs;
    this.d.log?.(`theoddsapi: quota spent (${reason}); polling stops until ${new Date(this.quota.exhaustedUntil).toISOString()}`);
  }

  /** While spent: the free sports call; credits above the reserve resume polling. */
  private async probe(now: number): Promise<void> {
    this.nextProbeAt = now + this.cfg.exhaustedProbeMs;
    try {
      const doc = await this.get('/v4/sports', { all: 'true' }, 0);
      this.upstreamSports = parseSports(doc);
      this.sportsAt = now;
      // enough again for a cycle (the last one's cost, at least one credit)
      const need = Math.max(1, Number.isNaN(this.cycleCost) ? this.estimatedCycleCost() : this.cycleCost);
      if (this.quota.remaining - this.quota.reserve >= need) {
        this.quota.resume();
        this.nextCycleAt = 0;
      }
    } catch (e) {
      // still spent (401 OUT_OF_USAGE_CREDITS) or unreachable: the next probe tries again
      if (!(e instanceof QuotaSpent)) this.d.log?.(`theoddsapi quota probe failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** before any complete cycle: one featured-markets call per configured sport (props not counted) */
  estimatedCycleCost(): number {
    return this.cfg.sports.length * Math.max(1, this.featured.length) * this.cfg.regions.length;
  }

  private async cycle(now: number): Promise<{ books: Set<string>; cost: number }> {
    let cost = 0;
    const books = new Set<string>();
    if (this.upstreamSports === null || now - this.sportsAt >= this.cfg.sportsRefreshMs) {
      const doc = await this.get('/v4/sports', { all: 'true' }, 0);
      this.upstreamSports = parseSports(doc);
      this.sportsAt = now;
      cost += this.lastCost(0);
    }
    // each sport on its own: one that fails (a 500, a timeout, a body that is not JSON) is recorded and the next one
    // polled (the connector audit: the first sport's failure left every later sport unpolled, for good when it
    // persisted); the cycle fails only when every sport polled failed. A spent quota stops them all, and so does a
    // 429: the frequency limit is the key's, and the next sports' calls would only meet it again (the ingest audit:
    // a sport answered 429 with Retry-After 30 was asked again every cycle while another sport succeeded)
    let ok = 0;
    let first: unknown = null;
    for (const key of this.cfg.sports) {
      const facts = this.sports.get(key)!;
      const up = this.upstreamSports.get(key);
      facts.state = up === undefined ? 'not_listed' : up.active ? 'in_season' : 'out_of_season';
      if (up === undefined || !up.active) continue;
      try {
        cost += await this.pollSport(key, up, facts, now, books);
        facts.lastError = null;
        ok++;
      } catch (e) {
        if (e instanceof QuotaSpent) throw e;
        if (e instanceof FeedError && e.rateLimited) {
          facts.lastError = e.message;
          throw e;
        }
        facts.lastError = e instanceof Error ? e.message : String(e);
        first ??= e;
        this.d.log?.(`theoddsapi ${key} failed: ${facts.lastError}`);
      }
    }
    if (first !== null && ok === 0) throw first;
    return { books, cost };
  }

  /** One sport's calls and their prices applied; returns the credits they cost. */
  private async pollSport(key: string, up: UpstreamSport, facts: SportFacts, now: number, books: Set<string>): Promise<number> {
    let cost = 0;
    const stats = newMapStats();
    const batch: MappedBatch = { events: [], prices: [] };
    const seen = new Set<string>();
    const perCall = this.cfg.regions.length;
    let refs: EventRef[];
    // outright sports hold outrights only; their events have no teams
    const featured = up.has_outrights ? ['outrights'] : this.featured.filter((m) => m !== 'outrights');
    const props = up.has_outrights ? [] : this.props;
    if (featured.length > 0) {
      const doc = await this.get(`/v4/sports/${enc(key)}/odds`, this.oddsParams(featured), featured.length * perCall);
      cost += this.lastCost(featured.length * perCall);
      mapSportOdds(doc, batch, stats, seen);
      refs = eventRefs(doc);
    } else if (props.length > 0) {
      refs = eventRefs(await this.get(`/v4/sports/${enc(key)}/events`, { dateFormat: 'iso' }, 0));
      cost += this.lastCost(0);
    } else {
      refs = [];
    }
    const propsRead = new Set<string>();
    if (props.length > 0) {
      const until = now + this.cfg.propsWithinMs;
      for (const r of refs) {
        if (r.commence > until) continue;
        const doc = await this.get(`/v4/sports/${enc(key)}/events/${enc(r.id)}/odds`, this.oddsParams(props), props.length * perCall, true);
        cost += this.lastCost(props.length * perCall);
        if (doc === null) continue; // the event is gone upstream (404)
        if (typeof doc !== 'object' || Array.isArray(doc)) throw new UpstreamShapeError('the event odds endpoint did not answer an event object');
        mapEventOdds(doc, batch, stats, seen);
        propsRead.add(r.id);
      }
    }
    for (const r of refs) {
      if (!seen.has(r.id)) {
        seen.add(r.id);
        batch.events.push(r.event);
      }
    }
    const withdrawn = this.withdrawals(key, batch, refs, new Set(featured), propsRead, now);
    this.finals(key, refs, now, batch);
    const res = await this.apply(batch, withdrawn);
    facts.events = res.events;
    facts.prices = res.accepted;
    facts.polledAt = this.d.now();
    for (const b of stats.books) books.add(b);
    for (const b of stats.unknownBooks) this.unknownBooks.add(b);
    this.totals.malformed += stats.malformed;
    this.totals.layMarkets += stats.layMarkets;
    return cost;
  }

  /**
   * What the sport's books offered at its previous poll and no longer do: each answer is the complete set of the
   * markets asked for, so a (book, market, player) of an event held before and missing now was pulled, and is
   * withdrawn (`price: null`; the connector audit: a pulled line stayed in /odds, and in an arbitrage, until the
   * event ended). A prop counts only where the event's props were read this poll; an event no longer listed is
   * withdrawn whole before its start (after it, finals() sends it final).
   */
  private withdrawals(sport: string, batch: MappedBatch, refs: readonly EventRef[], featured: ReadonlySet<string>,
    propsRead: ReadonlySet<string>, now: number): WithdrawalInput[] {
    const current = new Map<string, Map<string, number>>();
    for (const p of batch.prices) {
      let keys = current.get(p.event_id);
      if (keys === undefined) current.set(p.event_id, (keys = new Map()));
      const k = offerKey(p.book, p.market, p.market === 'outrights' ? (p.player ?? p.outcome) : p.player ?? null);
      const ts = p.ts ?? now;
      if (!(ts <= (keys.get(k) ?? -Infinity))) keys.set(k, ts);
    }
    const listed = new Set(refs.map((r) => r.id));
    const starts = this.listed.get(sport);
    const before = this.offered.get(sport);
    this.offered.set(sport, current);
    const out: WithdrawalInput[] = [];
    if (before === undefined) return out;
    for (const [id, keys] of before) {
      const cur = current.get(id);
      for (const [k, seen] of keys) {
        if (cur?.has(k) === true) continue;
        const [book, market, player] = k.split('\u0000');
        if (!listed.has(id)) {
          // gone upstream: final after its start (finals()); before it, its prices go now
          if ((starts?.get(id)?.commence ?? 0) <= now) continue;
        } else if (!featured.has(market) && !propsRead.has(id)) {
          // a prop of an event whose props were not read this poll: still offered as far as is known
          let keep = current.get(id);
          if (keep === undefined) current.set(id, (keep = new Map()));
          keep.set(k, seen);
          continue;
        }
        // withdrawn as of the line's last observation (its upstream last_update), not the poll's clock: the store
        // ignores an observation older than a withdrawal, and a book listing the line again may send it with that
        // same last_update
        out.push({ book, event_id: id, market, price: null, ts: seen, ...(player === '' ? {} : { player }) });
      }
    }
    return out;
  }

  /** Events listed at the sport's previous poll, gone now and past their start, are sent as final; one gone before
   *  its start (cancelled, postponed) once its start passes while it stays away (it stayed listed, in play with no
   *  price, for max_age_hours: the connector audit). */
  private finals(sport: string, refs: EventRef[], now: number, batch: MappedBatch): void {
    const before = this.listed.get(sport);
    const current = new Map(refs.map((r) => [r.id, r]));
    this.listed.set(sport, current);
    let away = this.vanished.get(sport);
    if (before !== undefined) {
      for (const [id, r] of before) {
        if (current.has(id)) continue;
        if (r.commence <= now) batch.events.push({ ...r.event, status: 'final' } satisfies MappedEvent);
        else {
          if (away === undefined) this.vanished.set(sport, (away = new Map()));
          away.set(id, r);
        }
      }
    }
    if (away === undefined) return;
    for (const [id, r] of away) {
      if (current.has(id)) away.delete(id);
      else if (r.commence <= now) {
        away.delete(id);
        batch.events.push({ ...r.event, status: 'final' } satisfies MappedEvent);
      }
    }
  }

  private async apply(batch: MappedBatch, withdrawals: readonly WithdrawalInput[] = []): Promise<{ events: number; accepted: number }> {
    let events = 0;
    let accepted = 0;
    const prices: (PriceInput | WithdrawalInput)[] = withdrawals.length === 0 ? batch.prices : [...batch.prices, ...withdrawals];
    // within ingest's per-batch bounds; events first, so the prices find them
    for (let i = 0, j = 0; i < batch.events.length || j < prices.length;) {
      const part = { events: batch.events.slice(i, i + MAX_INGEST_EVENTS), prices: prices.slice(j, j + MAX_INGEST_PRICES) };
      i += part.events.length;
      j += part.prices.length;
      const r = await this.d.ingest(part, this.d.now());
      events += r.events;
      accepted += r.accepted;
      this.totals.rejected += r.rejected.length + r.rejected_events.length;
    }
    this.totals.events += events;
    this.totals.accepted += accepted;
    return { events, accepted };
  }

  private oddsParams(markets: string[]): Record<string, string> {
    return { regions: this.cfg.regions.join(','), markets: markets.join(','), oddsFormat: 'decimal', dateFormat: 'iso' };
  }

  /** what the last call cost by its x-requests-last, else the estimate */
  private lastCost(estimate: number): number {
    return Number.isNaN(this.lastUsage) ? estimate : this.lastUsage;
  }

  /**
   * One GET. `cost`: the credits it is expected to take (markets × regions; 0 for free calls), refused up front
   * when the credits left above the reserve cannot pay it. `optional`: a 404 answers null instead of failing.
   */
  private async get(path: string, params: Record<string, string>, cost: number, optional = false): Promise<unknown> {
    const q = this.quota;
    if (cost > 0 && !Number.isNaN(q.remaining) && q.remaining - q.reserve < cost) throw new QuotaSpent('remaining');
    const url = new URL(this.cfg.base.replace(/\/+$/, '') + path);
    url.searchParams.set('apiKey', this.cfg.apiKey);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const shown = `GET ${path}`;
    this.totals.requests++;
    let res: Response;
    let text: string;
    try {
      // the one signal bounds the headers and the body
      res = await this.fetchFn(url, { signal: AbortSignal.timeout(this.cfg.timeoutMs), headers: { accept: 'application/json' } });
      const usage = readUsage((h) => res.headers.get(h));
      this.lastUsage = usage.last;
      if (usage.last > 0) this.charged += usage.last;
      q.observe(this.d.now(), usage);
      text = await readCapped(res, MAX_BODY_BYTES);
    } catch (e) {
      const err = e as Error;
      const why = err.name === 'TimeoutError' ? `timed out after ${this.cfg.timeoutMs} ms` : err.message;
      throw new FeedError(`${shown}: ${why}`, 0, { cause: e });
    }
    if (res.status === 200) {
      try {
        return parseJson(text);
      } catch (e) {
        throw new FeedError(`${shown}: ${(e as Error).message}`, 0, { cause: e });
      }
    }
    const err = readError(text);
    if (res.status === 401 && err.code === 'OUT_OF_USAGE_CREDITS') throw new QuotaSpent('OUT_OF_USAGE_CREDITS');
    if (res.status === 404 && optional) return null;
    const wait = res.status === 429 ? retryAfterMs(res.headers.get('retry-after'), this.d.now()) ?? 0 : 0;
    throw new FeedError(`${shown}: HTTP ${res.status}${err.code !== null ? ` ${err.code}` : ''}${err.message !== null ? `: ${err.message}` : ''}`, wait,
      undefined, res.status === 429);
  }

  /** The feed's facts in /v1/status poller_health. */
  describe(now: number): Record<string, unknown> {
    return {
      source: 'theoddsapi',
      simulated: false,
      quota: this.quota.snapshot(now),
      cadence: {
        interval_ms: this.intervalMs,
        min_interval_ms: this.cfg.minIntervalMs,
        cycle_cost: Number.isNaN(this.cycleCost) ? null : this.cycleCost,
        next_cycle_in_ms: this.quota.exhaustedUntil > now ? null : Math.max(0, this.nextCycleAt - now, this.d.poller.nextAttemptAt - now),
        cycles: this.cycles,
      },
      sports: [...this.sports].map(([key, f]) => ({
        key, state: f.state, events: f.events, prices: f.prices,
        polled_age_s: f.polledAt > 0 ? Math.max(0, (now - f.polledAt) / 1000) : null, last_error: f.lastError,
      })),
      totals: {
        requests: this.totals.requests, events: this.totals.events, accepted: this.totals.accepted, rejected: this.totals.rejected,
        malformed_items: this.totals.malformed, lay_markets_skipped: this.totals.layMarkets,
      },
      unknown_books: [...this.unknownBooks],
    };
  }
}

/** A body read to at most `max` bytes: a larger one (by Content-Length, or as it streams) is refused and the
 *  connection released. */
async function readCapped(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel();
    throw new Error(`the body of ${declared} bytes is above ${max}`);
  }
  if (res.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of res.body as AsyncIterable<Uint8Array>) {
    size += c.byteLength;
    if (size > max) throw new Error(`the body passed ${max} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function offerKey(book: string, market: string, player: string | null): string {
  return `${book}\u0000${market}\u0000${player ?? ''}`;
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
