import t from 'tap';
import {
  BOOKMAKERS,
  DEFAULT_SHARP_BOOK,
  MARKETS,
  REGIONS,
  SPORTS,
  UMBRELLAS,
  bookByKey,
  booksForRegions,
  isOutright,
  isRegion,
  marketByKey,
  marketsForFamily,
  resolveSportKeys,
  sportByKey,
} from '../engine/catalogue.js';
import type { BookKind, Region } from '../engine/types.js';

const FAMILIES = [
  'basketball', 'baseball', 'americanfootball', 'icehockey', 'soccer', 'mma', 'boxing', 'cricket',
  'horse_racing', 'discgolf', 'esports', 'volleyball', 'tabletennis', 'tennis', 'golf',
];

function dupes(keys: readonly string[]): string[] {
  const seen = new Set<string>();
  return keys.filter((k) => (seen.has(k) ? true : (seen.add(k), false)));
}

t.test('catalogue - sizes', async (t) => {
  t.ok(SPORTS.length >= 40, `>= 40 sports (got ${SPORTS.length})`);
  t.ok(BOOKMAKERS.length >= 50, `>= 50 books (got ${BOOKMAKERS.length})`);
  const props = MARKETS.filter((m) => m.kind === 'prop');
  t.ok(props.length >= 60, `>= 60 props (got ${props.length})`);
  t.same([...REGIONS].sort(), ['asia', 'au', 'br', 'ca', 'eu', 'fr', 'latam', 'mx', 'uk', 'us', 'us2'], 'the 11 regions');
});

t.test('catalogue - keys are unique', async (t) => {
  t.same(dupes(SPORTS.map((s) => s.key)), [], 'sport keys unique');
  t.same(dupes(BOOKMAKERS.map((b) => b.key)), [], 'book keys unique');
  t.same(dupes(MARKETS.map((m) => m.key)), [], 'market keys unique');
  t.same(dupes([...UMBRELLAS.map((u) => u.key), ...SPORTS.map((s) => s.key)]), [], 'umbrella keys do not clash with sports');
});

t.test('catalogue - sport records', async (t) => {
  for (const s of SPORTS) {
    t.match(s.key, /^[a-z0-9]+(_[a-z0-9]+)+$/, `${s.key} has <sport>_<league> shape`);
    t.ok(FAMILIES.includes(s.family), `${s.key} family ${s.family} is known`);
    t.ok(s.key.startsWith(`${s.family}_`), `${s.key} starts with its family`);
    t.ok(s.title.length > 0 && s.description.length > 0 && s.group.length > 0, `${s.key} has human text`);
    t.equal(sportByKey(s.key), s, `sportByKey finds ${s.key}`);
  }
  for (const fam of FAMILIES) t.ok(SPORTS.some((s) => s.family === fam), `family ${fam} has a sport`);
  t.ok(SPORTS.filter((s) => !s.active).length >= 3, 'at least 3 inactive sports');
  t.ok(SPORTS.some((s) => s.family === 'golf' && s.has_outrights), 'golf has outrights');
  t.equal(sportByKey('nope_nope'), undefined, 'unknown sport is undefined');
});

t.test('catalogue - three-way moneylines: every soccer league, no basketball', async (t) => {
  const soccer = SPORTS.filter((s) => s.family === 'soccer');
  t.ok(soccer.length >= 15, 'full soccer catalogue');
  for (const s of soccer) t.equal(s.three_way, true, `${s.key} is three-way`);
  for (const s of SPORTS.filter((x) => x.family === 'basketball')) t.equal(s.three_way, false, `${s.key} is two-way`);
  t.equal(sportByKey('icehockey_nhl')?.three_way, false, 'NHL moneyline is two-way');
});

t.test('catalogue - umbrella resolution', async (t) => {
  const soccer = resolveSportKeys('soccer');
  if (soccer === null) throw new Error('soccer umbrella did not resolve');
  const expected = SPORTS.filter((s) => s.family === 'soccer' && s.active).map((s) => s.key);
  t.same(soccer, expected, 'soccer gives every active soccer_ key in catalogue order');
  t.ok(soccer.includes('soccer_epl'), 'soccer includes EPL');
  for (const k of soccer) t.equal(sportByKey(k)?.active, true, `${k} is active`);
  const inactiveSoccer = SPORTS.find((s) => s.family === 'soccer' && !s.active);
  t.ok(inactiveSoccer, 'fixture: an inactive soccer league exists');
  t.notOk(soccer.includes(inactiveSoccer!.key), 'inactive league left out');

  for (const u of UMBRELLAS) {
    const kids = resolveSportKeys(u.key);
    t.ok(kids !== null && kids.length > 0, `${u.key} has active children`);
    for (const k of kids ?? []) t.ok(k.startsWith(u.prefix), `${k} has prefix ${u.prefix}`);
  }
  t.same(UMBRELLAS.map((u) => u.key).sort(), ['esports', 'golf', 'soccer', 'tennis'], 'the four umbrellas');

  t.equal(resolveSportKeys('curling'), null, 'unknown key gives null');
  t.equal(resolveSportKeys('soccer_'), null, 'bare prefix gives null');
  t.same(resolveSportKeys('basketball_nba'), ['basketball_nba'], 'concrete key gives itself');
  t.same(resolveSportKeys('tennis_atp_australian_open'), ['tennis_atp_australian_open'],
    'concrete inactive key still gives itself');

  const a = resolveSportKeys('soccer')!;
  a.length = 0;
  t.ok(resolveSportKeys('soccer')!.length > 0, 'mutating a result does not corrupt the catalogue');
});

t.test('catalogue - bookmaker status and notes', async (t) => {
  const byStatus = (st: string) => BOOKMAKERS.filter((b) => b.status === st);
  t.ok(byStatus('merged').length >= 3, 'at least 3 merged');
  t.ok(byStatus('decommissioned').length >= 3, 'at least 3 decommissioned');
  t.ok(byStatus('not_yet_integrated').length >= 2, 'at least 2 not yet integrated');
  for (const b of byStatus('merged')) {
    t.equal(bookByKey(b.merged_into ?? '')?.status, 'active', `${b.key} merged into an active book`);
    t.ok(b.note && b.note.length > 0, `${b.key} has a note`);
  }
  for (const b of [...byStatus('decommissioned'), ...byStatus('not_yet_integrated')]) {
    t.ok(b.note && b.note.length > 0, `${b.key} has a note`);
    t.equal(b.merged_into, undefined, `${b.key} is not merged`);
  }
  for (const b of byStatus('active')) {
    t.equal(b.note, undefined, `${b.key} active without a note`);
    t.equal(b.merged_into, undefined, `${b.key} active without merged_into`);
  }
});

t.test('catalogue - bookmaker kinds, regions, commissions, endpoints', async (t) => {
  const active = BOOKMAKERS.filter((b) => b.status === 'active');
  for (const r of REGIONS) t.ok(active.some((b) => b.regions.includes(r)), `region ${r} has an active book`);
  for (const k of ['sportsbook', 'exchange', 'prediction', 'dfs'] as BookKind[]) {
    t.ok(active.some((b) => b.kind === k), `kind ${k} present`);
  }
  for (const b of BOOKMAKERS) {
    t.ok(b.regions.length > 0 && b.regions.every(isRegion), `${b.key} regions are known`);
    t.equal(bookByKey(b.key), b, `bookByKey finds ${b.key}`);
    if (b.kind === 'exchange') t.ok(b.commission > 0 && b.commission < 1, `${b.key} commission in (0,1)`);
    else if (b.kind !== 'prediction') t.equal(b.commission, 0, `${b.key} has no commission`);
    if (b.kind !== 'prediction') t.equal(b.trading_fee_rate, 0, `${b.key} has no trading fee`);
    else t.ok(b.commission === 0 || b.trading_fee_rate === 0, `${b.key}: one fee model at most`);
    if (b.kind === 'dfs') t.ok(b.dfs_two_leg_payout > 1, `${b.key} has a 2-leg payout`);
    else t.equal(b.dfs_two_leg_payout, 0, `${b.key} has no dfs payout`);
    if (b.status !== 'active') continue;
    t.ok(b.endpoints.length > 0, `${b.key} has endpoints`);
    if (b.kind === 'dfs') t.same(b.endpoints, ['props', 'historical'], `${b.key} dfs serves props (and their closing lines) only`);
    t.ok(b.endpoints.includes('historical'), `${b.key}: its closing lines are captured and exported, so historical is listed`);
    if (b.kind === 'prediction') t.ok(b.endpoints.includes('prediction'), `${b.key} serves prediction`);
  }
});

t.test('catalogue - books the simulator relies on', async (t) => {
  const required: [string, BookKind, Region][] = [
    ['pinnacle', 'sportsbook', 'eu'], ['draftkings', 'sportsbook', 'us'], ['fanduel', 'sportsbook', 'us'],
    ['betmgm', 'sportsbook', 'us'], ['williamhill_us', 'sportsbook', 'us'], ['espnbet', 'sportsbook', 'us'],
    ['betrivers', 'sportsbook', 'us'], ['fanatics', 'sportsbook', 'us'], ['bovada', 'sportsbook', 'us'],
    ['betonlineag', 'sportsbook', 'us'], ['lowvig', 'sportsbook', 'us'], ['williamhill', 'sportsbook', 'uk'],
    ['paddypower', 'sportsbook', 'uk'], ['skybet', 'sportsbook', 'uk'], ['unibet_eu', 'sportsbook', 'eu'],
    ['betsson', 'sportsbook', 'eu'], ['onexbet', 'sportsbook', 'eu'], ['sportsbet', 'sportsbook', 'au'],
    ['tab', 'sportsbook', 'au'], ['betfair_ex_uk', 'exchange', 'uk'], ['smarkets', 'exchange', 'uk'],
    ['matchbook', 'exchange', 'uk'], ['kalshi', 'prediction', 'us'], ['polymarket', 'prediction', 'us'],
    ['prizepicks', 'dfs', 'us'], ['underdog', 'dfs', 'us'],
  ];
  for (const [key, kind, region] of required) {
    const b = bookByKey(key);
    t.ok(b, `${key} exists`);
    t.equal(b?.status, 'active', `${key} is active`);
    t.equal(b?.kind, kind, `${key} is a ${kind}`);
    t.ok(b?.regions.includes(region), `${key} is listed in ${region}`);
  }
  t.equal(bookByKey('betfair_ex_uk')?.commission, 0.05, 'betfair commission');
  t.same([bookByKey('kalshi')?.trading_fee_rate, bookByKey('kalshi')?.commission], [0.07, 0], 'kalshi: taker fee 0.07 * P * (1 - P) a contract');
  t.same([bookByKey('predictit')?.commission, bookByKey('predictit')?.trading_fee_rate], [0.1, 0], 'predictit: 10 % of the profit');
  t.same([bookByKey('polymarket')?.commission, bookByKey('polymarket')?.trading_fee_rate], [0, 0], 'polymarket: no trading fee');
  t.equal(bookByKey('smarkets')?.commission, 0.02, 'smarkets commission');
  t.equal(bookByKey('matchbook')?.commission, 0.02, 'matchbook commission');
  t.equal(bookByKey(DEFAULT_SHARP_BOOK)?.status, 'active', 'default sharp book is active');
  t.equal(DEFAULT_SHARP_BOOK, 'pinnacle', 'sharp book is pinnacle');
  t.equal(bookByKey('nope'), undefined, 'unknown book is undefined');
});

t.test('catalogue - booksForRegions', async (t) => {
  const uk = booksForRegions(['uk']);
  t.ok(uk.some((b) => b.key === 'betfair_ex_uk'), 'uk includes betfair_ex_uk');
  t.notOk(uk.some((b) => b.key === 'draftkings'), 'uk excludes draftkings');
  for (const b of uk) t.ok(b.status === 'active' && b.regions.includes('uk'), `${b.key} active and uk`);
  t.notOk(booksForRegions(['us']).some((b) => b.status !== 'active'), 'us excludes non-active books');
  t.notOk(booksForRegions(['us']).some((b) => b.key === 'foxbet'), 'decommissioned foxbet left out');

  const usEu = booksForRegions(['us', 'eu']);
  const expected = BOOKMAKERS.filter((b) => b.status === 'active' && (b.regions.includes('us') || b.regions.includes('eu')));
  t.same(usEu.map((b) => b.key), expected.map((b) => b.key), 'union of regions in catalogue order, no repeats');
  t.same(booksForRegions([]), [], 'no regions, no books');
  const all = booksForRegions(REGIONS);
  t.equal(all.length, BOOKMAKERS.filter((b) => b.status === 'active').length, 'all regions give every active book');
});

t.test('catalogue - markets', async (t) => {
  const games: [string, string, string][] = [
    ['h2h', 'Moneyline', 'two_way'], ['h2h_3_way', 'Moneyline 3-Way', 'three_way'],
    ['spreads', 'Point Spread', 'two_way'], ['totals', 'Total', 'over_under'],
  ];
  for (const [key, label, shape] of games) {
    const m = marketByKey(key);
    t.equal(m?.kind, 'game', `${key} is a game market`);
    t.equal(m?.label, label, `${key} label`);
    t.equal(m?.shape, shape, `${key} shape`);
    t.same(m?.families, [], `${key} applies to all families`);
  }
  const requiredProps = [
    'player_points', 'player_rebounds', 'player_assists', 'player_three_pointers', 'player_strikeouts',
    'player_hits', 'player_home_runs', 'player_total_bases', 'player_runs', 'player_rbis', 'player_goals',
    'player_shots_on_goal', 'player_pts_rebs_asts', 'player_pass_yds',
  ];
  for (const key of requiredProps) {
    const m = marketByKey(key);
    t.equal(m?.kind, 'prop', `${key} is a prop`);
    t.ok(m && m.label.trim().length > 0, `${key} has a label`);
  }
  // outrights are a selection market: a per-selection line of two sides like a prop, but the selection is a team,
  // a player or a horse, so its key is The Odds API's, not player_ prefixed
  for (const m of MARKETS.filter((x) => x.kind === 'prop')) {
    if (isOutright(m)) continue;
    t.match(m.key, /^player_[a-z0-9_]+$/, `${m.key} is player_ prefixed`);
    t.equal(m.shape, 'over_under', `${m.key} is over/under`);
    t.ok(m.families.length > 0 && m.families.every((f) => FAMILIES.includes(f)), `${m.key} families known`);
  }
  const outrights = MARKETS.filter(isOutright);
  t.same(outrights.map((m) => m.key), ['outrights'], 'one outright market, under its v4 key');
  t.same([outrights[0].kind, outrights[0].shape], ['prop', 'over_under'], 'a selection line with Yes and No sides');
  t.same([...outrights[0].families].sort(), [...FAMILIES].sort(), 'outrights apply to every family');
  t.same(dupes(MARKETS.map((m) => m.label.toLowerCase())), [], 'one label per market, none shared');
  t.equal(marketByKey('batter_hits'), undefined, 'no batter_ keys');
});

t.test('catalogue - marketsForFamily', async (t) => {
  const nba = marketsForFamily('basketball').map((m) => m.key);
  for (const k of ['h2h', 'spreads', 'totals', 'player_points', 'player_pts_rebs_asts']) {
    t.ok(nba.includes(k), `basketball offers ${k}`);
  }
  t.notOk(nba.includes('player_pass_yds'), 'basketball does not offer passing yards');
  const nhl = marketsForFamily('icehockey').map((m) => m.key);
  t.ok(nhl.includes('player_assists') && nhl.includes('player_goals'), 'hockey reuses assists and goals');
  t.same(marketsForFamily('unknown').map((m) => m.kind), ['game', 'game', 'game', 'game'], 'unknown family: game markets');
});

t.test('catalogue - isRegion and frozen data', async (t) => {
  t.equal(isRegion('uk'), true, 'uk is a region');
  t.equal(isRegion('us_dfs'), false, 'us_dfs is not a region');
  t.equal(isRegion(3), false, 'a number is not a region');
  t.throws(() => { (bookByKey('pinnacle') as { title: string }).title = 'x'; }, TypeError, 'book records are frozen');
  t.throws(() => { (SPORTS as unknown as unknown[]).push(1); }, TypeError, 'SPORTS is frozen');
});
