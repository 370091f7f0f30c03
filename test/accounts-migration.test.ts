// Migration 008 on a database written before accounts existed: each key becomes an account with its balance,
// tier and period; webhook owners (key ids) are account ids; a later account gets a fresh id.

import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Accounts } from '../http/accounts.js';
import { createKey, hashKey } from '../sql/keys.js';
import { migrate, migrationsDir } from '../sql/migrate.js';
import { testDatabases } from './helpers/db.js';

for (const d of testDatabases()) {
  t.test(`migration 008 - keys become accounts - ${d.name}`, async (t) => {
    const before = mkdtempSync(join(tmpdir(), 'lw-mig-'));
    t.teardown(() => rmSync(before, { recursive: true, force: true }));
    for (const f of readdirSync(migrationsDir())) if (f.endsWith('.sql') && f < '008') copyFileSync(join(migrationsDir(), f), join(before, f));
    const db = await d.open({ migrate: false });
    t.teardown(() => db.close());
    await migrate(db, before);

    const end = new Date('2031-02-01T00:00:00Z');
    for (const [id, email, tier, remaining, used, revoked] of [
      [5, 'dup@example.com', 'pro', 90_000, 10_000, false],
      [7, 'DUP@example.com', 'starter', 5, 19_995, false],
      [9, null, 'business', 1_000_000, 0, true],
    ] as const) {
      await db.sql`
        insert into api_keys (id, key_hash, prefix, tier, email, credits_remaining, credits_used, period_start, period_end, revoked_at)
        values (${id}, ${hashKey(`k${id}`)}, ${`k${id}`}, ${tier}, ${email}, ${remaining}, ${used}, '2031-01-01T00:00:00Z', ${end},
                ${revoked ? new Date() : null})`;
    }
    await db.sql`insert into webhooks (owner_id, billing_key_id, variant, url, events, secret) values (7, 7, 'A', 'https://93.184.216.34/h', '{arb_flagged}', 's')`;

    t.equal((await migrate(db))[0], '008_accounts.sql', '008 is the first left to apply');
    const accounts = await db.sql`select id::int, email, tier, credits_remaining::int, credits_used::int, period_end from accounts order by id`;
    t.same(accounts.map((a) => [a.id, a.email, a.tier, a.credits_remaining, a.credits_used, (a.period_end as Date).toISOString()]), [
      [5, 'dup@example.com', 'pro', 90_000, 10_000, end.toISOString()],
      [7, null, 'starter', 5, 19_995, end.toISOString()],
      [9, null, 'business', 1_000_000, 0, end.toISOString()],
    ], 'one account per key with its balance, tier and period; a shared e-mail stays on the first');
    const keys = await db.sql`select id::int, account_id::int from api_keys order by id`;
    t.ok(keys.every((k) => k.id === k.account_id), 'each key belongs to the account of the same id');
    const [hook] = await db.sql`select owner_id::int from webhooks`;
    t.equal(hook!.owner_id, 7, 'the webhook owner is the account id');

    const fresh = await createKey(db, { tier: 'free', email: 'new@example.com' });
    t.ok(fresh.row.accountId > 9, 'a new account gets a fresh id');
    const mem = new Accounts(db);
    await mem.load();
    t.equal(mem.resolve('k9'), null, 'a revoked key does not resolve');
    t.equal(mem.keyById(9)?.revoked, true, 'but is known (its account still pays for its webhooks)');
    t.equal(mem.resolve('k7')?.remaining, 5, 'a migrated key draws on its account');
  });
}
