// GET /v1/sports, /v1/bookmakers, /v1/sports/{sport_key}/events.

import { BOOKMAKERS, SPORTS, resolveSportKeys, sportByKey } from '../../engine/catalogue.js';
import { ApiError } from '../../engine/errors.js';
import type { BookDef } from '../../engine/types.js';
import type { Reply, RequestCtx, Route } from '../router.js';
import { AnyTime, BookmakerListSchema, EventListSchema, IsoTime, SportListSchema, UnixTime } from '../schemas.js';
import { invalid } from '../params.js';
import { compile, etagMatches, etagOf } from '../serialize.js';
import { isoSeconds, type Services } from '../services.js';

interface StaticBody {
  body: string;
  etag: string;
}

function staticBody(body: string): StaticBody {
  return { body, etag: etagOf(body) };
}

/** `private` for answers to keyed requests: they carry the key's usage headers, and a shared cache must not hand
 *  them to a client without a key (RFC 9111 section 3.5: `public` lets a shared cache store an authorised answer). */
function cachedReply(ctx: RequestCtx, b: StaticBody, maxAge: number, scope: 'public' | 'private' = 'public'): Reply {
  const headers: [string, string][] = [['ETag', b.etag], ['Cache-Control', `${scope}, max-age=${maxAge}`]];
  // a shared cache keeps the keyless answer apart from a keyed request's, which must reach the service for its
  // usage headers (a key in the query is part of the URL already)
  if (scope === 'public') headers.push(['Vary', 'X-API-Key, Authorization']);
  if (etagMatches(ctx.ifNoneMatch, b.etag)) return { status: 304, body: '', headers };
  return { status: 200, body: b.body, headers };
}

const sportsJson = compile(SportListSchema);
const SPORTS_ACTIVE = staticBody(sportsJson(SPORTS.filter((s) => s.active)));
const SPORTS_ALL = staticBody(sportsJson(SPORTS));

const ENDPOINT_PATHS: Record<string, (key: string) => string> = {
  game_lines: (k) => `/v1/sports/{sport_key}/odds?bookmakers=${k}`,
  live: (k) => `/v1/sports/{sport_key}/live?bookmakers=${k}`,
  props: (k) => `/v1/sports/{sport_key}/props?bookmakers=${k}`,
  prediction: () => '/v1/prediction-markets/{sport_key}',
  event_markets: (k) => `/v1/sports/{sport_key}/props?bookmakers=${k}&include_event_markets=true`,
  historical: (k) => `/v1/historical/closing-lines.json?date={YYYY-MM-DD}&source=${k}`,
};

function bookRecord(b: BookDef, endpoints: boolean): object {
  return {
    key: b.key,
    title: b.title,
    kind: b.kind,
    regions: b.regions,
    status: b.status,
    merged_into: b.merged_into,
    note: b.note,
    commission: b.commission > 0 ? b.commission : undefined,
    trading_fee_rate: b.trading_fee_rate > 0 ? b.trading_fee_rate : undefined,
    endpoints: endpoints ? b.endpoints : undefined,
    example_paths: endpoints ? b.endpoints.map((e) => ENDPOINT_PATHS[e](b.key)) : undefined,
  };
}

const booksJson = compile(BookmakerListSchema);
const BOOKS: Record<string, StaticBody> = {};
for (const all of [false, true]) {
  for (const ep of [false, true]) {
    const list = BOOKMAKERS.filter((b) => all || b.status === 'active').map((b) => bookRecord(b, ep));
    BOOKS[`${all}:${ep}`] = staticBody(booksJson(list));
  }
}

const eventsIso = compile(EventListSchema(IsoTime));
const eventsUnix = compile(EventListSchema(UnixTime));

/** Resolves a path sport key (concrete or umbrella) or throws 404 UNKNOWN_SPORT. */
export function sportKeys(key: string): string[] {
  const keys = resolveSportKeys(key);
  if (keys === null) throw new ApiError('UNKNOWN_SPORT', `Unknown sport key ${JSON.stringify(key)}; see /v1/sports?all=true`);
  return keys;
}

export function discoveryRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/sports',
      auth: 'optional',
      tag: 'discovery',
      summary: 'Sports in the catalogue (active only unless all=true)',
      params: [{ name: 'all', type: 'boolean', default: false, description: 'Include sports out of season' }],
      response: SportListSchema,
      responseHeaders: ['ETag', 'Cache-Control'],
      // with a key the answer carries its balance: no shared cache may keep it
      handle: (ctx) => cachedReply(ctx, ctx.params.all ? SPORTS_ALL : SPORTS_ACTIVE, 3600, ctx.key === null ? 'public' : 'private'),
    },
    {
      method: 'GET',
      path: '/v1/bookmakers',
      auth: 'key',
      tag: 'discovery',
      summary: 'Bookmakers, exchanges, prediction markets and DFS operators',
      params: [
        { name: 'all', type: 'boolean', default: false, description: 'Include merged, decommissioned and not yet integrated entries with their notes' },
        { name: 'include_endpoints', type: 'boolean', default: true, description: 'Attach endpoints and example_paths per book' },
      ],
      cost: () => 0,
      response: BookmakerListSchema,
      responseHeaders: ['ETag', 'Cache-Control'],
      handle: (ctx) => cachedReply(ctx, BOOKS[`${ctx.params.all}:${ctx.params.include_endpoints}`], 3600, 'private'),
    },
    {
      method: 'GET',
      path: '/v1/sports/{sport_key}/events',
      auth: 'optional',
      tag: 'discovery',
      summary: 'Upcoming and in-play events of a sport (no odds)',
      params: [
        { name: 'dateFormat', type: 'enum', values: ['iso', 'unix'], default: 'iso', description: 'Format of commence_time' },
        { name: 'eventIds', type: 'csv', maxItems: 500, description: 'Only these event ids' },
        { name: 'commenceTimeFrom', type: 'datetime', description: 'Events starting at or after (ISO 8601)' },
        { name: 'commenceTimeTo', type: 'datetime', description: 'Events starting at or before (ISO 8601)' },
      ],
      response: EventListSchema(AnyTime),
      responseHeaders: ['Cache-Control'],
      handle: (ctx) => {
        const keys = sportKeys(ctx.args[0]);
        const p = ctx.params;
        const ids = p.eventIds === undefined ? null : new Set(p.eventIds as string[]);
        const from = p.commenceTimeFrom === undefined ? -Infinity : Date.parse(p.commenceTimeFrom as string);
        const to = p.commenceTimeTo === undefined ? Infinity : Date.parse(p.commenceTimeTo as string);
        // the input as sent (the parameter holds it normalised to ISO 8601), as /odds echoes it
        if (from > to) invalid('commenceTimeTo', 'is before commenceTimeFrom', ctx.query.get('commenceTimeTo') ?? p.commenceTimeTo);
        const unix = p.dateFormat === 'unix';
        const list = [];
        for (const key of keys) {
          const title = sportByKey(key)!.title;
          for (const ev of s.hub.readModel.sportEvents(key)) {
            // every event /odds serves: futures and event markets too (a v4 client lists a futures sport's events, then
            // asks for each one's odds), without teams and with their title, as /odds?markets=outrights gives them
            if (ev.status === 'final' || (ids !== null && !ids.has(ev.id)) || ev.commence < from || ev.commence > to) continue;
            const game = ev.kind === 'game';
            list.push({
              id: ev.id,
              sport_key: key,
              sport_title: title,
              commence_time: unix ? Math.floor(ev.commence / 1000) : isoSeconds(ev.commence),
              home_team: game ? ev.home : null,
              away_team: game ? ev.away : null,
              event_title: game ? undefined : ev.title ?? '',
              _t: ev.commence,
            });
          }
        }
        list.sort((a, b) => a._t - b._t || (a.id < b.id ? -1 : 1));
        // an answer to a keyed request carries the key's balance: no shared cache may keep it (as /v1/sports); the
        // list moves with every ingest, so no cache serves it unchecked either way
        return { status: 200, body: unix ? eventsUnix(list) : eventsIso(list), headers: [['Cache-Control', ctx.key === null ? 'no-cache' : 'private, no-cache']] };
      },
    },
  ];
}
