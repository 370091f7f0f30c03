-- Whether a key was made by someone who has shown they hold the account's e-mail (a magic-link login, the operator,
-- or such a key), or by a self-serve sign-up, which anyone can make for any address. Once an account holds a
-- verified key, an unverified one cannot make or revoke keys: a stranger who signed up with someone's address kept
-- revoking the owner's keys (the security audit). Keys made before this column are taken as verified.
alter table api_keys add column verified boolean not null default true;
