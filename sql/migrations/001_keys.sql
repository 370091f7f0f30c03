-- API keys and their credit balances. Only the sha256 of a key is stored; `prefix` identifies it in listings.
create table api_keys (
  id bigserial primary key,
  key_hash text unique not null,
  prefix text not null,
  tier text not null,
  email text,
  credits_remaining bigint not null check (credits_remaining >= 0),
  credits_used bigint not null default 0,
  period_start timestamptz not null default now(),
  period_end timestamptz not null,
  created_at timestamptz not null default now(),
  last_request_at timestamptz,
  revoked_at timestamptz
);

-- Small named values that must survive a restart (e.g. the hash of the generated admin key).
create table settings (
  name text primary key,
  value text not null,
  updated_at timestamptz not null default now()
);
