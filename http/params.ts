// Declarative query parameters: one spec per route drives validation (every bound of SPEC.md), defaults, and the
// parameters section of /openapi.json. All errors of a request are collected into one 422.

import { ApiError, type ValidationItem } from '../engine/errors.js';
import { parseTime } from '../engine/ingest.js';
import { parsePrice } from '../engine/verdict.js';

export type ParamType = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'csv' | 'datetime' | 'date';

export interface ParamSpec {
  name: string;
  type: ParamType;
  description: string;
  default?: string | number | boolean;
  min?: number;
  max?: number;
  /** allowed values (enum, and each element of csv) */
  values?: readonly string[];
  required?: boolean;
  /** another name accepted for the same parameter */
  alias?: string;
  /** csv: the most elements accepted */
  maxItems?: number;
  /** number: min and max are exclusive bounds (a probability strictly between them) */
  exclusive?: boolean;
}

export type ParamValue = string | number | boolean | string[] | undefined;
export type Params = Record<string, ParamValue>;

const MAX_STRING = 2000;
/** a list of at most maxItems values may take this many characters a value (an event id is at most 128, and its
 *  comma): 500 event ids of 32 hex digits were refused at 61 by MAX_STRING alone */
const MAX_LIST_ITEM = 129;

/** the longest raw value a parameter takes */
export function maxLength(spec: ParamSpec): number {
  return spec.type === 'csv' && spec.maxItems !== undefined ? Math.max(MAX_STRING, spec.maxItems * MAX_LIST_ITEM) : MAX_STRING;
}
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Decimal notation only: `Number()` would also take `0x10`, `0b11`, `Infinity`, and `1e2` for an integer. Blanks
 *  around the digits are trimmed: an unencoded `+` arrives as a blank (`line=+3.5` is ` 3.5`). */
const INTEGER = /^[+-]?\d+$/;
// one way to match each text: `\d+\.?\d*` split a run of digits between its two parts every way it could before it
// failed, quadratic in the run (2,000 digits and an x: 7 ms a value, four a request through the keyless /v1/meta/quote)
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const MAX_NUMBER_CHARS = 64;

/** `name`: the name the request used (the spec's own or its alias), which an error points at. */
function parseOne(spec: ParamSpec, name: string, raw: string, errors: ValidationItem[]): ParamValue {
  const fail = (msg: string, type: string): undefined => {
    errors.push({ loc: ['query', name], msg, type, input: raw });
    return undefined;
  };
  const cap = maxLength(spec);
  if (raw.length > cap) return fail(`at most ${cap} characters`, 'string_too_long');
  // no parameter holds a control character; a NUL reached PostgreSQL as a 500 (delivery_id=%00)
  if (CONTROL.test(raw)) return fail('must not contain control characters', 'string_pattern_mismatch');
  switch (spec.type) {
    case 'string':
      // an empty filter is a mistake more often than a wish for everything (eventId= served [] where eventIds= is 422)
      if (raw.trim() === '') return fail('must not be empty', 'string_too_short');
      return raw;
    case 'boolean': {
      // any case: verified=TRUE and live=True are what some clients' serialisers write
      const b = raw.toLowerCase();
      if (b === 'true' || b === '1') return true;
      if (b === 'false' || b === '0') return false;
      return fail('must be true or false', 'bool_parsing');
    }
    case 'integer':
    case 'number': {
      const integer = spec.type === 'integer';
      const text = raw.trim();
      // no number needs more; a long text was the input of the backtracking that DECIMAL no longer does
      if (text.length > MAX_NUMBER_CHARS) return fail(`must be a number of at most ${MAX_NUMBER_CHARS} characters`, 'string_too_long');
      const n = (integer ? INTEGER : DECIMAL).test(text) ? Number(text) : Number.NaN;
      if (!Number.isFinite(n)) return fail(integer ? 'must be an integer' : 'must be a number', integer ? 'int_parsing' : 'float_parsing');
      if (spec.exclusive === true) {
        if (spec.min !== undefined && !(n > spec.min)) return fail(`must be above ${spec.min}`, 'greater_than');
        if (spec.max !== undefined && !(n < spec.max)) return fail(`must be below ${spec.max}`, 'less_than');
      }
      if (spec.min !== undefined && n < spec.min) return fail(`must be at least ${spec.min}`, 'greater_than_equal');
      if (spec.max !== undefined && n > spec.max) return fail(`must be at most ${spec.max}`, 'less_than_equal');
      if (integer && !Number.isSafeInteger(n)) return fail(`must be an integer of at most ${Number.MAX_SAFE_INTEGER}`, 'int_parsing');
      return n;
    }
    case 'enum':
      if (spec.values!.includes(raw)) return raw;
      return fail(`must be one of ${spec.values!.join(', ')}`, 'enum');
    case 'csv': {
      const items = raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
      if (items.length === 0) return fail('must list at least one value', 'csv_empty');
      if (spec.maxItems !== undefined && items.length > spec.maxItems) return fail(`at most ${spec.maxItems} values`, 'too_long');
      if (spec.values !== undefined) {
        const bad = items.filter((s) => !spec.values!.includes(s));
        if (bad.length > 0) return fail(`unknown value(s) ${bad.join(', ')}; allowed: ${spec.values.join(', ')}`, 'enum');
      }
      return [...new Set(items)];
    }
    case 'datetime': {
      // an unencoded '+' of a zone offset reaches us as a blank (2026-11-27T01:00:00 01:00), as it does for numbers
      const t = parseTime(/T[\d:.]+ \d{2}:?\d{2}$/.test(raw) ? raw.replace(/ (\d{2}:?\d{2})$/, '+$1') : raw);
      if (Number.isNaN(t)) return fail('must be ISO 8601 with a zone, e.g. 2026-11-23T18:00:00Z', 'datetime_parsing');
      return new Date(t).toISOString();
    }
    case 'date': {
      // year 0000 parses in JavaScript (1 BC) but not in PostgreSQL, whose queries then failed with a 500
      if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || raw.startsWith('0000') || Number.isNaN(Date.parse(`${raw}T00:00:00Z`))
        || new Date(`${raw}T00:00:00Z`).toISOString().slice(0, 10) !== raw) {
        return fail('must be a date YYYY-MM-DD (UTC)', 'date_parsing');
      }
      return raw;
    }
  }
}

/** Parses a query string against specs; throws one 422 listing every bad parameter. */
export function parseParams(specs: readonly ParamSpec[], query: URLSearchParams): Params {
  const out: Params = {};
  const errors: ValidationItem[] = [];
  for (const spec of specs) {
    let name = spec.name;
    let raw = query.get(name);
    // a parameter repeated with different values: neither silently wins (a list is one comma-separated value)
    for (const n of spec.alias === undefined ? [spec.name] : [spec.name, spec.alias]) {
      const all = query.getAll(n);
      if (all.length > 1 && !all.every((v) => v === all[0])) {
        errors.push({ loc: ['query', n], msg: `is given ${all.length} times with different values: send it once${spec.type === 'csv' ? ` (a list is comma-separated: ${n}=a,b)` : ''}`, type: 'value_error', input: all });
      }
    }
    if (spec.alias !== undefined) {
      const other = query.get(spec.alias);
      if (raw === null) {
        name = spec.alias;
        raw = other;
      } else if (other !== null && other !== raw) {
        // two values for one parameter (5 and 5.0 are one): neither silently wins
        const a = parseOne(spec, name, raw, errors);
        const b = parseOne(spec, spec.alias, other, errors);
        if (a !== undefined && b !== undefined && JSON.stringify(a) !== JSON.stringify(b)) {
          errors.push({ loc: ['query', spec.alias], msg: `is an alias of ${spec.name}: give one of them, or both with the same value`, type: 'value_error', input: other });
        }
        out[spec.name] = a;
        continue;
      }
    }
    if (raw === null) {
      if (spec.required) errors.push({ loc: ['query', spec.name], msg: 'field required', type: 'missing', input: null });
      out[spec.name] = spec.default;
      continue;
    }
    out[spec.name] = parseOne(spec, name, raw, errors);
  }
  if (errors.length > 0) throw new ApiError('VALIDATION_ERROR', `invalid parameter: ${errors.map((e) => `${e.loc[1]} ${e.msg}`).join('; ')}`, errors);
  return out;
}

/** a query parameter's name as X-Ignored-Params may carry it (a name with any other character is left out of the
 *  header: it could hold a line break) */
const SAFE_NAME = /^[A-Za-z0-9_.~[\]-]{1,64}$/;
const KEY_NAMES = new Set(['apiKey', 'api_key']);

/** The query parameters no spec (or alias) names, the key's aside, comma-separated, at most ten: The Odds API
 *  ignores parameters it does not know, and so does this service (a v4 client sends includeLinks and the like),
 *  but a misspelt filter (min_profit for minProfit) then filters nothing; the header says which were not read. */
export function ignoredParams(specs: readonly ParamSpec[], query: URLSearchParams): string {
  let out = '';
  let n = 0;
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (KEY_NAMES.has(name) || seen.has(name) || !SAFE_NAME.test(name)) continue;
    seen.add(name);
    if (specs.some((s) => s.name === name || s.alias === name)) continue;
    if (n++ === 10) break;
    out += out === '' ? name : `,${name}`;
  }
  return out;
}

/** Throws a 422 for one parameter, for checks that need more than one parameter or the catalogue. */
export function invalid(name: string, msg: string, input: unknown): never {
  throw new ApiError('VALIDATION_ERROR', `invalid parameter: ${name} ${msg}`, [{ loc: ['query', name], msg, type: 'value_error', input }]);
}

/** A price typed into a query string: American with a sign (-110, +150) or decimal (1.91); NaN otherwise.
 *  An unencoded '+' arrives as a blank, so ' 150' is +150 American, not a decimal price of 150; a blank before what
 *  no American price can be (' 1.6', a list typed with a space after its commas) leaves the decimal. */
export function queryPrice(raw: string): number {
  if (!/^ +\d/.test(raw)) return parsePrice(raw);
  const american = parsePrice(`+${raw.trimStart()}`);
  return american === american ? american : parsePrice(raw);
}
