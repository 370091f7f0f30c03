-- Saved verdict preferences per API key: the region and the books a caller's verdicts consider by default.
create table if not exists verdict_prefs (
  key_id bigint primary key references api_keys(id) on delete cascade,
  region text,
  books text[],
  updated_at timestamptz not null default now()
);
