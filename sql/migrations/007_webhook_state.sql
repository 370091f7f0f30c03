-- The state the webhook checks compare against (issue 6): each book's last freshness verdict and newest write
-- seen (source_quality.breach / recovery), each feed's parser-degraded flag (parser.degraded). A change of it is
-- written in the same transaction as the outbox rows of the events it produced, so a process killed between the
-- detection and the write finds the old state at restart and detects the transition again, once; a transition
-- written is never announced again. See engine/webhook-events.ts (CheckState) for the values.
create table webhook_check_state (
  kind text not null check (kind in ('book', 'parser')),
  key text not null,
  state text not null,
  -- book: when it was breached; parser: when it was found degraded
  since timestamptz,
  -- book: the class the breach reached (breach or stale)
  detail text,
  -- book: its newest write the check has seen (kept within 10 s while the book writes)
  newest_at timestamptz,
  updated_at timestamptz not null,
  primary key (kind, key)
);
