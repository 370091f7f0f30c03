// Closing-line history: the persisted pregame state of events not yet captured, the capture itself, and the
// export queries (streamed with a cursor, never read whole).

import { BOOK_INDEX, MARKET_INDEX } from '../engine/ingest.js';
import { BOOKMAKERS, MARKETS } from '../engine/catalogue.js';
import type { ClosingRow, EventMeta, PregameQuote } from '../engine/closing.js';
import type { Database } from './connection.js';

/** rows per INSERT statement: one JSON parameter, whatever the count (bounds the statement's size) */
const INSERT_CHUNK = 2000;

// Every multi-row write here passes its rows as one JSON array (json_to_recordset), so its statement text is the
// same whatever the number of rows. postgres.js prepares each distinct text once per connection and keeps it for
// the connection's life: a VALUES list per row count made a new prepared statement (of up to 16,000 parameters) at
// nearly every pregame save, and the embedded database's one session grew by about 1 MB every 15 s without end
// (the soak audit; test/sql-prepared-statements.test.ts).

const iso = (ms: number) => new Date(ms).toISOString();

export async function upsertHistoryEvents(db: Database, metas: readonly EventMeta[]): Promise<void> {
  for (let i = 0; i < metas.length; i += INSERT_CHUNK) {
    const rows = JSON.stringify(metas.slice(i, i + INSERT_CHUNK).map((m) => ({
      i: m.id, s: m.sport, c: iso(m.commence), h: m.home, a: m.away, z: m.simulated === true,
    })));
    await db.sql`insert into history_events (event_id, sport_key, commence_time, home_team, away_team, simulated)
      select v.i, v.s, v.c, v.h, v.a, v.z from json_to_recordset(${rows}::text::json) as v(i text, s text, c timestamptz, h text, a text, z boolean)
      on conflict (event_id) do update set sport_key = excluded.sport_key, commence_time = excluded.commence_time,
        home_team = excluded.home_team, away_team = excluded.away_team, simulated = excluded.simulated
      -- a captured event keeps the start it was captured at until captured again (captureClosing compares them)
      where history_events.captured_at is null`;
  }
}

export async function upsertPregame(db: Database, quotes: readonly { eventId: string; q: PregameQuote }[]): Promise<void> {
  for (let i = 0; i < quotes.length; i += INSERT_CHUNK) {
    const rows = JSON.stringify(quotes.slice(i, i + INSERT_CHUNK).map(({ eventId, q }) => ({
      e: eventId, m: MARKETS[q.market].key, p: q.player, b: BOOKMAKERS[q.book].key, o: q.outcome,
      x: Number.isNaN(q.point) ? null : q.point, d: q.price, w: iso(q.ts),
    })));
    await db.sql`insert into pregame_quotes (event_id, market_key, player, book, outcome, point, price, written_at)
      select v.e, v.m, v.p, v.b, v.o, v.x, v.d, v.w
      from json_to_recordset(${rows}::text::json) as v(e text, m text, p text, b text, o smallint, x double precision, d double precision, w timestamptz)
      on conflict (event_id, market_key, player, book, outcome) do update set point = excluded.point, price = excluded.price,
        written_at = excluded.written_at where pregame_quotes.written_at <= excluded.written_at`;
  }
}

/** An event not captured that will not be (made final before its start: a cancelled game): its pregame state goes. */
export async function dropOpenEvent(db: Database, eventId: string): Promise<void> {
  await db.sql.begin(async (tx) => {
    await tx`delete from pregame_quotes where event_id = ${eventId}`;
    await tx`delete from history_events where event_id = ${eventId} and captured_at is null`;
  });
}

export interface OpenEvent {
  meta: EventMeta;
  quotes: PregameQuote[];
}

/** Events not captured yet, with their persisted pregame quotes (catalogue keys no longer known are skipped). */
export async function loadOpenEvents(db: Database): Promise<OpenEvent[]> {
  const events = await db.sql<{ event_id: string; sport_key: string; commence_time: Date; home_team: string | null; away_team: string | null; simulated: boolean }[]>`
    select event_id, sport_key, commence_time, home_team, away_team, simulated from history_events where captured_at is null`;
  const byId = new Map<string, OpenEvent>();
  for (const e of events) {
    byId.set(e.event_id, { meta: { id: e.event_id, sport: e.sport_key, commence: e.commence_time.getTime(), home: e.home_team, away: e.away_team, simulated: e.simulated }, quotes: [] });
  }
  if (byId.size === 0) return [];
  const quotes = await db.sql<{ event_id: string; market_key: string; player: string; book: string; outcome: number; point: number | null; price: number; written_at: Date }[]>`
    select q.event_id, q.market_key, q.player, q.book, q.outcome, q.point, q.price, q.written_at
    from pregame_quotes q join history_events e on e.event_id = q.event_id where e.captured_at is null`;
  for (const r of quotes) {
    const market = MARKET_INDEX.get(r.market_key);
    const book = BOOK_INDEX.get(r.book);
    const ev = byId.get(r.event_id);
    if (market === undefined || book === undefined || ev === undefined) continue;
    ev.quotes.push({ market, player: r.player, book, outcome: r.outcome, point: r.point ?? Number.NaN, price: r.price, ts: r.written_at.getTime() });
  }
  return [...byId.values()];
}

/**
 * Claims an event's capture and writes its closing rows, marks it captured and drops its pregame state, in one
 * transaction; false when the event was captured already (by another node of a cluster, or before a restart):
 * nothing is written then but the pregame state is dropped. The claim is the history_events row: setting its
 * captured_at from null locks it, so a second node capturing at the same moment waits for the first to commit and
 * then finds it captured. One capture per event, never a mix of two nodes' rows.
 */
export async function captureClosing(db: Database, meta: EventMeta, rows: readonly ClosingRow[], at: number): Promise<boolean> {
  const gameDate = new Date(meta.commence).toISOString().slice(0, 10);
  return db.sql.begin(async (tx) => {
    const simulated = meta.simulated === true;
    // captured once; again only when the event's start moved later than the start it was captured at (a game delayed
    // after its planned start, pregame again: its close is the one before the new start), the old rows replaced
    const claimed = await tx`insert into history_events (event_id, sport_key, commence_time, home_team, away_team, captured_at, simulated)
      values (${meta.id}, ${meta.sport}, ${new Date(meta.commence)}, ${meta.home}, ${meta.away}, ${new Date(at)}, ${simulated})
      on conflict (event_id) do update set captured_at = excluded.captured_at, commence_time = excluded.commence_time,
        sport_key = excluded.sport_key, home_team = excluded.home_team, away_team = excluded.away_team
      where history_events.captured_at is null or history_events.commence_time < excluded.commence_time
      returning event_id`;
    if (claimed.length === 1) {
      await tx`delete from closing_lines where event_id = ${meta.id}`;
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        const chunk = JSON.stringify(rows.slice(i, i + INSERT_CHUNK).map((r) => ({
          s: r.source, p: r.player_name, k: r.market_key, l: r.market_label, x: r.line, o: r.over_price, u: r.under_price,
          t: iso(r.snapshot_time),
        })));
        await tx`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team, source, player_name,
            market_key, market_label, line, over_price, under_price, snapshot_time, simulated)
          select ${gameDate}::date, ${meta.sport}, ${meta.id}, ${new Date(meta.commence)}, ${meta.home}, ${meta.away}, v.s, v.p,
            v.k, v.l, v.x, v.o, v.u, v.t, ${simulated}
          from json_to_recordset(${chunk}::text::json)
            as v(s text, p text, k text, l text, x double precision, o double precision, u double precision, t timestamptz)
          on conflict (event_id, source, market_key, player_name) do nothing`;
      }
    }
    await tx`delete from pregame_quotes where event_id = ${meta.id}`;
    return claimed.length === 1;
  });
}

export interface ClosingFilter {
  /** one game day (UTC) */
  date?: string;
  /** commence_time at or after (ms) */
  from?: number;
  /** commence_time before (ms) */
  to?: number;
  sports?: readonly string[];
  sources?: readonly string[];
  limit: number;
}

/** a stored closing row as exported (timestamps as ISO strings, player '' as stored) */
export interface StoredClosing {
  /** bigint as text: the keyset of the export pages */
  id: string;
  game_date: string;
  sport_key: string;
  commence_time: Date;
  home_team: string | null;
  away_team: string | null;
  source: string;
  player_name: string;
  market_key: string;
  market_label: string;
  line: number | null;
  over_price: number | null;
  under_price: number | null;
  snapshot_time: Date;
  /** captured from an event of the built-in simulator: no bookmaker's observed price */
  simulated: boolean;
}

function where(db: Database, f: ClosingFilter) {
  const sql = db.sql;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  // game_date is the UTC day of commence_time: a time range also bounds the days, which the index leads with
  return sql`where true
    ${f.date !== undefined ? sql`and game_date = ${f.date}` : sql``}
    ${f.from !== undefined ? sql`and commence_time >= ${new Date(f.from)} and game_date >= ${day(f.from)}` : sql``}
    ${f.to !== undefined ? sql`and commence_time < ${new Date(f.to)} and game_date <= ${day(f.to)}` : sql``}
    ${f.sports !== undefined ? sql`and sport_key = any(${sql.array(f.sports as string[])}::text[])` : sql``}
    ${f.sources !== undefined ? sql`and source = any(${sql.array(f.sources as string[])}::text[])` : sql``}`;
}

/** How many rows an export will deliver (at most the limit). */
export async function countClosing(db: Database, f: ClosingFilter): Promise<number> {
  const [r] = await db.sql<{ n: string }[]>`select count(*) as n from (select 1 from closing_lines ${where(db, f)} limit ${f.limit}) x`;
  return Number(r.n);
}

/** The rows of an export in a stable order (the closing_lines_day index: no sort), yielded `pageSize` at a time,
 *  at most `total` rows. Read `queryRows` per query, each from where the last one ended (keyset on the index's
 *  columns), not through a cursor: a cursor holds its connection until the export ends, and in embedded mode (one
 *  PostgreSQL session) every other query of the process waited behind a client reading slowly. A query costs
 *  PGlite tens of milliseconds however few its rows, hence several pages per query. Each query is run through
 *  `around` (the admission of heavy queries, http/admission.ts). */
export async function* closingPages(db: Database, f: ClosingFilter, pageSize: number, total: number,
  around: <T>(query: () => PromiseLike<T>) => Promise<T> = async (query) => query(), queryRows = pageSize * 10): AsyncGenerator<StoredClosing[]> {
  const sql = db.sql;
  let after: StoredClosing | null = null;
  let left = Math.min(total, f.limit);
  while (left > 0) {
    const n = Math.min(queryRows, left);
    const from: StoredClosing | null = after;
    // ordered by the column, not by the output name game_date (its text form), so the index gives the order: by
    // the text form every query sorted the rest of the day (45 s against 4 s for 500,000 rows)
    const rows: StoredClosing[] = await around(() => sql<StoredClosing[]>`
      select id, to_char(game_date, 'YYYY-MM-DD') as game_date, sport_key, commence_time, home_team, away_team, source,
        player_name, market_key, market_label, line, over_price, under_price, snapshot_time, simulated
      from closing_lines ${where(db, f)}
      ${from === null ? sql`` : sql`and (closing_lines.game_date, sport_key, source, id) > (${from.game_date}::date, ${from.sport_key}, ${from.source}, ${from.id}::bigint)`}
      order by closing_lines.game_date, sport_key, source, id
      limit ${n}`);
    if (rows.length === 0) return;
    left -= rows.length;
    after = rows[rows.length - 1];
    for (let i = 0; i < rows.length; i += pageSize) yield rows.slice(i, i + pageSize);
    if (rows.length < n) return;
  }
}

export interface SourceCoverage {
  source: string;
  rows: number;
  priced_rows: number;
  /** rows captured from the built-in simulator's events: no bookmaker's observed price */
  simulated_rows: number;
  first_date: string;
  last_date: string;
}

/** Per source: closing rows of the sports between two game days (inclusive), rows with every side priced (a
 *  three-way line's draw row has one side: priced when it is), and the first and last game day held. */
export async function coverageBySource(db: Database, sports: readonly string[], from: string | undefined, to: string | undefined): Promise<SourceCoverage[]> {
  const sql = db.sql;
  const rows = await sql<{ source: string; rows: string; priced_rows: string; simulated_rows: string; first_date: string; last_date: string }[]>`
    select source, count(*) as rows, count(*) filter (where over_price is not null
      and (under_price is not null or (market_key = 'h2h_3_way' and player_name = 'Draw'))) as priced_rows,
      count(*) filter (where simulated) as simulated_rows,
      to_char(min(game_date), 'YYYY-MM-DD') as first_date, to_char(max(game_date), 'YYYY-MM-DD') as last_date
    from closing_lines where sport_key = any(${sql.array(sports as string[])}::text[])
      ${from !== undefined ? sql`and game_date >= ${from}` : sql``} ${to !== undefined ? sql`and game_date <= ${to}` : sql``}
    group by source order by source`;
  return rows.map((r) => ({
    source: r.source, rows: Number(r.rows), priced_rows: Number(r.priced_rows), simulated_rows: Number(r.simulated_rows), first_date: r.first_date, last_date: r.last_date,
  }));
}

export interface SportCoverage {
  sport_key: string;
  rows: number;
  /** rows captured from the built-in simulator's events */
  simulated_rows: number;
  events: number;
  sources: number;
  first_date: string;
  last_date: string;
}

export async function coverageBySport(db: Database): Promise<SportCoverage[]> {
  const rows = await db.sql<{ sport_key: string; rows: string; simulated_rows: string; events: string; sources: string; first_date: string; last_date: string }[]>`
    select sport_key, count(*) as rows, count(*) filter (where simulated) as simulated_rows, count(distinct event_id) as events, count(distinct source) as sources,
      to_char(min(game_date), 'YYYY-MM-DD') as first_date, to_char(max(game_date), 'YYYY-MM-DD') as last_date
    from closing_lines group by sport_key order by sport_key`;
  return rows.map((r) => ({
    sport_key: r.sport_key, rows: Number(r.rows), simulated_rows: Number(r.simulated_rows), events: Number(r.events), sources: Number(r.sources),
    first_date: r.first_date, last_date: r.last_date,
  }));
}

export interface MatchRow {
  event_id: string;
  sport_key: string;
  game_date: string;
  commence_time: Date;
  home_team: string | null;
  away_team: string | null;
  rows: number;
  sources: number;
  /** captured from a built-in simulator's event */
  simulated: boolean;
}

/** Captured events of the sports between two game days (inclusive), earliest first. */
export async function matches(db: Database, sports: readonly string[], from: string, to: string, limit: number): Promise<MatchRow[]> {
  const sql = db.sql;
  const rows = await sql<(Omit<MatchRow, 'rows' | 'sources'> & { rows: string; sources: string })[]>`
    select event_id, sport_key, to_char(game_date, 'YYYY-MM-DD') as game_date, commence_time, home_team, away_team,
      count(*) as rows, count(distinct source) as sources, bool_or(simulated) as simulated
    from closing_lines where sport_key = any(${sql.array(sports as string[])}::text[]) and game_date >= ${from} and game_date <= ${to}
    group by event_id, sport_key, game_date, commence_time, home_team, away_team
    order by commence_time, event_id limit ${limit}`;
  return rows.map((r) => ({ ...r, rows: Number(r.rows), sources: Number(r.sources) }));
}

/** first and last game day held for the sports, null when none */
export async function heldRange(db: Database, sports: readonly string[]): Promise<{ first: string; last: string } | null> {
  const [r] = await db.sql<{ first: string | null; last: string | null }[]>`
    select to_char(min(game_date), 'YYYY-MM-DD') as first, to_char(max(game_date), 'YYYY-MM-DD') as last
    from closing_lines where sport_key = any(${db.sql.array(sports as string[])}::text[])`;
  return r.first === null || r.last === null ? null : { first: r.first, last: r.last };
}
