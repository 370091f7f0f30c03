import t from 'tap';
import { readdirSync } from 'node:fs';
import type { Database } from '../sql/connection.js';
import {
  createKey,
  createKeyWithin,
  findKeyByHash,
  generateKey,
  getSetting,
  hashKey,
  isTier,
  loadKeys,
  setSetting,
  setSettingIfAbsent,
  TIER_CREDITS,
} from '../sql/keys.js';
import { migrate, migrationsDir } from '../sql/migrate.js';
import { loadAccounts, loadCurrentUsage, saveMeter, type AccountUpdate } from '../sql/accounts.js';
import type { KeyRow } from '../sql/keys.js';
import { testDatabases } from './helpers/db.js';

t.test('keys - generateKey, hashKey and isTier', async (t) => {
  const key = generateKey();
  t.match(key, /^lw_[0-9a-f]{32}$/, 'lw_ followed by 32 lowercase hex');
  t.not(generateKey(), key, 'two keys differ');
  t.equal(hashKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'sha256 hex');
  t.ok(isTier('scale'), 'scale is a tier');
  t.notOk(isTier('gold'), 'gold is not a tier');
  t.notOk(isTier('toString'), 'Object.prototype names are not tiers');
  t.equal(TIER_CREDITS.free, 1000, 'free allowance');
  t.equal(TIER_CREDITS.scale, 50_000_000, 'scale allowance');
});

/** every file in sql/migrations, in name order */
const ALL = readdirSync(migrationsDir()).filter((f) => f.endsWith('.sql')).sort();

for (const d of testDatabases()) {
  t.test(d.name, async (t) => {
    t.test('migrations - apply once, a second run applies nothing', async (t) => {
      const db = await d.open({ migrate: false });
      t.teardown(() => db.close());
      t.same(await migrate(db), ALL, 'first run applies every migration in order');
      t.same(await migrate(db), [], 'second run applies nothing');
      const rows = await db.sql`select name from schema_migrations order by name`;
      t.same(rows.map((r) => r.name), ALL, 'each recorded once');
    });

    t.test('migrations - concurrent runs on one database apply each file once', async (t) => {
      const db = await d.open({ migrate: false });
      t.teardown(() => db.close());
      const runs = await Promise.all([migrate(db), migrate(db), migrate(db)]);
      t.same(runs.flat().sort(), ALL, 'each migration applied by exactly one run');
    });

    t.test('createKey - stores only the hash of the key', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const { key, row } = await createKey(db, { tier: 'pro', email: 'a@example.com' });
      t.match(key, /^lw_[0-9a-f]{32}$/, 'generated key format');
      t.equal(row.keyHash, hashKey(key), 'row carries the hash');
      t.equal(row.prefix, key.slice(0, 8), 'prefix is the first 8 characters');
      t.equal(row.creditsRemaining, TIER_CREDITS.pro, 'credits default to the tier allowance');
      t.equal(row.creditsUsed, 0, 'nothing used yet');
      t.equal(typeof row.id, 'number', 'id is a number');
      t.equal(row.revoked, false, 'not revoked');
      t.ok(row.periodEnd.getTime() - row.periodStart.getTime() >= 28 * 86_400_000, 'period lasts a month');
      t.ok(row.periodEnd.getTime() - row.periodStart.getTime() <= 31 * 86_400_000, 'period lasts a month');

      const dump = await db.sql`select row_to_json(k)::text as j from api_keys k`;
      t.equal(dump.length, 1, 'one row');
      t.notOk(dump[0]!.j.includes(key), 'plaintext key appears nowhere in the row');
      t.ok(dump[0]!.j.includes(hashKey(key)), 'hash is stored');
    });

    t.test('createKey - chosen key and explicit credits', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const { key, row } = await createKey(db, { tier: 'free', credits: 5, key: 'lw_chosen_admin_key' });
      t.equal(key, 'lw_chosen_admin_key', 'returns the chosen key');
      t.equal(row.keyHash, hashKey('lw_chosen_admin_key'), 'stores its hash');
      t.equal(row.creditsRemaining, 5, 'explicit credits');
      t.equal(row.email, null, 'no email');
      await t.rejects(createKey(db, { tier: 'free', key: 'lw_chosen_admin_key' }), { code: '23505' }, 'duplicate key refused');
      await t.rejects(createKey(db, { tier: 'gold' as 'free' }), /unknown tier/, 'unknown tier refused');
      await t.rejects(createKey(db, { tier: 'free', credits: -1 }), /non-negative/, 'negative credits refused');
    });

    t.test('createKey - a key added to an account shares its balance; e-mails are unique', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const first = await createKey(db, { tier: 'pro', email: 'Owner@Example.com' });
      const second = await createKey(db, { tier: 'free', accountId: first.row.accountId });
      t.equal(second.row.accountId, first.row.accountId, 'same account');
      t.equal(second.row.tier, 'pro', 'the account\'s tier, not the one asked');
      t.not(second.row.id, first.row.id, 'a key of its own');
      await t.rejects(createKey(db, { tier: 'free', email: 'owner@example.COM' }), { code: '23505' }, 'the address is taken whatever its case');
      const at = Date.UTC(2030, 0, 31, 12);
      const dated = await createKey(db, { tier: 'starter', now: at });
      t.equal(dated.row.periodStart.getTime(), at, 'period starts at the given clock');
      t.equal(dated.row.periodEnd.toISOString(), '2030-02-28T12:00:00.000Z', 'and ends a calendar month later, clamped');
    });

    t.test('createKeyWithin - concurrent additions stop at the limit of active keys', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const first = await createKey(db, { tier: 'pro' });
      const id = first.row.accountId;
      // on PostgreSQL these run on several connections at once: each counted before the others inserted, without the lock
      const made = await Promise.all(Array.from({ length: 12 }, () => createKeyWithin(db, id, 5)));
      t.equal(made.filter((m) => m !== null).length, 4, 'four added beside the first');
      const [{ n }] = await db.sql<{ n: string }[]>`select count(*) as n from api_keys where account_id = ${id} and revoked_at is null`;
      t.equal(Number(n), 5, 'five active keys');
      await db.sql`update api_keys set revoked_at = now() where id = ${first.row.id}`;
      t.not(await createKeyWithin(db, id, 5), null, 'a revoked key frees its place');
    });

    t.test('loadKeys and findKeyByHash - round trip', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const a = await createKey(db, { tier: 'business', email: 'b@example.com' });
      const b = await createKey(db, { tier: 'scale' });
      const c = await createKey(db, { tier: 'free' });
      await db.sql`update api_keys set revoked_at = now() where id = ${c.row.id}`;

      const loaded = await loadKeys(db);
      t.same(loaded.slice(0, 2), [a.row, b.row], 'loadKeys returns every key, as created');
      t.equal(loaded[2]?.revoked, true, 'a revoked key is loaded marked revoked (its account still pays for its webhooks)');
      t.equal(loaded[1]!.creditsRemaining, 50_000_000, 'bigint balance comes back as a number');

      t.same(await findKeyByHash(db, hashKey(a.key)), a.row, 'found by hash');
      const revoked = await findKeyByHash(db, hashKey(c.key));
      t.equal(revoked?.revoked, true, 'a revoked key is found and marked revoked');
      t.equal(await findKeyByHash(db, hashKey('lw_nope')), null, 'unknown hash gives null');
    });

    // a meter write of the stored period: `used` credits charged and `granted` granted since the last write
    const charge = (row: KeyRow, used: number, granted = 0): AccountUpdate => ({
      id: row.accountId, tier: row.tier, used, granted, periodStart: row.periodStart, periodEnd: row.periodEnd, allowance: null, lastRequestAt: null,
    });

    t.test('saveMeter - one transaction adds charges, usage and key times', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const a = await createKey(db, { tier: 'pro' });
      const b = await createKey(db, { tier: 'pro' });
      const c = await createKey(db, { tier: 'pro' });
      const when = new Date('2030-01-02T03:04:05.678Z');
      const out = await saveMeter(db, [charge(a.row, 10), charge(b.row, 100_000)],
        [{ accountId: a.row.accountId, periodStart: a.row.periodStart, endpoint: 'GET /v1/verdict', calls: 2, credits: 10 }],
        [{ id: a.row.id, lastRequestAt: when }]);
      t.same(out.balances.map((x) => [x.id, x.creditsRemaining, x.creditsUsed]), [[a.row.accountId, 99_990, 10], [b.row.accountId, 0, 100_000]],
        'the balances as stored after the write are returned');
      await saveMeter(db, [], [], []);

      const ra = await findKeyByHash(db, hashKey(a.key));
      const rb = await findKeyByHash(db, hashKey(b.key));
      const rc = await findKeyByHash(db, hashKey(c.key));
      t.equal(ra?.creditsRemaining, 99_990, 'a remaining');
      t.equal(ra?.creditsUsed, 10, 'a used');
      t.equal(ra?.lastRequestAt?.toISOString(), when.toISOString(), 'a last request');
      t.equal(rb?.creditsRemaining, 0, 'b remaining');
      t.equal(rb?.creditsUsed, 100_000, 'b used');
      t.equal(rb?.lastRequestAt, null, 'b last request stays null');
      t.same(rc, c.row, 'c untouched');
      t.same((await loadCurrentUsage(db)).map((u) => [u.accountId, u.endpoint, u.calls, u.credits]),
        [[a.row.accountId, 'GET /v1/verdict', 2, 10]], 'usage row of the current period');

      await saveMeter(db, [charge(a.row, 25, 5)], [{ accountId: a.row.accountId, periodStart: a.row.periodStart, endpoint: 'GET /v1/verdict', calls: 2, credits: 10 }],
        [{ id: a.row.id, lastRequestAt: new Date(0) }]);
      const ra3 = await findKeyByHash(db, hashKey(a.key));
      t.equal(ra3?.lastRequestAt?.toISOString(), when.toISOString(), 'lastRequestAt never moves backwards');
      t.same([ra3?.creditsRemaining, ra3?.creditsUsed], [99_970, 35], 'charges and grants are added to what is stored');
      t.same((await loadCurrentUsage(db)).map((u) => [u.calls, u.credits]), [[4, 20]], 'usage is added too');

      const next = { ...charge(a.row, 3), periodStart: a.row.periodEnd, periodEnd: new Date(a.row.periodEnd.getTime() + 30 * 86_400_000), allowance: 100_000 };
      await saveMeter(db, [next], [], []);
      const [acc] = (await loadAccounts(db)).filter((x) => x.id === a.row.accountId);
      t.equal(acc?.periodStart.getTime(), a.row.periodEnd.getTime(), 'a renewed period is written');
      t.same([acc?.creditsRemaining, acc?.creditsUsed], [99_997, 3], 'from its allowance, with the charges made in it');
      t.same(await loadCurrentUsage(db), [], 'the old period\'s usage is not the current period\'s');
      await saveMeter(db, [{ ...next, used: 4 }], [], []);
      const [again] = (await loadAccounts(db)).filter((x) => x.id === a.row.accountId);
      t.same([again?.creditsRemaining, again?.creditsUsed], [99_993, 7], 'a second node renewing the same period adds its charges');
      await saveMeter(db, [charge(a.row, 50)], [], []);
      const [late] = (await loadAccounts(db)).filter((x) => x.id === a.row.accountId);
      t.same([late?.creditsRemaining, late?.creditsUsed], [99_993, 7], 'charges of a period that ended are dropped');
    });

    t.test('saveMeter - a balance overspent by several writers stops at zero, used counts every charge', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      const a = await createKey(db, { tier: 'free' });
      await saveMeter(db, [charge(a.row, 990)], [], []);
      await saveMeter(db, [charge(a.row, 30)], [], []);
      const ra = await findKeyByHash(db, hashKey(a.key));
      t.same([ra?.creditsRemaining, ra?.creditsUsed], [0, 1020], 'remaining 0 (never negative), used 1,020');
    });

    t.test('saveMeter - balances survive close and reopen', async (t) => {
      const store = d.durable();
      t.teardown(() => store.dispose());
      const first = await store.open();
      const { key, row } = await createKey(first, { tier: 'starter' });
      await saveMeter(first, [charge(row, 7_655)], [], []);
      await setSetting(first, 'admin_key_hash', 'abc');
      await first.close();

      const second = await store.open();
      t.teardown(() => second.close());
      t.same(await migrate(second), [], 'nothing to migrate after a restart');
      const again = await findKeyByHash(second, hashKey(key));
      t.equal(again?.creditsRemaining, 12_345, 'remaining survives the restart');
      t.equal(again?.creditsUsed, 7_655, 'used survives the restart');
      t.equal(await getSetting(second, 'admin_key_hash'), 'abc', 'settings survive the restart');
    });

    t.test('settings - upsert and set-if-absent', async (t) => {
      const db = await d.open();
      t.teardown(() => db.close());
      t.equal(await getSetting(db, 'x'), null, 'absent');
      await setSetting(db, 'x', '1');
      t.equal(await getSetting(db, 'x'), '1', 'inserted');
      await setSetting(db, 'x', '2');
      t.equal(await getSetting(db, 'x'), '2', 'updated');
      t.equal(await setSettingIfAbsent(db, 'x', '3'), false, 'present: not inserted');
      t.equal(await getSetting(db, 'x'), '2', 'value kept');
      t.equal(await setSettingIfAbsent(db, 'y', 'first'), true, 'absent: inserted');
      t.equal(await getSetting(db, 'y'), 'first', 'value stored');
      const racers = await Promise.all([setSettingIfAbsent(db, 'z', 'a'), setSettingIfAbsent(db, 'z', 'b')]);
      t.same(racers.filter(Boolean).length, 1, 'of two racing inserts exactly one wins');
    });

    if (d.kind === 'external') {
      t.test('schemas - a table in one test schema is invisible from another', async (t) => {
        const one = await d.open({ migrate: false });
        const two = await d.open({ migrate: false });
        t.not(one.schema, two.schema, 'distinct schemas');
        await one.sql`create table only_here (id int)`;
        const seen = await two.sql`select to_regclass('only_here') as r`;
        t.equal(seen[0]!.r, null, 'not visible from the other schema');
        await t.rejects(two.sql`select * from only_here`, { code: '42P01' }, 'undefined table from the other schema');
        t.same(await one.sql`select * from only_here`, [], 'visible in its own schema');

        const names = [one.schema, two.schema];
        await one.close();
        await two.close();
        const probe = await d.open({ migrate: false });
        t.teardown(() => probe.close());
        const left = await probe.sql`select nspname from pg_namespace where nspname in ${probe.sql(names)}`;
        t.same(left, [], 'closed schemas are dropped');
      });
    }
  });
}
