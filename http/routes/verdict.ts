// GET /v1/verdict (issue 5, calculators): grades one bet against the sharp book's fresh no-vig line.
// Verdict rule: NO_DATA when the sharp book has no fresh complete outcome set on that line; otherwise by the
// graded price's edge: BET >= 2 %, LEAN 0.5 to 2 %, FAIR -0.5 to 0.5 %, PASS below -0.5 %.

import { BOOKMAKERS, MARKETS, booksForRegions, sportByKey } from '../../engine/catalogue.js';
import { devig } from '../../engine/devig.js';
import { ApiError } from '../../engine/errors.js';
import { MARKET_INDEX, SLOT } from '../../engine/ingest.js';
import { americanToDecimal, decimalToAmerican } from '../../engine/odds.js';
import type { EventView } from '../../engine/read-model.js';
import { STALE_MS } from '../../engine/sla.js';
import type { Region } from '../../engine/types.js';
import { invalid } from '../params.js';
import { invalidField, jsonObject } from '../body.js';
import type { Route } from '../router.js';
import { getPrefs, setPrefs, type Prefs } from '../../sql/prefs.js';
import type { Services } from '../services.js';
import { sportKeys } from './discovery.js';
import { fold } from './props.js';

const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
const COMMISSION = BOOKMAKERS.map((b) => (b.kind === 'exchange' ? b.commission : 0));

/** American with a sign (-110, +150) or decimal above 1 (1.91); NaN otherwise */
export function parsePrice(raw: string): number {
  const s = raw.trim();
  if (/^[+-]\d+(\.\d+)?$/.test(s)) return americanToDecimal(Number(s));
  if (/^\d+(\.\d+)?$/.test(s)) {
    const d = Number(s);
    return d > 1 && d < 1000 ? d : Number.NaN;
  }
  return Number.NaN;
}

export function verdictOf(edgePct: number): 'BET' | 'LEAN' | 'FAIR' | 'PASS' {
  return edgePct >= 2 ? 'BET' : edgePct >= 0.5 ? 'LEAN' : edgePct > -0.5 ? 'FAIR' : 'PASS';
}

const REGIONS = ['us', 'eu', 'uk', 'au', 'ca'];

export function verdictRoutes(s: Services): Route[] {
  const rm = s.hub.readModel;
  /** saved preferences by key id, read once from PostgreSQL and kept current on write */
  const prefs = new Map<number, Prefs>();
  const prefsOf = async (keyId: number): Promise<Prefs> => {
    let p = prefs.get(keyId);
    if (p === undefined) prefs.set(keyId, (p = await getPrefs(s.db, keyId)));
    return p;
  };
  const findGame = (events: EventView[], p: Record<string, unknown>): EventView => {
    const match = (q: string, name: string) => fold(name) === fold(q);
    let home = p.home as string | undefined;
    let away = p.away as string | undefined;
    if (p.event !== undefined) {
      const parts = (p.event as string).split('@');
      if (parts.length !== 2) invalid('event', 'must be "Away @ Home"', p.event);
      [away, home] = [parts[0].trim(), parts[1].trim()];
    }
    if (home !== undefined && away !== undefined) {
      const ev = events.find((e) => match(home!, e.home) && match(away!, e.away));
      if (ev === undefined) throw new ApiError('EVENT_NOT_FOUND', `no upcoming or live game ${away} @ ${home}`);
      return ev;
    }
    if (p.team !== undefined) {
      const q = fold(p.team as string);
      const hits = events.filter((e) => fold(e.home).includes(q) || fold(e.away).includes(q));
      if (hits.length === 0) throw new ApiError('EVENT_NOT_FOUND', `no upcoming or live game of ${p.team}`);
      if (hits.length > 1) invalid('team', `matches several games: ${hits.map((e) => `${e.away} @ ${e.home}`).join('; ')}`, p.team);
      return hits[0];
    }
    return invalid('home', 'identify the game with home and away, event ("Away @ Home") or team', null);
  };

  const prefsJson = (p: Prefs) => JSON.stringify({ region: p.region, books: p.books });
  const prefsRoutes: Route[] = [
    {
      method: 'GET',
      path: '/v1/verdict/prefs',
      auth: 'key',
      tag: 'calculators',
      summary: "The caller's saved verdict preferences: region and books",
      cost: () => 0,
      handle: async (ctx) => ({ status: 200, body: prefsJson(await prefsOf(ctx.key!.id)) }),
    },
    {
      method: 'POST',
      path: '/v1/verdict/prefs',
      auth: 'key',
      tag: 'calculators',
      summary: 'Saves verdict preferences: {"region": "us", "books": ["draftkings", ...]} (null clears one)',
      maxBody: 16 * 1024,
      cost: () => 0,
      handle: async (ctx) => {
        const b = jsonObject(ctx);
        const bad = invalidField;
        const region = b.region === undefined || b.region === null ? null : b.region;
        if (region !== null && (typeof region !== 'string' || !REGIONS.includes(region))) bad('region', `must be one of ${REGIONS.join(', ')}`, region);
        let books: string[] | null = null;
        if (b.books !== undefined && b.books !== null) {
          if (!Array.isArray(b.books) || b.books.length === 0 || b.books.length > 200) bad('books', 'must be a list of 1 to 200 book keys', b.books);
          const list = b.books as unknown[];
          const unknown = list.filter((k) => typeof k !== 'string' || BOOKMAKERS[BOOK_INDEX.get(k) ?? -1]?.status !== 'active');
          if (unknown.length > 0) bad('books', `unknown or inactive: ${unknown.join(', ')}`, b.books);
          books = [...new Set(list as string[])];
        }
        const next: Prefs = { region: region as string | null, books };
        await setPrefs(s.db, ctx.key!.id, next);
        prefs.set(ctx.key!.id, next);
        return { status: 200, body: prefsJson(next) };
      },
    },
  ];

  return [...prefsRoutes, {
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
      { name: 'player', type: 'string', description: 'Player, for prop markets' },
      { name: 'line', type: 'number', min: -2000, max: 2000, description: "The side's line (spreads, totals, props); default the sharp book's current line" },
      { name: 'book', type: 'enum', values: BOOKMAKERS.map((b) => b.key), description: 'Book whose price is graded' },
      { name: 'price', type: 'string', description: 'American (-110, +150) or decimal (1.91); overrides book' },
      { name: 'region', type: 'enum', values: REGIONS, description: "Books considered for the best price; omitted: the saved preference, else us" },
      { name: 'books', type: 'csv', values: BOOKMAKERS.map((b) => b.key), maxItems: 200, description: 'Books considered; overrides region' },
      { name: 'bankroll', type: 'number', min: 0.01, max: 1e12, description: 'With a +EV bet, a suggested Kelly stake' },
      { name: 'kelly', type: 'number', default: 0.5, min: 0, max: 1, description: 'Kelly fraction' },
      { name: 'sharpBook', type: 'enum', values: BOOKMAKERS.map((b) => b.key), default: 'pinnacle', description: 'Sharp reference book' },
    ],
    cost: () => 5,
    handle: async (ctx) => {
      const p = ctx.params;
      const saved = p.books === undefined && p.region === undefined ? await prefsOf(ctx.key!.id) : null;
      const keys = sportKeys(p.sport as string);
      const events = keys.flatMap((k) => [...rm.sportEvents(k)]).filter((e) => e.status !== 'final');
      const ev = findGame(events, p);
      const sport = sportByKey(ev.sport)!;
      let market = MARKET_INDEX.get(p.market as string)!;
      if (p.market === 'h2h' && sport.three_way) market = MARKET_INDEX.get('h2h_3_way')!;
      const mdef = MARKETS[market];
      if (mdef.key === 'h2h_3_way' && !sport.three_way) invalid('market', `${sport.key} has a two-way moneyline`, p.market);
      if (mdef.kind === 'prop' && !mdef.families.includes(sport.family)) invalid('market', `${mdef.key} does not apply to ${sport.key}`, p.market);
      const side = fold(p.side as string);
      let slot: number;
      if (mdef.shape === 'over_under') slot = side === 'over' ? SLOT.OVER : side === 'under' ? SLOT.UNDER : -1;
      else if (side === 'home' || fold(ev.home).includes(side)) slot = SLOT.HOME;
      else if (side === 'away' || fold(ev.away).includes(side)) slot = SLOT.AWAY;
      else slot = mdef.shape === 'three_way' && side === 'draw' ? SLOT.DRAW : -1;
      if (slot < 0) invalid('side', mdef.shape === 'over_under' ? 'must be over or under' : `must be ${ev.home}, ${ev.away}, home or away${mdef.shape === 'three_way' ? ' or draw' : ''}`, p.side);
      let player = -1;
      if (mdef.kind === 'prop') {
        if (p.player === undefined) invalid('player', `is required for ${mdef.key}`, null);
        const q = fold(p.player as string);
        const ids = new Set(ev.records.filter((r) => rm.market(r) === market && rm.player(r) >= 0 && fold(s.hub.players.name(rm.player(r))).includes(q)).map((r) => rm.player(r)));
        if (ids.size === 0) throw new ApiError('EVENT_NOT_FOUND', `no ${mdef.key} line for ${p.player} in ${ev.away} @ ${ev.home}`);
        if (ids.size > 1) invalid('player', `matches several players: ${[...ids].map((i) => s.hub.players.name(i)).join(', ')}`, p.player);
        player = [...ids][0];
      }
      const sharp = BOOK_INDEX.get(p.sharpBook as string)!;
      const n = mdef.shape === 'three_way' ? 3 : 2;
      const reasons: string[] = [];
      const sr = rm.find(ev.idx, market, player, sharp);
      let linePoint = Number.NaN;
      if (mdef.key !== 'h2h' && mdef.key !== 'h2h_3_way') {
        if (p.line !== undefined) linePoint = mdef.key === 'spreads' && slot === SLOT.AWAY ? -(p.line as number) : (p.line as number);
        else if (sr >= 0) linePoint = rm.point(sr);
        else invalid('line', `is required: ${p.sharpBook} has no ${mdef.key} line here`, null);
      }
      const samePoint = (r: number) => (rm.point(r) === linePoint || (rm.point(r) !== rm.point(r) && linePoint !== linePoint));
      const fresh = (r: number, o: number, book: number) => rm.price(r, o) > 0 && ctx.now - Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o)) <= STALE_MS[book];
      const lastUpdate = (r: number, o: number) => Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o));
      let fair = Number.NaN;
      let oldest = ctx.now;
      if (sr < 0 || !samePoint(sr)) reasons.push(`${p.sharpBook} has no quote on this line`);
      else {
        const implied = new Float64Array(n);
        let ok = true;
        for (let o = 0; o < n; o++) {
          if (!fresh(sr, o, sharp)) ok = false;
          else {
            implied[o] = 1 / rm.price(sr, o);
            oldest = Math.min(oldest, lastUpdate(sr, o));
          }
        }
        const out = new Float64Array(n);
        if (!ok) reasons.push(`${p.sharpBook} has no fresh ${n}-way set on this line`);
        else if (!devig(implied, 'multiplicative', out)) reasons.push(`${p.sharpBook}'s set is underround: not de-vigged`);
        else fair = out[slot];
      }
      // books, else region, else the saved preference (books, else region), else us
      const scopeBooks = (p.books as string[] | undefined) ?? (p.region === undefined ? saved?.books ?? undefined : undefined);
      const region = (p.region as string | undefined) ?? saved?.region ?? 'us';
      const scope = scopeBooks !== undefined
        ? scopeBooks.map((k) => BOOK_INDEX.get(k)!).filter((b) => b !== undefined)
        : booksForRegions([region as Region]).map((b) => BOOK_INDEX.get(b.key)!);
      let best: { book: number; price: number; eff: number; lu: number } | null = null;
      let compared = 0;
      for (const b of scope) {
        const r = rm.find(ev.idx, market, player, b);
        if (r < 0 || !samePoint(r) || !fresh(r, slot, b)) continue;
        compared++;
        const d = rm.price(r, slot);
        const eff = 1 + (d - 1) * (1 - COMMISSION[b]);
        if (best === null || eff > best.eff) best = { book: b, price: d, eff, lu: lastUpdate(r, slot) };
      }
      let yours: { book: string | null; price: number; eff: number } | null = null;
      if (p.price !== undefined) {
        const d = parsePrice(p.price as string);
        if (!(d > 1)) invalid('price', 'must be American with a sign (-110, +150) or decimal above 1 (1.91)', p.price);
        yours = { book: (p.book as string | undefined) ?? null, price: d, eff: d };
      } else if (p.book !== undefined) {
        const b = BOOK_INDEX.get(p.book as string)!;
        const r = rm.find(ev.idx, market, player, b);
        if (r >= 0 && samePoint(r) && fresh(r, slot, b)) {
          const d = rm.price(r, slot);
          yours = { book: p.book as string, price: d, eff: 1 + (d - 1) * (1 - COMMISSION[b]) };
        } else reasons.push(`${p.book} has no fresh price on this side and line`);
      }
      const edge = (d: number) => (fair * d - 1) * 100;
      const graded = yours ?? (best === null ? null : { eff: best.eff });
      let verdict: string = 'NO_DATA';
      if (fair === fair && graded !== null) verdict = verdictOf(edge(graded.eff));
      else if (fair === fair) reasons.push('no fresh price at the books considered');
      if (best !== null) oldest = Math.min(oldest, best.lu);
      const fraction = fair === fair && graded !== null ? Math.max(0, (fair * graded.eff - 1) / (graded.eff - 1)) * (p.kelly as number) : 0;
      const body = {
        verdict,
        event_id: ev.id, home_team: ev.home, away_team: ev.away, market: p.market, side: p.side,
        line: linePoint !== linePoint ? null : mdef.key === 'spreads' && slot === SLOT.AWAY ? -linePoint || 0 : linePoint,
        player: player < 0 ? null : s.hub.players.name(player),
        fair_prob: fair === fair ? fair : null,
        fair_price: fair === fair ? 1 / fair : null,
        fair_price_american: fair === fair ? decimalToAmerican(1 / fair) : null,
        devig: 'multiplicative', sharp_book: p.sharpBook,
        best: best === null ? null : { book: BOOKMAKERS[best.book].key, price: best.price, effective_price: best.eff, ev_pct: fair === fair ? edge(best.eff) : null },
        yours: yours === null ? null : { book: yours.book, price: yours.price, ev_pct: fair === fair ? edge(yours.eff) : null },
        kelly: p.bankroll === undefined || fair !== fair ? null : { fraction, stake: fraction * (p.bankroll as number) },
        books_compared: compared,
        age_seconds: Math.max(0, (ctx.now - oldest) / 1000),
        reasons,
      };
      return { status: 200, body: JSON.stringify(body) };
    },
  }];
}
