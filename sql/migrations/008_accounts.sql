-- Accounts (issue 8): an account (e-mail, tier, credit balance, billing period) owns one or more API keys.
-- The balance, tier and period move from api_keys to accounts; per-endpoint usage of each period, one-time login
-- tokens (magic links, claim links) and the payment-provider ids of a paid account live beside it.

create table accounts (
  id bigserial primary key,
  email text,
  tier text not null,
  credits_remaining bigint not null check (credits_remaining >= 0),
  credits_used bigint not null default 0 check (credits_used >= 0),
  period_start timestamptz not null,
  period_end timestamptz not null check (period_end > period_start),
  intended_use text,
  agent_id text,
  payment_customer_id text,
  payment_subscription_id text,
  claimed_at timestamptz,
  created_at timestamptz not null default now(),
  last_request_at timestamptz
);
-- one account per e-mail address, whatever its case
create unique index accounts_email on accounts (lower(email)) where email is not null;

-- Data migration: every existing key becomes an account of its own with the same id (so webhook owner ids,
-- which were key ids, are already account ids); an e-mail shared by several keys stays on the first of them.
insert into accounts (id, email, tier, credits_remaining, credits_used, period_start, period_end, created_at, last_request_at)
select k.id,
       case when k.email is not null and k.id = (select min(k2.id) from api_keys k2 where lower(k2.email) = lower(k.email))
            then k.email end,
       k.tier, k.credits_remaining, k.credits_used, k.period_start, k.period_end, k.created_at, k.last_request_at
from api_keys k;
select setval(pg_get_serial_sequence('accounts', 'id'), coalesce((select max(id) from accounts), 1),
              (select count(*) > 0 from accounts));

alter table api_keys add column account_id bigint references accounts(id) on delete cascade;
update api_keys set account_id = id;
alter table api_keys alter column account_id set not null;
create index api_keys_account on api_keys (account_id, id);
alter table api_keys
  drop column tier,
  drop column email,
  drop column credits_remaining,
  drop column credits_used,
  drop column period_start,
  drop column period_end;

-- owner_id of webhooks, their idempotency records and notifications is now the account id
update webhooks w set owner_id = k.account_id from api_keys k where k.id = w.owner_id;
update idempotency_keys i set owner_id = k.account_id from api_keys k where k.id = i.owner_id;
update notifications n set owner_id = k.account_id from api_keys k where k.id = n.owner_id;

-- Credits and calls per endpoint template (e.g. 'GET /v1/sports/{sport_key}/odds', 'webhook delivery') in one
-- billing period, written with the balances (absolute values, at least every second).
create table account_usage (
  account_id bigint not null references accounts(id) on delete cascade,
  period_start timestamptz not null,
  endpoint text not null,
  calls bigint not null check (calls >= 0),
  credits bigint not null check (credits >= 0),
  primary key (account_id, period_start, endpoint)
);

-- One-time tokens: `login` (magic link: issues a new key) and `claim` (the sign-up's claim link: a person takes
-- the agent's account). Only sha256(token) is kept. A magic-link request for an address without an account is
-- recorded too (account_id and token_hash null), by the hash of the address, so both answers do the same work.
create table login_tokens (
  id bigserial primary key,
  account_id bigint references accounts(id) on delete cascade,
  purpose text not null check (purpose in ('login', 'claim')),
  token_hash text unique,
  email_hash text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index login_tokens_email on login_tokens (email_hash, created_at);
