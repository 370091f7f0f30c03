// GET /v1/sports/{sport_key}/probable-pitchers: the announced starting pitchers of baseball events (from ingest
// events; the simulator supplies them for MLB).

import { sportByKey } from '../../engine/catalogue.js';
import { ApiError } from '../../engine/errors.js';
import type { Route } from '../router.js';
import { ProbablePitchersSchema } from '../schemas.js';
import { compile } from '../serialize.js';
import { isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';

const str = { type: 'string' } as const;
const RowSchema = {
  type: 'object',
  properties: { event_id: str, sport_key: str, commence_time: str, home_team: str, away_team: str, probable_pitchers: ProbablePitchersSchema },
} as const;
const rowsJson = compile({ type: 'array', items: RowSchema });

export function pitcherRoutes(s: Services): Route[] {
  return [{
    method: 'GET',
    path: '/v1/sports/{sport_key}/probable-pitchers',
    auth: 'key',
    tag: 'discovery',
    summary: 'Baseball events with their announced starting pitchers (name, person id), venue and game status',
    cost: () => 0,
    response: { type: 'array', items: RowSchema },
    handle: (ctx) => {
      const keys = sportKeys(ctx.args[0]).filter((k) => sportByKey(k)?.family === 'baseball');
      if (keys.length === 0) throw new ApiError('UNKNOWN_SPORT', `${ctx.args[0]} is not a baseball sport`);
      const rows = [];
      for (const key of keys) {
        for (const ev of s.hub.readModel.sportEvents(key)) {
          if (ev.status === 'final' || ev.pitchers === null) continue;
          rows.push({ event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), home_team: ev.home, away_team: ev.away, probable_pitchers: ev.pitchers, _t: ev.commence });
        }
      }
      rows.sort((a, b) => a._t - b._t || (a.event_id < b.event_id ? -1 : 1));
      return { status: 200, body: rowsJson(rows) };
    },
  }];
}
