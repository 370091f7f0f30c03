// GET /v1/verdict and GET|POST /v1/verdict/prefs (issue 5, calculators): one bet graded against the sharp book's
// fresh no-vig line (engine/verdict.ts holds the rule), and the caller's saved book scope. The parlay verdict and
// best bets share the scope rules and the saved preferences, so they are mounted from here.

import { BOOKMAKERS, MARKETS, resolveSportKeys, sportByKey } from '../../engine/catalogue.js';
import { edgePct } from '../../engine/analytics-math.js';
import { decimalToAmerican, tidy } from '../../engine/odds.js';
import { effectiveAt } from '../../engine/price-store.js';
import {
  bestQuote, findGame, quotesPlayer, kellyFraction, quoteOf, resolveBet, sharpFair, sideLine, verdictOf,
  type BetQuery, type Quote, type Verdict,
} from '../../engine/verdict.js';
import type { Prefs } from '../../sql/prefs.js';
import { invalidField, jsonObject } from '../body.js';
import { invalid, queryPrice } from '../params.js';
import type { Route } from '../router.js';
import type { Services } from '../services.js';
import { bestBetsRoutes } from './best-bets.js';
import { parlayRoutes } from './parlay.js';
import { GRADABLE_KEYS, bodyBooks, gradableBooks, openEvents, PrefsStore, QUERY_COMPLAINTS, SHARP_KEYS, scopeJson, scopeOf, VERDICT_REGIONS } from './verdict-scope.js';

const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const numOrNull = { type: ['number', 'null'] } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const object = (properties: Record<string, object>) => ({ type: 'object', required: Object.keys(properties), properties, additionalProperties: false });
const orNull = (s: object) => ({ oneOf: [s, { type: 'null' }] });

export const ScopeSchema = object({
  source: { type: 'string', enum: ['books', 'region', 'saved_books', 'saved_region', 'default'] }, region: strOrNull, books: { type: 'array', items: str },
});

const PrefsSchema = object({
  region: { type: ['string', 'null'], enum: [...VERDICT_REGIONS, null] },
  books: { type: ['array', 'null'], items: str, minItems: 1, maxItems: 200 },
});
/** the body of POST /v1/verdict/prefs: each field optional, null clears it */
const PrefsBody = { ...PrefsSchema, required: [] } as const;

const VerdictSchema = object({
  verdict: { type: 'string', enum: ['BET', 'LEAN', 'FAIR', 'PASS', 'NO_DATA'] },
  event_id: str, home_team: str, away_team: str, market: str, side: str,
  line: numOrNull, player: strOrNull,
  fair_prob: numOrNull, fair_price: numOrNull, fair_price_american: numOrNull,
  devig: { const: 'multiplicative' }, sharp_book: str,
  best: orNull(object({ book: str, price: num, effective_price: num, ev_pct: numOrNull })),
  yours: orNull(object({ book: strOrNull, price: num, ev_pct: numOrNull })),
  kelly: orNull(object({ fraction: num, stake: num })),
  books_compared: { type: 'integer' },
  scope: ScopeSchema,
  age_seconds: num,
  reasons: { type: 'array', items: str },
});

export function verdictRoutes(s: Services): Route[] {
  const rm = s.hub.readModel;
  const prefs = new PrefsStore(s);

  const prefsJson = (p: Prefs) => JSON.stringify({ region: p.region, books: p.books });
  const prefsRoutes: Route[] = [
    {
      method: 'GET',
      path: '/v1/verdict/prefs',
      auth: 'key',
      tag: 'calculators',
      summary: "The caller's saved verdict preferences: region and books",
      cost: () => 0,
      response: PrefsSchema,
      handle: async (ctx) => ({ status: 200, body: prefsJson(await prefs.get(ctx.key!.id)) }),
    },
    {
      method: 'POST',
      path: '/v1/verdict/prefs',
      auth: 'key',
      tag: 'calculators',
      summary: 'Saves verdict preferences: {"region": "us", "books": ["draftkings", ...]} (null clears one)',
      maxBody: 16 * 1024,
      cost: () => 0,
      requestBody: PrefsBody,
      response: PrefsSchema,
      handle: async (ctx) => {
        // a misspelt field would otherwise change nothing while the answer looked like a save
        const b = jsonObject(ctx, ['region', 'books']);
        const bad = invalidField;
        const saved = await prefs.get(ctx.key!.id);
        // absent keeps the saved value, null clears it
        const region = b.region === undefined ? saved.region : b.region;
        if (region !== null && (typeof region !== 'string' || !VERDICT_REGIONS.includes(region))) bad('region', `must be one of ${VERDICT_REGIONS.join(', ')}`, region);
        let books: string[] | null = b.books === undefined ? saved.books : null;
        if (b.books !== undefined && b.books !== null) {
          const list = bodyBooks(b.books);
          books = typeof list === 'string' ? bad('books', list, b.books) : list;
        }
        const next: Prefs = { region: region as string | null, books };
        await prefs.set(ctx.key!.id, next);
        return { status: 200, body: prefsJson(next) };
      },
    },
  ];

  const verdictRoute: Route = {
    method: 'GET',
    path: '/v1/verdict',
    auth: 'key',
    tag: 'calculators',
    summary: "Grades one bet against the sharp book's fresh no-vig line: BET, LEAN, FAIR, PASS or NO_DATA",
    params: [
      { name: 'sport', type: 'string', required: true, description: 'Sport key' },
      { name: 'market', type: 'enum', values: MARKETS.map((m) => m.key), default: 'h2h', description: 'h2h, spreads, totals or a player prop key' },
      { name: 'side', type: 'string', required: true, description: 'Team name, home or away (h2h, spreads); over or under (totals, props)' },
      { name: 'home', type: 'string', description: 'Home team (with away)' },
      { name: 'away', type: 'string', description: 'Away team (with home)' },
      { name: 'event', type: 'string', description: '"Away @ Home"' },
      { name: 'team', type: 'string', description: 'One team name, matched partially; it must identify one game' },
      { name: 'eventId', type: 'string', description: 'The game\'s id (from /events or /odds): picks one of two games of the same teams (a doubleheader); names given besides must be its own' },
      { name: 'player', type: 'string', description: 'Player, for prop markets' },
      { name: 'line', type: 'number', min: -2000, max: 2000, description: "The side's line (spreads, totals, props); default the sharp book's current line" },
      { name: 'book', type: 'enum', values: GRADABLE_KEYS, description: "Book whose price is graded (not a DFS pick'em board: its prices are per-entry payouts)" },
      { name: 'price', type: 'string', description: 'American (-110, +150) or decimal (1.91); overrides book' },
      { name: 'region', type: 'enum', values: VERDICT_REGIONS, description: 'Books considered for the best price; omitted: the saved preference, else us' },
      { name: 'books', type: 'csv', values: BOOKMAKERS.map((b) => b.key), maxItems: 200, description: 'Books considered; overrides region' },
      { name: 'bankroll', type: 'number', min: 0.01, max: 1e12, description: 'With a +EV bet, a suggested Kelly stake' },
      { name: 'kelly', type: 'number', default: 0.5, min: 0, max: 1, description: 'Kelly fraction' },
      { name: 'sharpBook', type: 'enum', values: SHARP_KEYS, default: 'pinnacle', description: 'Sharp reference book, as /ev takes it' },
    ],
    cost: () => 5,
    errors: ['EVENT_NOT_FOUND'],
    response: VerdictSchema,
    handle: async (ctx) => {
      const p = ctx.params;
      // a query parameter naming no sport is a 422 as every other filter's (parlay legs' sport too), not the 404 of a path
      if (resolveSportKeys(p.sport as string) === null) invalid('sport', 'unknown sport key; see /v1/sports?all=true', p.sport);
      // a merged or decommissioned book was graded NO_DATA (and charged) where books= and the parlay's book are 422
      if (p.book !== undefined) gradableBooks([p.book as string], 'book');
      if (p.books !== undefined) gradableBooks(p.books as string[]);
      const saved = p.books === undefined && p.region === undefined ? await prefs.get(ctx.key!.id) : null;
      const ev = findGame(openEvents(s, p.sport as string), p as unknown as BetQuery, QUERY_COMPLAINTS, quotesPlayer(rm, s.hub.players, p as unknown as BetQuery));
      const sharp = BOOK_INDEX.get(p.sharpBook as string)!;
      const bet = resolveBet(rm, s.hub.players, ev, sportByKey(ev.sport)!, p as unknown as BetQuery, sharp, QUERY_COMPLAINTS);
      const fair = sharpFair(rm, bet, sharp, ctx.now);
      const reasons: string[] = fair.reason === '' ? [] : [fair.reason];
      const scope = scopeOf(p.books as string[] | undefined, p.region as string | undefined, saved);
      const { best, compared } = bestQuote(rm, bet, scope.books, ctx.now);
      let yours: { book: string | null; price: number; eff: number } | null = null;
      if (p.price !== undefined) {
        const d = queryPrice(p.price as string);
        if (!(d > 1)) invalid('price', 'must be American with a sign (-110, +150) or decimal above 1 (1.91)', p.price);
        // a price typed for a named exchange is that exchange's price: net of its commission, as its quote would be
        const book = p.book as string | undefined;
        yours = { book: book ?? null, price: d, eff: book === undefined ? d : effectiveAt(d, BOOK_INDEX.get(book)!) };
      } else if (p.book !== undefined) {
        const q: Quote | null = quoteOf(rm, bet, BOOK_INDEX.get(p.book as string)!, ctx.now);
        if (q !== null) yours = { book: p.book as string, price: q.price, eff: q.eff };
        else reasons.push(`${p.book} has no fresh price on this side and line`);
      }
      const pr = fair.prob;
      const has = pr === pr;
      // a book asked for and without a price grades nothing (another book's price would answer another question)
      const asked = p.price !== undefined || p.book !== undefined;
      const graded = yours ?? (asked || best === null ? null : { eff: best.eff });
      let verdict: Verdict = 'NO_DATA';
      if (has && graded !== null) verdict = verdictOf(edgePct(pr, graded.eff));
      else if (has && !asked) reasons.push('no fresh price at the books considered');
      let oldest = has ? fair.lu : ctx.now;
      if (best !== null) oldest = Math.min(oldest, best.lu);
      const fraction = has && graded !== null ? kellyFraction(pr, graded.eff) * (p.kelly as number) : 0;
      const body = {
        verdict,
        event_id: ev.id, home_team: ev.home, away_team: ev.away, market: p.market, side: p.side,
        line: sideLine(bet),
        player: bet.player < 0 ? null : s.hub.players.name(bet.player),
        fair_prob: has ? tidy(pr) : null,
        fair_price: has ? tidy(1 / pr) : null,
        fair_price_american: has ? decimalToAmerican(1 / pr) : null,
        devig: 'multiplicative', sharp_book: p.sharpBook,
        best: best === null ? null : { book: BOOKMAKERS[best.book].key, price: best.price, effective_price: tidy(best.eff), ev_pct: has ? edgePct(pr, best.eff) : null },
        // a price typed in American becomes a decimal with noise in its last digits: served to 12 significant digits
        yours: yours === null ? null : { book: yours.book, price: tidy(yours.price), ev_pct: has ? edgePct(pr, yours.eff) : null },
        // no stake without a graded price (NO_DATA), whichever part is missing
        kelly: p.bankroll === undefined || !has || graded === null ? null
          : { fraction: tidy(fraction), stake: tidy(fraction * (p.bankroll as number)) },
        books_compared: compared,
        scope: scopeJson(scope),
        age_seconds: Math.max(0, (ctx.now - oldest) / 1000),
        reasons,
      };
      return { status: 200, body: JSON.stringify(body) };
    },
  };

  return [...prefsRoutes, verdictRoute, ...parlayRoutes(s, prefs), ...bestBetsRoutes(s, prefs)];
}
