-- What the simulator wrote is marked as simulated where it is kept (an audit found the simulator's closing lines
-- served as observed closing snapshots, unlabelled, after a restart without the simulator): an event's origin in
-- history_events (its pregame state survives restarts) and every closing row captured from it.
alter table history_events add column simulated boolean not null default false;
alter table closing_lines add column simulated boolean not null default false;
-- and the status history's samples taken while the node served the simulator (its sources were the simulator's)
alter table status_samples add column simulated boolean not null default false;
