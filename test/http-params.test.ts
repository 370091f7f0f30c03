import t from 'tap';
import { ApiError } from '../engine/errors.js';
import { parseParams, type ParamSpec } from '../http/params.js';

const SPECS: ParamSpec[] = [
  { name: 'limit', type: 'integer', default: 10, min: 1, max: 100, description: 'rows' },
  { name: 'count', type: 'integer', description: 'no bounds' },
  { name: 'line', type: 'number', min: -2000, max: 2000, description: 'a line' },
  { name: 'minEdge', alias: 'min_edge_pct', type: 'number', default: 2, min: 0, description: 'edge' },
  { name: 'eventId', type: 'string', description: 'one id' },
  { name: 'live', type: 'boolean', default: false, description: 'a flag' },
  { name: 'date', type: 'date', description: 'a day' },
];

/** the 422's detail items of a query, or the parsed params */
function parse(query: string): { ok: true; params: Record<string, unknown> } | { ok: false; detail: { loc: string[]; type: string }[] } {
  try {
    return { ok: true, params: parseParams(SPECS, new URLSearchParams(query)) };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { ok: false, detail: (e.detail ?? []) as { loc: string[]; type: string }[] };
  }
}

t.test('params - numbers are decimal notation; Number() would take hex, binary, Infinity and exponents', async (t) => {
  const accepted: [string, string, number][] = [
    ['limit=5', 'limit', 5], ['limit=+5', 'limit', 5], ['limit=%2B5', 'limit', 5], ['limit=%205%20', 'limit', 5],
    ['line=-3.5', 'line', -3.5], ['line=.5', 'line', 0.5], ['line=3.', 'line', 3], ['line=1e2', 'line', 100],
    ['line=2.5E-1', 'line', 0.25], ['minEdge=0', 'minEdge', 0],
  ];
  for (const [query, name, value] of accepted) {
    const r = parse(query);
    t.same(r.ok ? r.params[name] : r.detail, value, `${query}: ${value}`);
  }
  const refused: [string, string][] = [
    ['limit=0x10', 'int_parsing'], ['limit=0b11', 'int_parsing'], ['limit=0o7', 'int_parsing'], ['limit=1e1', 'int_parsing'],
    ['limit=2.0', 'int_parsing'], ['limit=', 'int_parsing'], ['limit=%20', 'int_parsing'], ['limit=1_0', 'int_parsing'],
    ['limit=5abc', 'int_parsing'], ['line=0x10', 'float_parsing'], ['line=Infinity', 'float_parsing'],
    ['line=-Infinity', 'float_parsing'], ['line=NaN', 'float_parsing'], ['line=1e999', 'float_parsing'], ['line=.', 'float_parsing'],
    ['line=1..2', 'float_parsing'], ['line=e5', 'float_parsing'],
  ];
  for (const [query, type] of refused) {
    const r = parse(query);
    t.same(r.ok ? r.params : r.detail.map((d) => d.type), [type], `${query}: 422 ${type}`);
  }
});

t.test('params - a number of more than 64 characters is 422; the digit pattern matches a run one way', async (t) => {
  const tiny = `line=0.${'0'.repeat(100)}1`;
  const r = parse(tiny);
  t.same(r.ok ? r.params : r.detail.map((d) => d.type), ['string_too_long'], 'a 103-character number: 422 (it was taken as 0)');
  t.same(parse(`line=${'1'.repeat(64)}`).ok ? 'parsed' : 'refused', 'refused', '64 digits: parsed, then out of the line\'s bounds');
  t.same(parse(`line=0.${'0'.repeat(61)}1`).ok, true, 'a 64-character number: taken');
  // regression (security audit): `\d+\.?\d*` split a long digit run between its two parts every way before failing
  for (const q of [`line=${'1'.repeat(60)}x`, `line=${'1'.repeat(30)}.${'1'.repeat(30)}x`]) {
    const bad = parse(q);
    t.same(bad.ok ? bad.params : bad.detail.map((d) => d.type), ['float_parsing'], `${q.slice(0, 12)}...x: float_parsing`);
  }
});

t.test('params - bounds, and integers beyond 2^53 without a bound', async (t) => {
  const types = (q: string) => { const r = parse(q); return r.ok ? r.params : r.detail.map((d) => d.type); };
  t.same(types('limit=0'), ['greater_than_equal'], 'limit=0: below min');
  t.same(types('limit=101'), ['less_than_equal'], 'limit=101: above max');
  t.same(types('count=9007199254740993'), ['int_parsing'], 'an integer beyond 2^53 cannot be held exactly: 422');
  const r = parse('count=9007199254740991');
  t.equal(r.ok && r.params.count, 9007199254740991, '2^53 - 1 is held');
  const big = parse('minEdge=150');
  t.equal(big.ok && big.params.minEdge, 150, 'no max: 150 accepted');
});

t.test('params - an alias: its errors name it; two different values are 422', async (t) => {
  const alias = parse('min_edge_pct=abc');
  t.same(alias.ok ? alias.params : alias.detail.map((d) => d.loc), [['query', 'min_edge_pct']], 'an error on the alias names the alias');
  const own = parse('minEdge=abc');
  t.same(own.ok ? own.params : own.detail.map((d) => d.loc), [['query', 'minEdge']], 'an error on the name names the name');
  const viaAlias = parse('min_edge_pct=5');
  t.equal(viaAlias.ok && viaAlias.params.minEdge, 5, 'the alias sets the parameter');
  const same = parse('minEdge=5&min_edge_pct=5');
  t.equal(same.ok && same.params.minEdge, 5, 'both with the same value: accepted');
  const spelled = parse('minEdge=5&min_edge_pct=5.0');
  t.equal(spelled.ok && spelled.params.minEdge, 5, 'the same value spelled two ways: accepted');
  const bad = parse('minEdge=5&min_edge_pct=x');
  t.same(bad.ok ? bad.params : bad.detail.map((d) => [d.loc, d.type]), [[['query', 'min_edge_pct'], 'float_parsing']], 'a bad alias value beside a good one: its own error');
  const conflict = parse('minEdge=5&min_edge_pct=20');
  t.same(conflict.ok ? conflict.params : conflict.detail.map((d) => [d.loc, d.type]), [[['query', 'min_edge_pct'], 'value_error']],
    'two values for one parameter: 422 naming the alias');
  const dflt = parse('');
  t.equal(dflt.ok && dflt.params.minEdge, 2, 'neither: the default');
});

t.test('params - an empty string parameter is 422, as an empty list is', async (t) => {
  for (const q of ['eventId=', 'eventId=%20%20']) {
    const r = parse(q);
    t.same(r.ok ? r.params : r.detail.map((d) => [d.loc, d.type]), [[['query', 'eventId'], 'string_too_short']], `${q}: 422`);
  }
  const r = parse('eventId=abc');
  t.equal(r.ok && r.params.eventId, 'abc', 'a value passes as given');
});

t.test('params - a control character in any parameter is 422 (a NUL reached PostgreSQL as a 500)', async (t) => {
  for (const q of ['eventId=a%00b', 'eventId=a%0Ab', 'live=true%00', 'eventId=%7F']) {
    const r = parse(q);
    t.same(r.ok ? r.params : r.detail.map((d) => d.type), ['string_pattern_mismatch'], `${q}: 422`);
  }
  const r = parse('eventId=caf%C3%A9');
  t.equal(r.ok && r.params.eventId, 'café', 'other characters pass');
});

t.test('params - booleans: true, false, 1, 0 in any case', async (t) => {
  for (const [q, v] of [['live=true', true], ['live=TRUE', true], ['live=True', true], ['live=1', true], ['live=false', false], ['live=FALSE', false], ['live=0', false]] as const) {
    const r = parse(q);
    t.equal(r.ok && r.params.live, v, `${q}: ${v}`);
  }
  for (const q of ['live=yes', 'live=', 'live=2', 'live=truee']) {
    const r = parse(q);
    t.same(r.ok ? r.params : r.detail.map((d) => d.type), ['bool_parsing'], `${q}: 422`);
  }
});

t.test('params - a date of year 0000 is 422 (PostgreSQL has no year 0; the exports answered 500)', async (t) => {
  const r = parse('date=0000-01-01');
  t.same(r.ok ? r.params : r.detail.map((d) => d.type), ['date_parsing'], 'year 0000: 422');
  const ok = parse('date=0001-01-01');
  t.equal(ok.ok && ok.params.date, '0001-01-01', 'year 0001 passes');
});

t.test('params - a parameter repeated with different values is 422 (the first no longer wins silently); repeated alike is one', async (t) => {
  const twice = parse('limit=5&limit=abc');
  t.same(twice.ok ? twice.params : twice.detail.map((d) => [d.loc, d.type]), [[['query', 'limit'], 'value_error']], 'limit=5&limit=abc: 422 naming limit');
  const alike = parse('limit=5&limit=5');
  t.equal(alike.ok && alike.params.limit, 5, 'the same value twice: one value');
  const alias = parse('min_edge_pct=1&min_edge_pct=2');
  t.same(alias.ok ? alias.params : alias.detail.map((d) => d.loc), [['query', 'min_edge_pct']], 'an alias repeated: 422 naming the alias');
});

t.test('params - a datetime whose zone offset lost its unencoded + to a blank is read as +hh:mm', async (t) => {
  const specs: ParamSpec[] = [{ name: 'from', type: 'datetime', description: 'a time' }];
  const read = (q: string) => parseParams(specs, new URLSearchParams(q)).from;
  t.equal(read('from=2026-11-27T01:00:00+01:00'), '2026-11-27T00:00:00.000Z', 'an unencoded + arrives as a blank: +01:00');
  t.equal(read('from=2026-11-27T01:00:00%2B01:00'), '2026-11-27T00:00:00.000Z', 'encoded: the same');
  t.equal(read('from=2026-11-27T01:00:00-01:00'), '2026-11-27T02:00:00.000Z', 'a minus is unchanged');
  t.throws(() => read('from=2026-11-27 01:00:00Z'), 'a blank elsewhere is still refused');
});
