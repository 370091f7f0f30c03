-- Closing lines (issue 7): the pregame state of events not yet started, persisted often enough that an event
-- starting while the process is down is captured at the next start, and the captured closing snapshots.

create table if not exists history_events (
  event_id text primary key,
  sport_key text not null,
  commence_time timestamptz not null,
  home_team text,
  away_team text,
  captured_at timestamptz
);
create index if not exists history_events_open on history_events (commence_time) where captured_at is null;

-- the last pregame quote of each (event, market, player, book, outcome); player '' when none
create table if not exists pregame_quotes (
  event_id text not null,
  market_key text not null,
  player text not null,
  book text not null,
  outcome smallint not null,
  point double precision,
  price double precision not null,
  written_at timestamptz not null,
  primary key (event_id, market_key, player, book, outcome)
);

-- observed closing snapshots: one row per (event, source, market, player) as SPEC's closing-line row
create table if not exists closing_lines (
  id bigserial primary key,
  game_date date not null,
  sport_key text not null,
  event_id text not null,
  commence_time timestamptz not null,
  home_team text,
  away_team text,
  source text not null,
  player_name text not null default '',  -- '' on game markets (served as null)
  market_key text not null,
  market_label text not null,
  line double precision,
  over_price double precision,
  under_price double precision,
  snapshot_time timestamptz not null,
  captured_at timestamptz not null default now(),
  unique (event_id, source, market_key, player_name)
);
create index if not exists closing_lines_day on closing_lines (game_date, sport_key, source, id);
create index if not exists closing_lines_sport on closing_lines (sport_key, commence_time);
