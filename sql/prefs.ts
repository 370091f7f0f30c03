// Saved verdict preferences (issue 5): every SQL statement touching verdict_prefs lives here.

import type { Database } from './connection.js';

export interface Prefs {
  region: string | null;
  books: string[] | null;
}

export async function getPrefs(db: Database, keyId: number): Promise<Prefs> {
  const [row] = await db.sql<{ region: string | null; books: string[] | null }[]>`
    select region, books from verdict_prefs where key_id = ${keyId}`;
  return row === undefined ? { region: null, books: null } : { region: row.region, books: row.books };
}

export async function setPrefs(db: Database, keyId: number, prefs: Prefs): Promise<void> {
  await db.sql`
    insert into verdict_prefs (key_id, region, books, updated_at)
    values (${keyId}, ${prefs.region}, ${prefs.books === null ? null : db.sql.array(prefs.books)}, now())
    on conflict (key_id) do update set region = excluded.region, books = excluded.books, updated_at = now()`;
}
