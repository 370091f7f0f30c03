-- A delivery that must not reach its subscription before another one is final (delivered, failed, rate limited or
-- out of credits): an arbitrage.closed after the same subscription's arbitrage.opened of that arbitrage. The webhook
-- audit saw a close delivered while its opening waited 30 s for its second attempt. Holds the other's delivery_id.
alter table webhook_deliveries add column after_delivery text;

-- Whether an attempt was a replay (POST .../replay), kept rather than read from its number: a scheduled attempt made
-- after a replay (the subscription re-enabled) took the replay's number and overwrote its record. Attempt records
-- are numbered in the order they were made; a scheduled attempt's place in its schedule is the delivery's attempts.
alter table webhook_attempts add column replay boolean not null default false;
update webhook_attempts a set replay = true from webhook_deliveries d where d.id = a.delivery_pk and a.number > d.attempts;
