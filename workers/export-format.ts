// The closing-line export formats: one row as SPEC's closing-line row (JSON, fast-json-stringify) or as an
// RFC 4180 CSV line, and a page of cursor rows as one chunk of the body. Run inside the piscina pool
// (workers/export-task.ts); the routes import the columns and the row schema from here for /openapi.json.

import fastJson from 'fast-json-stringify';
import { impliedProb } from '../engine/closing.js';
import type { StoredClosing } from '../sql/history.js';

/** a stored closing row as read (sql/history.ts StoredClosing) without its keyset id, as it crosses to the pool */
export type ExportRow = Omit<StoredClosing, 'id'>;

export type ExportFormat = 'json' | 'csv';

const num = { type: ['number', 'null'] } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const str = { type: 'string' } as const;
export const ClosingRowSchema = {
  type: 'object',
  properties: {
    game_date: str, sport_key: str, commence_time: str, home_team: strOrNull, away_team: strOrNull, source: str,
    player_name: strOrNull, market_key: str, market_label: str, line: num, over_price: num, under_price: num,
    over_implied_prob: num, under_implied_prob: num, snapshot_time: str,
    simulated: { type: 'boolean', description: 'true: captured from the built-in simulator\'s prices, no bookmaker\'s observed closing line' },
  },
} as const;

export const CSV_COLUMNS = ['game_date', 'sport_key', 'commence_time', 'home_team', 'away_team', 'source', 'player_name',
  'market_key', 'market_label', 'line', 'over_price', 'under_price', 'over_implied_prob', 'under_implied_prob', 'snapshot_time',
  'simulated'] as const;

type Formatted = Record<(typeof CSV_COLUMNS)[number], string | number | boolean | null>;

let rowJson: ((doc: unknown) => string) | null = null;

export function formatRow(r: ExportRow): Formatted {
  return {
    game_date: r.game_date, sport_key: r.sport_key, commence_time: r.commence_time.toISOString().slice(0, 19) + 'Z',
    home_team: r.home_team, away_team: r.away_team, source: r.source, player_name: r.player_name === '' ? null : r.player_name,
    market_key: r.market_key, market_label: r.market_label, line: r.line, over_price: r.over_price, under_price: r.under_price,
    over_implied_prob: impliedProb(r.over_price), under_implied_prob: impliedProb(r.under_price),
    snapshot_time: r.snapshot_time.toISOString(),
    // the label travels with the row, so a saved export keeps it (a response header would not)
    simulated: r.simulated === true,
  };
}

/** RFC 4180 field: quoted when it holds a comma, a quote, CR or LF; quotes doubled; null is empty. A text that a
 *  spreadsheet would read as a formula (it starts with =, +, -, @, a tab or CR: names come from feeds) is written
 *  with a leading apostrophe, as OWASP advises for CSV exports; numbers are written as they are. */
export function csvField(v: string | number | boolean | null): string {
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const s = typeof v === 'string' && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v);
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

export function csvLine(r: ExportRow): string {
  const o = formatRow(r);
  let line = '';
  for (let i = 0; i < CSV_COLUMNS.length; i++) line += (i === 0 ? '' : ',') + csvField(o[CSV_COLUMNS[i]]);
  return line + '\r\n';
}

/** One page of rows as a chunk of the body: JSON rows comma-separated (a leading comma unless the page opens the
 *  array), CSV lines each ending CRLF. */
export function formatPage(format: ExportFormat, rows: readonly ExportRow[], first: boolean): string {
  let out = '';
  if (format === 'csv') {
    for (let i = 0; i < rows.length; i++) out += csvLine(rows[i]);
    return out;
  }
  rowJson ??= fastJson(ClosingRowSchema as object) as (doc: unknown) => string;
  for (let i = 0; i < rows.length; i++) out += (first && i === 0 ? '' : ',') + rowJson(formatRow(rows[i]));
  return out;
}
