// POST /v1/parlay/verdict (issue 5, calculators): 2 to 12 legs, each graded like GET /v1/verdict; the parlay's
// fair price, the single book with the best whole-parlay price among the books quoting every leg, the parlay EV,
// the weakest leg, same-game warnings, and the payout for a stake (math in engine/verdict-parlay.ts).

import { BOOKMAKERS, MARKETS, resolveSportKeys, sportByKey } from '../../engine/catalogue.js';
import { ApiError, type ValidationItem } from '../../engine/errors.js';
import { edgePct } from '../../engine/analytics-math.js';
import { decimalToAmerican, tidy } from '../../engine/odds.js';
import type { EventView } from '../../engine/read-model.js';
import {
  bestQuote, findGame, quotesPlayer, resolveBet, sharpFair, sideLine, verdictOf, type Bet, type BetQuery, type Complaints,
  type Fair, type Verdict,
} from '../../engine/verdict.js';
import { parlayAt, parlayBooks, parlayFairProb, sameGameGroups, weakestLeg } from '../../engine/verdict-parlay.js';
import { jsonObject } from '../body.js';
import type { Route } from '../router.js';
import { isoSeconds, type Services } from '../services.js';
import { GRADABLE_KEYS, bodyBooks, openEvents, scopeJson, scopeOf, SHARP_KEYS, VERDICT_REGIONS, type PrefsStore } from './verdict-scope.js';

export const MIN_LEGS = 2;
export const MAX_LEGS = 12;
const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
const LEG_STRINGS = ['sport', 'market', 'side', 'home', 'away', 'event', 'team', 'player', 'eventId'] as const;
const LEG_FIELDS = new Set<string>([...LEG_STRINGS, 'line']);
const TOP_FIELDS = new Set(['legs', 'region', 'books', 'book', 'stake', 'sharpBook']);

interface LegInput extends BetQuery {
  sport: string;
}

interface ParlayInput {
  legs: LegInput[];
  region?: string;
  books?: string[];
  book?: string;
  stake?: number;
  sharpBook: string;
}

const str = { type: 'string' } as const;
const nStr = { type: ['string', 'null'] } as const;
const nNum = { type: ['number', 'null'] } as const;
export const ParlayBodySchema = {
  type: 'object',
  required: ['legs'],
  additionalProperties: false,
  properties: {
    legs: {
      type: 'array', minItems: MIN_LEGS, maxItems: MAX_LEGS,
      items: {
        type: 'object',
        required: ['sport', 'side'],
        additionalProperties: false,
        properties: {
          sport: str, market: { type: 'string', default: 'h2h' }, side: str, home: str, away: str,
          event: { type: 'string', description: '"Away @ Home"' }, team: str, player: str, line: { type: 'number', minimum: -2000, maximum: 2000 },
          eventId: { type: 'string', description: 'the game\'s id: picks one of two games of the same teams (a doubleheader)' },
        },
      },
    },
    region: { type: 'string', enum: VERDICT_REGIONS },
    books: { type: ['array', 'string'], items: str, description: 'book keys (a list or CSV); overrides region' },
    book: { type: 'string', description: "the book whose parlay price is graded (not a DFS pick'em board)" },
    stake: { type: 'number', exclusiveMinimum: 0, maximum: 1e12 },
    sharpBook: { type: 'string', enum: SHARP_KEYS, default: 'pinnacle' },
  },
} as const;
const bookPrice = { type: ['object', 'null'], properties: { book: str, price: nNum, price_american: { type: ['integer', 'null'] }, ev_pct: nNum } } as const;
export const ParlayVerdictSchema = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['BET', 'LEAN', 'FAIR', 'PASS', 'NO_DATA'] },
    legs: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' }, event_id: str, sport_key: str, commence_time: str, home_team: str, away_team: str, market: str,
          side: str, line: nNum, player: nStr, fair_prob: nNum, fair_price: nNum, fair_price_american: { type: ['integer', 'null'] },
          best: { type: ['object', 'null'], properties: { book: str, price: { type: 'number' }, effective_price: { type: 'number' }, ev_pct: nNum } },
          parlay_price: nNum, edge_pct: nNum, books_compared: { type: 'integer' }, reason: nStr,
        },
      },
    },
    fair_prob: nNum, fair_price: nNum, fair_price_american: { type: ['integer', 'null'] },
    best_book: { ...bookPrice, properties: { ...bookPrice.properties, books_quoting_every_leg: { type: 'integer' } } },
    yours: bookPrice,
    ev_pct: nNum,
    weakest_leg: { type: ['object', 'null'], properties: { index: { type: 'integer' }, edge_pct: { type: 'number' } } },
    correlation_warnings: { type: 'array', items: { type: 'object', properties: { event_id: str, legs: { type: 'array', items: { type: 'integer' } }, message: str } } },
    payout: { type: ['object', 'null'], properties: { stake: { type: 'number' }, book: str, price: { type: 'number' }, returns: { type: 'number' }, profit: { type: 'number' }, expected_profit: nNum } },
    devig: str, sharp_book: str,
    scope: { type: 'object', properties: { source: str, region: nStr, books: { type: 'array', items: str } } },
    reasons: { type: 'array', items: str },
  },
} as const;

/** Checks the body's shape and values; every problem goes into one 422 with its location. */
function parseBody(b: Record<string, unknown>): ParlayInput {
  const errors: ValidationItem[] = [];
  const bad = (loc: (string | number)[], msg: string, input: unknown) => errors.push({ loc: ['body', ...loc], msg, type: input === undefined ? 'missing' : 'value_error', input: input ?? null });
  for (const k of Object.keys(b)) if (!TOP_FIELDS.has(k)) bad([k], `unknown field; allowed: ${[...TOP_FIELDS].join(', ')}`, b[k]);
  const legs: LegInput[] = [];
  if (!Array.isArray(b.legs)) bad(['legs'], `must be a list of ${MIN_LEGS} to ${MAX_LEGS} legs`, b.legs ?? null);
  else if (b.legs.length < MIN_LEGS || b.legs.length > MAX_LEGS) bad(['legs'], `must hold ${MIN_LEGS} to ${MAX_LEGS} legs, not ${b.legs.length}`, b.legs.length);
  else {
    b.legs.forEach((raw: unknown, i: number) => {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        bad(['legs', i], 'must be an object {sport, market, side, home and away or team, player, line}', raw);
        return;
      }
      const leg = raw as Record<string, unknown>;
      for (const k of Object.keys(leg)) if (!LEG_FIELDS.has(k)) bad(['legs', i, k], `unknown field; allowed: ${[...LEG_FIELDS].join(', ')}`, leg[k]);
      for (const k of LEG_STRINGS) {
        const v = leg[k];
        if (v === undefined || v === null) continue;
        if (typeof v !== 'string' || v.trim() === '' || v.length > 200) bad(['legs', i, k], 'must be a string of 1 to 200 characters', v);
      }
      if (leg.sport === undefined || leg.sport === null) bad(['legs', i, 'sport'], 'field required', null);
      else if (typeof leg.sport === 'string' && resolveSportKeys(leg.sport) === null) bad(['legs', i, 'sport'], 'unknown sport key; see /v1/sports?all=true', leg.sport);
      if (leg.side === undefined || leg.side === null) bad(['legs', i, 'side'], 'field required', null);
      if (typeof leg.market === 'string' && !MARKETS.some((m) => m.key === leg.market)) bad(['legs', i, 'market'], 'must be h2h, h2h_3_way, spreads, totals or a player prop key', leg.market);
      if (leg.line !== undefined && leg.line !== null && (typeof leg.line !== 'number' || !Number.isFinite(leg.line) || Math.abs(leg.line) > 2000)) {
        bad(['legs', i, 'line'], 'must be a number within ±2000', leg.line);
      }
      // what a leg needs besides its types, checked here so that one 422 lists every leg's problems
      const given = (k: string) => typeof leg[k] === 'string' && (leg[k] as string).trim() !== '';
      if (!(given('home') && given('away')) && !given('event') && !given('team') && !given('eventId')) {
        const k = given('home') ? 'home' : given('away') ? 'away' : 'event';
        bad(['legs', i, k], 'identify the game: home and away, event ("Away @ Home"), team or eventId', leg[k] ?? null);
      }
      if (typeof leg.market === 'string' && MARKETS.some((m) => m.key === leg.market && m.kind === 'prop') && !given('player')) {
        bad(['legs', i, 'player'], `required for the player-prop market ${leg.market}`, leg.player ?? null);
      }
      const str = (k: string) => (typeof leg[k] === 'string' ? (leg[k] as string) : undefined);
      legs.push({
        sport: str('sport') ?? '', market: str('market') ?? 'h2h', side: str('side') ?? '', home: str('home'), away: str('away'),
        event: str('event'), team: str('team'), player: str('player'), line: typeof leg.line === 'number' ? leg.line : undefined,
        eventId: str('eventId'),
      });
    });
  }
  let region: string | undefined;
  if (b.region !== undefined && b.region !== null) {
    if (typeof b.region !== 'string' || !VERDICT_REGIONS.includes(b.region)) bad(['region'], `must be one of ${VERDICT_REGIONS.join(', ')}`, b.region);
    else region = b.region;
  }
  let books: string[] | undefined;
  if (b.books !== undefined && b.books !== null) {
    // a list, or a CSV string as the GET calculators take it
    const list = bodyBooks(typeof b.books === 'string' ? b.books.split(',').map((x) => x.trim()).filter((x) => x !== '') : b.books);
    if (typeof list === 'string') bad(['books'], list, b.books);
    else books = list;
  }
  const bookKey = (field: string): string | undefined => {
    const v = b[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || BOOKMAKERS[BOOK_INDEX.get(v) ?? -1]?.status !== 'active') {
      bad([field], 'must be the key of an active book', v);
      return undefined;
    }
    return v;
  };
  const book = bookKey('book');
  if (book !== undefined && !GRADABLE_KEYS.includes(book)) bad(['book'], "must not be a DFS pick'em board (its prices are per-entry payouts)", book);
  const sharpBook = bookKey('sharpBook') ?? 'pinnacle';
  if (!SHARP_KEYS.includes(sharpBook)) bad(['sharpBook'], `must be a sharp reference book: one of ${SHARP_KEYS.join(', ')}`, sharpBook);
  let stake: number | undefined;
  if (b.stake !== undefined && b.stake !== null) {
    if (typeof b.stake !== 'number' || !(b.stake > 0) || b.stake > 1e12) bad(['stake'], 'must be a number above 0 and at most 1e12', b.stake);
    else stake = b.stake;
  }
  if (errors.length > 0) throw new ApiError('VALIDATION_ERROR', `invalid body: ${errors.map((e) => `${e.loc.slice(1).join('.')} ${e.msg}`).join('; ')}`, errors);
  return { legs, region, books, book, stake, sharpBook };
}

/** 422s and 404s that name the leg */
function legComplaints(i: number, leg: LegInput): Complaints {
  return {
    invalid(field, msg, input): never {
      throw new ApiError('VALIDATION_ERROR', `invalid body: legs.${i}.${field} ${msg}`, [{ loc: ['body', 'legs', i, field], msg, type: 'value_error', input }]);
    },
    notFound(msg): never {
      throw new ApiError('EVENT_NOT_FOUND', `legs.${i}: ${msg}`, [{ loc: ['body', 'legs', i], msg, type: 'not_found', input: leg }]);
    },
  };
}

export function parlayRoutes(s: Services, prefs: PrefsStore): Route[] {
  const rm = s.hub.readModel;
  return [{
    method: 'POST',
    path: '/v1/parlay/verdict',
    auth: 'key',
    tag: 'calculators',
    summary: 'Grades a parlay of 2 to 12 legs: fair price, the best single book for the whole parlay, EV, weakest leg, same-game warnings',
    maxBody: 64 * 1024,
    requestBody: ParlayBodySchema,
    response: ParlayVerdictSchema,
    errors: ['EVENT_NOT_FOUND'],
    cost: () => 10,
    handle: async (ctx) => {
      const input = parseBody(jsonObject(ctx));
      const saved = input.books === undefined && input.region === undefined ? await prefs.get(ctx.key!.id) : null;
      const sharp = BOOK_INDEX.get(input.sharpBook)!;
      const eventsBySport = new Map<string, EventView[]>();
      const bets: Bet[] = input.legs.map((leg, i) => {
        const c = legComplaints(i, leg);
        let events = eventsBySport.get(leg.sport);
        if (events === undefined) eventsBySport.set(leg.sport, (events = openEvents(s, leg.sport)));
        const ev = findGame(events, leg, c, quotesPlayer(rm, s.hub.players, leg));
        return resolveBet(rm, s.hub.players, ev, sportByKey(ev.sport)!, leg, sharp, c);
      });
      // one side of one market per parlay: books refuse two legs of the same market
      bets.forEach((b, j) => {
        const i = bets.findIndex((a) => a.ev === b.ev && a.market === b.market && a.player === b.player);
        if (i < j) legComplaints(j, input.legs[j]).invalid('market', `repeats the market of leg ${i} in the same game`, input.legs[j].market);
      });
      const scope = scopeOf(input.books, input.region, saved);
      const fairs: Fair[] = bets.map((b) => sharpFair(rm, b, sharp, ctx.now));
      const reasons: string[] = [];
      fairs.forEach((f, i) => { if (f.reason !== '') reasons.push(`leg ${i}: ${f.reason}`); });
      const graded = fairs.every((f) => f.prob === f.prob);
      const P = graded ? parlayFairProb(fairs.map((f) => f.prob)) : Number.NaN;
      const books = parlayBooks(rm, bets, scope.books, ctx.now);
      const best = books.length > 0 ? books[0] : null;
      if (best === null) reasons.push('no book of the scope quotes every leg fresh');
      let yours = null;
      if (input.book !== undefined) {
        yours = parlayAt(rm, bets, BOOK_INDEX.get(input.book)!, ctx.now);
        if (yours === null) reasons.push(`${input.book} does not quote every leg fresh`);
      }
      const at = input.book !== undefined ? yours : best;
      const ev = at !== null && graded ? edgePct(P, at.price) : Number.NaN;
      const verdict: Verdict = ev === ev ? verdictOf(ev) : 'NO_DATA';
      // a leg's edge at the price the parlay is graded at, else at the leg's own best price
      const legBest = bets.map((b) => bestQuote(rm, b, scope.books, ctx.now));
      const legEdges = bets.map((_, i) => {
        const d = at !== null ? at.legs[i].eff : legBest[i].best?.eff;
        return d === undefined ? Number.NaN : edgePct(fairs[i].prob, d);
      });
      const weakest = weakestLeg(legEdges);
      // derived numbers as served: 12 significant digits (odds.ts tidy); NaN (not graded) is null
      const num = (x: number) => (x === x ? tidy(x) : null);
      const bookJson = (pb: typeof best) => pb === null ? null : {
        book: BOOKMAKERS[pb.book].key, price: tidy(pb.price), price_american: decimalToAmerican(pb.price), ev_pct: graded ? edgePct(P, pb.price) : null,
      };
      const body = {
        verdict,
        legs: bets.map((b, i) => {
          const f = fairs[i];
          const lb = legBest[i];
          return {
            index: i, event_id: b.ev.id, sport_key: b.ev.sport, commence_time: isoSeconds(b.ev.commence),
            home_team: b.ev.home, away_team: b.ev.away, market: MARKETS[b.market].key, side: input.legs[i].side, line: sideLine(b),
            player: b.player < 0 ? null : s.hub.players.name(b.player),
            fair_prob: num(f.prob), fair_price: num(1 / f.prob),
            fair_price_american: f.prob === f.prob ? decimalToAmerican(1 / f.prob) : null,
            best: lb.best === null ? null : {
              book: BOOKMAKERS[lb.best.book].key, price: lb.best.price, effective_price: tidy(lb.best.eff), ev_pct: num(edgePct(f.prob, lb.best.eff)),
            },
            parlay_price: at === null ? null : tidy(at.legs[i].eff),
            edge_pct: num(legEdges[i]),
            books_compared: lb.compared,
            reason: f.reason === '' ? null : f.reason,
          };
        }),
        fair_prob: num(P),
        fair_price: graded ? tidy(1 / P) : null,
        fair_price_american: graded ? decimalToAmerican(1 / P) : null,
        best_book: best === null ? null : { ...bookJson(best), books_quoting_every_leg: books.length },
        yours: input.book === undefined ? null : yours === null ? { book: input.book, price: null, price_american: null, ev_pct: null } : bookJson(yours),
        ev_pct: num(ev),
        weakest_leg: weakest < 0 ? null : { index: weakest, edge_pct: legEdges[weakest] },
        correlation_warnings: sameGameGroups(bets).map((g) => ({
          ...g,
          message: `legs ${g.legs.join(', ')} are in the same game (${bets[g.legs[0]].ev.away} @ ${bets[g.legs[0]].ev.home}): their outcomes are correlated, so the fair price, which assumes independent legs, is only an approximation`,
        })),
        payout: input.stake === undefined || at === null ? null : {
          stake: input.stake, book: BOOKMAKERS[at.book].key, price: tidy(at.price), returns: tidy(input.stake * at.price),
          profit: tidy(input.stake * (at.price - 1)),
          // from the edge as served (0 within the float noise): an even-money parlay's ev_pct 0 beside -2.2e-14
          expected_profit: graded ? tidy(input.stake * edgePct(P, at.price) / 100) : null,
        },
        devig: 'multiplicative', sharp_book: input.sharpBook, scope: scopeJson(scope),
        reasons,
      };
      return { status: 200, body: JSON.stringify(body) };
    },
  }];
}
