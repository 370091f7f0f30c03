// GET /v1/prediction-markets/{sport_key}: prediction-market books' contracts on the sport's events, as decimal
// prices with the probability they imply (a contract's price in cents is that probability).

import { BOOKMAKERS, MARKETS } from '../../engine/catalogue.js';
import { decimalToAmerican } from '../../engine/odds.js';
import type { Route } from '../router.js';
import { compile } from '../serialize.js';
import { isoMillis, isoSeconds, type Services } from '../services.js';
import { outcomeName, outcomePoint } from '../ws/frames.js';
import { sportKeys } from './discovery.js';

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const RowSchema = {
  type: 'object',
  properties: {
    event_id: str, sport_key: str, commence_time: str, home_team: str, away_team: str, book: str, market: str,
    outcome: str, point: { type: ['number', 'null'] }, player: { type: ['string', 'null'] }, price: num,
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
    params: [{ name: 'include_live', type: 'boolean', default: false, description: 'Include games already started' }],
    cost: () => 3,
    response: { type: 'array', items: RowSchema },
    handle: (ctx) => {
      const rows = [];
      for (const key of sportKeys(ctx.args[0])) {
        for (const ev of rm.sportEvents(key)) {
          if (ev.status === 'final' || (ev.commence <= ctx.now && ctx.params.include_live !== true)) continue;
          for (const r of ev.records) {
            const book = rm.book(r);
            if (!PREDICTION.has(book)) continue;
            const market = rm.market(r);
            for (let o = 0; o < 3; o++) {
              const price = rm.price(r, o);
              if (price === 0) continue;
              const player = rm.player(r);
              rows.push({
                event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), home_team: ev.home, away_team: ev.away,
                book: BOOKMAKERS[book].key, market: MARKETS[market].key, outcome: outcomeName(ev, market, o),
                point: outcomePoint(market, rm.point(r), o), player: player < 0 ? null : s.hub.players.name(player), price,
                price_american: decimalToAmerican(price), implied_prob: 1 / price,
                last_update: isoMillis(Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o))), _t: ev.commence,
              });
            }
          }
        }
      }
      rows.sort((a, b) => a._t - b._t || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0)
        || (a.book < b.book ? -1 : a.book > b.book ? 1 : 0) || (a.outcome < b.outcome ? -1 : 1));
      return { status: 200, body: rowsJson(rows) };
    },
  }];
}
