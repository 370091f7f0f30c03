-- Events the webhook evaluator has tracked (seen a price of), so that new_event ("finds an event not previously
-- tracked", SPEC) is announced once in the life of an event, not again after every restart to the subscriptions
-- made since it was first seen. Kept as long as the webhook outbox's retention (WEBHOOK_RETENTION_DAYS).
create table webhook_tracked_events (
  event_id text primary key,
  first_seen_at timestamptz not null
);
create index webhook_tracked_events_seen on webhook_tracked_events (first_seen_at);
