-- Outbound webhooks (issue 6): subscriptions, the durable outbox of deliveries with every attempt, the
-- notifications to owners, and Idempotency-Key records of POST /v1/webhooks.
--
-- owner_id is the principal that owns a subscription: today the id of the API key that created it; when
-- accounts exist (issue 8) it becomes the account id (a data migration maps each key id to its account).

create table webhooks (
  id bigserial primary key,
  -- Variant B's opaque id (wh_...); null for Variant A, whose id is the integer `id`
  public_id text unique,
  owner_id bigint not null,
  -- the key whose credits pay for deliveries
  billing_key_id bigint not null references api_keys(id) on delete cascade,
  variant text not null check (variant in ('A', 'B')),
  url text not null,
  events text[] not null,
  -- null: every sport
  sport_keys text[],
  -- Variant B filters.min_edge_pct; null: the event type's default threshold
  min_edge_pct double precision,
  format text not null default 'json' check (format in ('json', 'slack', 'discord')),
  secret text not null,
  is_active boolean not null default true,
  consecutive_failures integer not null default 0,
  disabled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhooks_owner on webhooks (owner_id, id);

-- One row per (event, subscription): written before any attempt; `body` is the exact request body every attempt
-- sends, so a retry or a replay after a restart is byte-identical and carries the same delivery_id.
create table webhook_deliveries (
  id bigserial primary key,
  delivery_id text unique not null,
  webhook_id bigint not null references webhooks(id) on delete cascade,
  event_id text not null,
  event_type text not null,
  body text not null,
  status text not null check (status in ('pending', 'retrying', 'delivered', 'failed', 'rate_limited', 'out_of_credits')),
  -- attempts made by the retry schedule (replays are recorded as attempts too, numbered after them)
  attempts integer not null default 0,
  -- when the next attempt is due; null once the delivery is final
  next_attempt_at timestamptz,
  -- events that must reach a subscription once even across restarts (new_event): unique per subscription
  dedupe_key text,
  created_at timestamptz not null default now(),
  delivered_at timestamptz,
  unique (webhook_id, dedupe_key)
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where next_attempt_at is not null;
create index webhook_deliveries_list on webhook_deliveries (webhook_id, id desc);

create table webhook_attempts (
  delivery_pk bigint not null references webhook_deliveries(id) on delete cascade,
  number integer not null,
  attempted_at timestamptz not null,
  status_code integer,
  duration_ms double precision not null,
  error text,
  primary key (delivery_pk, number)
);

-- Messages to owners (auto-disable e-mails). sent_at is set once SMTP accepted it; without SMTP_URL the row is
-- the record.
create table notifications (
  id bigserial primary key,
  owner_id bigint not null,
  channel text not null default 'email',
  recipient text,
  subject text not null,
  body text not null,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  error text
);

-- POST /v1/webhooks with Idempotency-Key: the first answer, replayed for 24 hours to the same owner and body.
create table idempotency_keys (
  owner_id bigint not null,
  key text not null,
  request_hash text not null,
  status integer not null,
  response text not null,
  created_at timestamptz not null default now(),
  primary key (owner_id, key)
);
