-- Work that must happen once when several nodes share this database (issue 9, README "Cluster: what is claimed
-- how").
--
-- Webhook attempts: a node takes a due delivery by setting claimed_by (its NODE_ID) and lease_until in the same
-- statement that selects it (FOR UPDATE SKIP LOCKED), renews the lease while the attempt is in flight and clears
-- both when it records the outcome. Another node takes a delivery only once its lease has run out, so a node
-- killed mid-attempt hands its deliveries over after WEBHOOK_LEASE_MS; the node itself (same NODE_ID) takes its
-- own claims back at once after a restart.
alter table webhook_deliveries
  add column claimed_by text,
  add column lease_until timestamptz;

-- Credits: every meter write adds its deltas to the shared balance and stamps metered_at (the database's clock);
-- each node reloads the balances stamped since its last write, so it sees the other nodes' spend within a second.
alter table accounts add column metered_at timestamptz;
create index accounts_metered on accounts (metered_at) where metered_at is not null;
