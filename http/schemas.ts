// JSON schemas of every response body. fast-json-stringify compiles them for serialisation and /openapi.json
// publishes them, so the document cannot drift from what is sent.

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const strArr = { type: 'array', items: str } as const;

export const ErrorSchema = {
  type: 'object',
  required: ['message', 'error_code', 'details_url', 'request_id'],
  properties: {
    message: str,
    error_code: str,
    details_url: str,
    request_id: str,
    detail: {
      type: 'array',
      items: {
        type: 'object',
        properties: { loc: { type: 'array', items: {} }, msg: str, type: str, input: {} },
      },
    },
  },
} as const;

export const SportSchema = {
  type: 'object',
  required: ['key', 'group', 'title', 'description', 'active', 'has_outrights'],
  properties: { key: str, group: str, title: str, description: str, active: bool, has_outrights: bool },
} as const;

export const SportListSchema = { type: 'array', items: SportSchema } as const;

export const BookmakerSchema = {
  type: 'object',
  required: ['key', 'title', 'kind', 'regions', 'status'],
  properties: {
    key: str,
    title: str,
    kind: { type: 'string', enum: ['sportsbook', 'exchange', 'prediction', 'dfs'] },
    regions: strArr,
    status: { type: 'string', enum: ['active', 'merged', 'decommissioned', 'not_yet_integrated'] },
    merged_into: str,
    note: str,
    commission: { type: 'number', description: 'commission on net winnings, 0 to 1: an exchange\'s, or a prediction market\'s fee on profits (PredictIt 0.1); absent when none. Arbitrage, EV and verdicts count the book at 1 + (d - 1)(1 - commission)' },
    trading_fee_rate: { type: 'number', description: 'a prediction market\'s fee per contract bought at price P: rate * P * (1 - P) of a $1 contract (Kalshi 0.07); absent when none. Arbitrage, EV and verdicts count the book at d / (1 + rate (1 - 1/d))' },
    endpoints: strArr,
    example_paths: strArr,
  },
} as const;

export const BookmakerListSchema = { type: 'array', items: BookmakerSchema } as const;

function eventSchema(time: object) {
  return {
    type: 'object',
    required: ['id', 'sport_key', 'sport_title', 'commence_time', 'home_team', 'away_team'],
    properties: { id: str, sport_key: str, sport_title: str, commence_time: time, home_team: str, away_team: str },
  } as const;
}

export const EventListSchema = (time: object) => ({
  type: 'array',
  items: {
    ...eventSchema(time),
    properties: {
      ...eventSchema(time).properties,
      // futures and event markets, as /odds?markets=outrights lists them: no teams (null, as v4's futures sports), a title
      home_team: { type: ['string', 'null'] },
      away_team: { type: ['string', 'null'] },
      event_title: { type: 'string', description: 'futures and event markets: what the event is, e.g. "NBA Championship 2026-27"' },
    },
  },
}) as const;

const OutcomeSchema = {
  type: 'object',
  required: ['name', 'price'],
  properties: { name: str, price: num, point: num, description: str },
} as const;

const MarketSchema = (time: object) => ({
  type: 'object',
  required: ['key', 'last_update', 'outcomes'],
  properties: { key: str, last_update: time, outcomes: { type: 'array', items: OutcomeSchema } },
}) as const;

const RawJsonSchema = {
  type: 'object',
  description: 'the book\'s quotes on this event in ingest form, as last received',
  properties: {
    feed: str,
    quotes: {
      type: 'array',
      items: {
        type: 'object',
        properties: { market: str, outcome: str, point: num, player: str, price: num, ts: int },
      },
    },
  },
} as const;

const PitcherSchema = {
  type: ['object', 'null'],
  properties: { name: str, person_id: str },
} as const;

export const ProbablePitchersSchema = {
  type: 'object',
  description: 'baseball events, when known: the announced starting pitchers',
  properties: { home: PitcherSchema, away: PitcherSchema, venue: { type: ['string', 'null'] }, game_status: { type: ['string', 'null'] } },
} as const;

/** The v4 odds event, in the variant a request asks for (DESIGN.md section 3). */
export function oddsEventSchema(opts: { time: object; verification: boolean; rawJson: boolean }) {
  const bookProps: Record<string, object> = {
    key: str,
    title: str,
    last_update: opts.time,
    markets: { type: 'array', items: MarketSchema(opts.time) },
  };
  if (opts.verification) {
    // a time schema's own description (Unix seconds) follows the field's
    const time = (text: string) => {
      const own = (opts.time as { description?: string }).description;
      return { ...opts.time, description: own === undefined ? text : `${text} (${own})` };
    };
    bookProps.verified_at = time('the oldest verification of the prices served: each was last seen by its source, changed or not, at or after this time');
    bookProps.line_changed_at = time('the last move of any price served');
    bookProps.is_current = { ...bool, description: 'true iff verified_at is within the last 5 s: every price served was seen within 5 s' };
  }
  if (opts.rawJson) bookProps.raw_json = RawJsonSchema;
  return {
    type: 'object',
    required: ['id', 'sport_key', 'sport_title', 'commence_time', 'home_team', 'away_team', 'bookmakers'],
    properties: {
      ...eventSchema(opts.time).properties,
      // a futures or event-market event (markets=outrights) has no teams, as v4's futures sports: null, and a title
      home_team: { type: ['string', 'null'] },
      away_team: { type: ['string', 'null'] },
      event_title: { type: 'string', description: 'futures and event markets (markets=outrights): what the event is, e.g. "NBA Championship 2026-27"' },
      probable_pitchers: ProbablePitchersSchema,
      bookmakers: { type: 'array', items: { type: 'object', required: ['key', 'title', 'last_update', 'markets'], properties: bookProps } },
    },
  };
}

/** `include=raw`: ids and raw_json only. */
export const RawOddsEventSchema = {
  type: 'object',
  required: ['id', 'bookmakers'],
  properties: {
    id: str,
    bookmakers: { type: 'array', items: { type: 'object', properties: { key: str, raw_json: RawJsonSchema } } },
  },
} as const;

export const IsoTime = { type: 'string', format: 'date-time' } as const;
export const UnixTime = { type: 'integer', description: 'Unix seconds' } as const;
/** for /openapi.json: a time as dateFormat asks, ISO 8601 (iso, the default) or Unix seconds (unix); the serialisers
 *  compile one variant each */
export const AnyTime = { oneOf: [IsoTime, { type: 'integer', description: 'Unix seconds (dateFormat=unix)' }] } as const;

/** for /openapi.json: the odds events of every variant a request can ask for: dateFormat, include=verification,
 *  slim (no raw_json) or normalized (with it), and include=raw (ids and raw_json only) */
export const OddsDocSchema = {
  type: 'array',
  items: { oneOf: [oddsEventSchema({ time: AnyTime, verification: true, rawJson: true }), RawOddsEventSchema] },
} as const;

export const HealthSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'] },
    reasons: { type: 'array', items: str },
    feed: str,
    simulated: bool,
    database: { type: 'object', properties: { ok: bool, kind: str, latency_ms: num, error: str } },
    data: {
      type: 'object',
      properties: {
        events: int, quotes: int, newest_write: { type: ['string', 'null'] }, newest_write_age_seconds: { type: ['number', 'null'] },
        fresh: { type: ['boolean', 'null'] },
      },
    },
    shards: { type: 'object', properties: { count: int, restarts: int, quotes: { type: 'array', items: int } } },
    nats: {
      type: ['object', 'null'],
      description: 'with NATS_URL: the connection; null without NATS',
      properties: { connected: bool, disconnected_since: { type: ['string', 'null'] } },
    },
    uptime_seconds: num,
    version: str,
  },
} as const;

export const IngestResultSchema = {
  type: 'object',
  required: ['events', 'accepted', 'ignored', 'rejected'],
  properties: {
    events: int,
    accepted: int,
    ignored: int,
    rejected: { type: 'array', items: { type: 'object', properties: { index: int, error_code: str, message: str } } },
    rejected_events: { type: 'array', items: { type: 'object', properties: { index: int, error_code: str, message: str } } },
  },
} as const;

export const AdminKeySchema = {
  type: 'object',
  required: ['key', 'tier', 'credits'],
  properties: { key: str, tier: str, credits: int, email: { type: ['string', 'null'] }, account_id: int, key_id: int, prefix: str },
} as const;

export const ErrorCatalogueSchema = {
  type: 'array',
  items: { type: 'object', properties: { code: str, status: int, message: str } },
} as const;
