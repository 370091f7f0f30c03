-- Status history (issue 7): every 30 s, each source's freshness class, kept 8 days.
create table if not exists status_samples (
  sampled_at timestamptz not null,
  source text not null,
  sla_state text not null,
  age_s double precision,
  primary key (sampled_at, source)
);
create index if not exists status_samples_source on status_samples (source, sampled_at);
