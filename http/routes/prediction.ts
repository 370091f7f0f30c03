// GET /v1/prediction-markets/{sport_key}: prediction-market books' contracts on the sport's events, as decimal
// prices with the probability they imply (a contract's price in cents is that probability). Contracts on futures
// and event markets (events without teams) are listed too: their rows carry `event_title` instead of
// `home_team` and `away_team`, and an outright contract names its `selection` with `outcome` Yes or No.

import { BOOKMAKERS, MARKETS } from '../../engine/catalogue.js';
import { OUTRIGHT_MARKET, outcomeLabel } from '../../engine/ingest.js';
import { decimalToAmerican, tidy } from '../../engine/odds.js';
import type { Route } from '../router.js';
import { compile } from '../serialize.js';
import { isoMillis, isoSeconds, type Services } from '../services.js';
import { outcomePoint } from '../ws/frames.js';
import { sportKeys } from './discovery.js';
import { cmp } from '../../engine/compare.js';

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const RowSchema = {
  type: 'object',
  properties: {
    event_id: str, sport_key: str, commence_time: str,
    home_team: { type: 'string', description: 'absent on futures and event markets' },
    away_team: { type: 'string', description: 'absent on futures and event markets' },
    event_title: { type: 'string', description: 'the name of a futures or event-market event; absent on games' },
    book: str, market: str,
    outcome: { type: 'string', description: 'a team, Draw, Over or Under; Yes or No on outrights' },
    selection: { type: 'string', description: 'outrights only: the selection the Yes or No contract is on' },
    point: { type: ['number', 'null'] }, player: { type: ['string', 'null'] }, price: num,
    price_american: { type: 'integer' }, implied_prob: num, last_update: str,
  },
} as const;
const rowsJson = compile({ type: 'array', items: RowSchema });
const PREDICTION = new Set(BOOKMAKERS.flatMap((b, i) => (b.kind === 'prediction' ? [i] : [])));

export function predictionRoutes(s: Services): Route[] {
  const rm = s.hub.readModel;
  return [{
    method: 'GET',
    path: '/v1/prediction-markets/{sport_key}',
    auth: 'key',
    tag: 'odds',
    summary: "Prediction-market books' contracts as decimal prices with their implied probability",
    params: [{ name: 'include_live', type: 'boolean', default: false, description: 'Include games and event markets already started (futures are listed until final, started or not)' }],
    cost: () => 3,
    response: { type: 'array', items: RowSchema },
    handle: (ctx) => {
      const rows = [];
      for (const key of sportKeys(ctx.args[0])) {
        for (const ev of rm.sportEvents(key)) {
          // a season-long future keeps trading once its season has started
          if (ev.status === 'final' || (ev.kind !== 'futures' && ev.commence <= ctx.now && ctx.params.include_live !== true)) continue;
          const head = ev.kind === 'game'
            ? { event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), home_team: ev.home, away_team: ev.away }
            : { event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), event_title: ev.title ?? '' };
          for (const r of ev.records) {
            const book = rm.book(r);
            // a venue's own inconsistent two-way pair (moneyline, or an outright's Yes and No) is held back, as /odds
            // and every analytics view hold it back
            if (!PREDICTION.has(book) || !rm.consistent(r)) continue;
            const market = rm.market(r);
            for (let o = 0; o < 3; o++) {
              const price = rm.price(r, o);
              if (price === 0) continue;
              const player = rm.player(r);
              const outright = market === OUTRIGHT_MARKET;
              const name = player < 0 ? null : s.hub.players.name(player);
              rows.push({
                ...head,
                book: BOOKMAKERS[book].key, market: MARKETS[market].key,
                outcome: outcomeLabel(ev, market, o),
                selection: outright ? name ?? undefined : undefined,
                point: outcomePoint(market, rm.point(r), o), player: outright ? null : name, price,
                price_american: decimalToAmerican(price), implied_prob: tidy(1 / price),
                last_update: isoMillis(Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o))), _t: ev.commence,
              });
            }
          }
        }
      }
      rows.sort((a, b) => a._t - b._t || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0)
        || (a.book < b.book ? -1 : a.book > b.book ? 1 : 0) || cmp(a.selection ?? '', b.selection ?? '')
        || cmp(a.player ?? '', b.player ?? '') || cmp(a.market, b.market) || cmp(a.outcome, b.outcome));
      return { status: 200, body: rowsJson(rows) };
    },
  }];
}
