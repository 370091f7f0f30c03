// Static catalogue of regions, sports, bookmakers and markets, with O(1) lookups built once at load.
// Keys follow The Odds API v4 where a v4 key exists. Pure data: no I/O.

import type {
  BookDef,
  BookEndpoint,
  BookKind,
  MarketDef,
  OutcomeShape,
  Region,
  SportDef,
  UmbrellaDef,
} from './types.js';

export const REGIONS: readonly Region[] = Object.freeze<Region[]>([
  'us', 'us2', 'uk', 'eu', 'fr', 'au', 'ca', 'mx', 'latam', 'br', 'asia',
]);

export const DEFAULT_SHARP_BOOK = 'pinnacle';

/** Frozen copy typed as the mutable array the shared types declare; writes throw at run time. */
function frozen<T>(items: readonly T[]): T[] {
  return Object.freeze([...items]) as T[];
}

const REGION_SET: ReadonlySet<string> = new Set(REGIONS);

export function isRegion(s: unknown): s is Region {
  return typeof s === 'string' && REGION_SET.has(s);
}

// ---------------------------------------------------------------------------------------------------------------
// Sports

const OFF = 1; // not in season: listed only with `all=true`
const OUT = 2; // outright / futures market available
const X3 = 4; // three-way moneyline outside soccer (a draw is a standard result)

type SportRow = readonly [key: string, title: string, description: string, flags?: number];

function family(fam: string, group: string, rows: readonly SportRow[]): SportDef[] {
  return rows.map(([key, title, description, flags = 0]) => Object.freeze({
    key,
    group,
    title,
    description,
    active: (flags & OFF) === 0,
    has_outrights: (flags & OUT) !== 0,
    three_way: fam === 'soccer' || (flags & X3) !== 0,
    family: fam,
  }));
}

export const SPORTS: readonly SportDef[] = Object.freeze([
  ...family('americanfootball', 'American Football', [
    ['americanfootball_nfl', 'NFL', 'US Football'],
    ['americanfootball_ncaaf', 'NCAAF', 'US College Football'],
    ['americanfootball_cfl', 'CFL', 'Canadian Football', OFF],
    ['americanfootball_ufl', 'UFL', 'United Football League', OFF],
    ['americanfootball_nfl_super_bowl_winner', 'NFL Super Bowl Winner', 'Super Bowl Winner', OUT],
  ]),
  ...family('basketball', 'Basketball', [
    ['basketball_nba', 'NBA', 'US Basketball'],
    ['basketball_wnba', 'WNBA', 'US Basketball'],
    ['basketball_ncaab', 'NCAAB', 'US College Basketball'],
    ['basketball_wncaab', 'NCAAW', "US Women's College Basketball"],
    ['basketball_euroleague', 'Basketball Euroleague', 'Basketball Euroleague'],
    ['basketball_nbl', 'NBL', 'AU National Basketball League'],
    ['basketball_nba_championship_winner', 'NBA Championship Winner', 'Championship Winner', OUT],
  ]),
  ...family('baseball', 'Baseball', [
    ['baseball_mlb', 'MLB', 'Major League Baseball'],
    ['baseball_npb', 'NPB', 'Nippon Professional Baseball'],
    ['baseball_kbo', 'KBO', 'KBO League'],
    ['baseball_ncaa', 'NCAA Baseball', 'US College Baseball'],
    ['baseball_mlb_world_series_winner', 'MLB World Series Winner', 'World Series Winner', OUT],
  ]),
  ...family('icehockey', 'Ice Hockey', [
    ['icehockey_nhl', 'NHL', 'US Ice Hockey'],
    ['icehockey_ahl', 'AHL', 'American Hockey League'],
    ['icehockey_sweden_hockey_league', 'SHL', 'Swedish Hockey League'],
    ['icehockey_sweden_allsvenskan', 'HockeyAllsvenskan', 'Swedish Hockey Allsvenskan'],
    ['icehockey_liiga', 'Liiga', 'Finnish SM League'],
    ['icehockey_nhl_championship_winner', 'NHL Championship Winner', 'Stanley Cup Winner', OUT],
  ]),
  ...family('soccer', 'Soccer', [
    ['soccer_epl', 'EPL', 'English Premier League'],
    ['soccer_efl_champ', 'Championship', 'EFL Championship'],
    ['soccer_england_league1', 'League 1', 'EFL League 1'],
    ['soccer_fa_cup', 'FA Cup', 'Football Association Challenge Cup'],
    ['soccer_spain_la_liga', 'La Liga - Spain', 'Spanish Soccer'],
    ['soccer_germany_bundesliga', 'Bundesliga - Germany', 'German Soccer'],
    ['soccer_italy_serie_a', 'Serie A - Italy', 'Italian Soccer'],
    ['soccer_france_ligue_one', 'Ligue 1 - France', 'French Soccer'],
    ['soccer_netherlands_eredivisie', 'Dutch Eredivisie', 'Dutch Soccer'],
    ['soccer_portugal_primeira_liga', 'Primeira Liga - Portugal', 'Portuguese Soccer'],
    ['soccer_uefa_champs_league', 'UEFA Champions League', 'European Champions League'],
    ['soccer_uefa_europa_league', 'UEFA Europa League', 'European Europa League'],
    ['soccer_usa_mls', 'MLS', 'Major League Soccer'],
    ['soccer_mexico_ligamx', 'Liga MX', 'Mexican Soccer'],
    ['soccer_brazil_campeonato', 'Brazil Série A', 'Brasileirão Série A'],
    ['soccer_argentina_primera_division', 'Primera División - Argentina', 'Argentine Primera División'],
    ['soccer_japan_j_league', 'J League', 'Japan Soccer League'],
    ['soccer_australia_aleague', 'A-League', 'Aussie Soccer'],
    ['soccer_fifa_world_cup', 'FIFA World Cup', 'FIFA World Cup', OFF | OUT],
  ]),
  ...family('mma', 'Mixed Martial Arts', [
    ['mma_mixed_martial_arts', 'MMA', 'Mixed Martial Arts'],
  ]),
  ...family('boxing', 'Boxing', [
    ['boxing_boxing', 'Boxing', 'Boxing Bouts'],
  ]),
  ...family('cricket', 'Cricket', [
    ['cricket_ipl', 'IPL', 'Indian Premier League'],
    ['cricket_test_match', 'Test Matches', 'International Test Matches', X3],
    ['cricket_odi', 'One Day Internationals', 'One Day Internationals'],
    ['cricket_international_t20', 'International Twenty20', 'International Twenty20'],
    ['cricket_big_bash', 'Big Bash', 'Big Bash League', OFF],
  ]),
  ...family('horse_racing', 'Horse Racing', [
    ['horse_racing_uk', 'UK Racing', 'UK Horse Racing', OUT],
    ['horse_racing_us', 'US Racing', 'US Horse Racing', OUT],
  ]),
  ...family('discgolf', 'Disc Golf', [
    ['discgolf_pdga', 'PDGA', 'Professional Disc Golf Association', OUT],
  ]),
  ...family('esports', 'Esports', [
    ['esports_lol', 'League of Legends', 'LoL Esports'],
    ['esports_csgo', 'Counter-Strike', 'CS2 Esports'],
    ['esports_dota2', 'Dota 2', 'Dota 2 Esports'],
    ['esports_valorant', 'Valorant', 'Valorant Esports'],
  ]),
  ...family('volleyball', 'Volleyball', [
    ['volleyball_nations_league', 'VNL', 'Volleyball Nations League'],
  ]),
  ...family('tabletennis', 'Table Tennis', [
    ['tabletennis_ttstar', 'TT Star Series', 'Table Tennis Star Series'],
  ]),
  ...family('tennis', 'Tennis', [
    ['tennis_atp_australian_open', 'ATP Australian Open', "Men's Singles", OFF],
    ['tennis_wta_australian_open', 'WTA Australian Open', "Women's Singles", OFF],
    ['tennis_atp_finals', 'ATP Finals', "Men's Singles Season Finale"],
    ['tennis_atp_french_open', 'ATP French Open', "Men's Singles"],
    ['tennis_wta_french_open', 'WTA French Open', "Women's Singles"],
    ['tennis_atp_wimbledon', 'ATP Wimbledon', "Men's Singles"],
    ['tennis_wta_wimbledon', 'WTA Wimbledon', "Women's Singles"],
    ['tennis_atp_us_open', 'ATP US Open', "Men's Singles", OFF],
    ['tennis_wta_us_open', 'WTA US Open', "Women's Singles", OFF],
  ]),
  ...family('golf', 'Golf', [
    ['golf_masters_tournament', 'Masters Tournament Winner', 'Masters Tournament winner', OUT],
    ['golf_pga_championship', 'PGA Championship Winner', 'PGA Championship winner', OUT],
    ['golf_us_open', 'US Open Winner', 'US Open (golf) winner', OUT],
    ['golf_the_open_championship', 'The Open Winner', 'The Open Championship winner', OUT],
  ]),
]);

export const UMBRELLAS: readonly UmbrellaDef[] = Object.freeze([
  Object.freeze({ key: 'soccer', title: 'Soccer (all leagues)', prefix: 'soccer_' }),
  Object.freeze({ key: 'tennis', title: 'Tennis (all tournaments)', prefix: 'tennis_' }),
  Object.freeze({ key: 'esports', title: 'Esports (all titles)', prefix: 'esports_' }),
  Object.freeze({ key: 'golf', title: 'Golf (all tournaments)', prefix: 'golf_' }),
]);

// ---------------------------------------------------------------------------------------------------------------
// Bookmakers

const FULL: readonly BookEndpoint[] = ['game_lines', 'live', 'props', 'historical'];
const LINES_PROPS: readonly BookEndpoint[] = ['game_lines', 'live', 'props'];
const LINES_HIST: readonly BookEndpoint[] = ['game_lines', 'live', 'historical'];
const LINES: readonly BookEndpoint[] = ['game_lines', 'live'];
const EXCHANGE: readonly BookEndpoint[] = ['game_lines', 'live', 'historical'];
const PREDICTION: readonly BookEndpoint[] = ['prediction', 'event_markets', 'game_lines'];
const DFS: readonly BookEndpoint[] = ['props'];
/** Retired books keep their recorded closing lines. */
const RETIRED: readonly BookEndpoint[] = ['historical'];

function book(
  key: string, title: string, kind: BookKind, regions: readonly Region[], endpoints: readonly BookEndpoint[],
  commission = 0, dfs_two_leg_payout = 0, trading_fee_rate = 0,
): BookDef {
  return Object.freeze({
    key, title, kind,
    regions: frozen(regions),
    status: 'active' as const,
    commission,
    trading_fee_rate,
    // every active book's closing lines are captured (workers/history-service.ts) and exported
    endpoints: frozen<BookEndpoint>(endpoints.includes('historical') ? endpoints : [...endpoints, 'historical']),
    dfs_two_leg_payout,
  });
}

const sb = (key: string, title: string, regions: readonly Region[], endpoints = LINES): BookDef =>
  book(key, title, 'sportsbook', regions, endpoints);
const ex = (key: string, title: string, regions: readonly Region[], commission: number): BookDef =>
  book(key, title, 'exchange', regions, EXCHANGE, commission);
/** a prediction market, with what it takes from a bettor: `fee` on profits (as an exchange's commission) or
 *  `tradingFee`, the rate of a fee of rate * P * (1 - P) per contract bought at P */
const pm = (key: string, title: string, regions: readonly Region[], fees: { fee?: number; tradingFee?: number } = {}): BookDef =>
  book(key, title, 'prediction', regions, PREDICTION, fees.fee ?? 0, 0, fees.tradingFee ?? 0);
const dfs = (key: string, title: string, regions: readonly Region[], twoLegPayout: number): BookDef =>
  book(key, title, 'dfs', regions, DFS, 0, twoLegPayout);

function merged(key: string, title: string, regions: readonly Region[], into: string, note: string): BookDef {
  return Object.freeze({
    key, title, kind: 'sportsbook' as const, regions: frozen(regions),
    status: 'merged' as const, merged_into: into, note, commission: 0, trading_fee_rate: 0,
    endpoints: frozen(RETIRED), dfs_two_leg_payout: 0,
  });
}

function decommissioned(key: string, title: string, regions: readonly Region[], note: string): BookDef {
  return Object.freeze({
    key, title, kind: 'sportsbook' as const, regions: frozen(regions),
    status: 'decommissioned' as const, note, commission: 0, trading_fee_rate: 0,
    endpoints: frozen(RETIRED), dfs_two_leg_payout: 0,
  });
}

function notYetIntegrated(key: string, title: string, regions: readonly Region[], note: string): BookDef {
  return Object.freeze({
    key, title, kind: 'sportsbook' as const, regions: frozen(regions),
    status: 'not_yet_integrated' as const, note, commission: 0, trading_fee_rate: 0,
    endpoints: frozen<BookEndpoint>([]), dfs_two_leg_payout: 0,
  });
}

export const BOOKMAKERS: readonly BookDef[] = Object.freeze([
  // us
  sb('draftkings', 'DraftKings', ['us'], FULL),
  sb('fanduel', 'FanDuel', ['us'], FULL),
  sb('betmgm', 'BetMGM', ['us'], FULL),
  sb('williamhill_us', 'Caesars', ['us'], FULL),
  sb('espnbet', 'ESPN BET', ['us', 'us2'], FULL),
  sb('betrivers', 'BetRivers', ['us'], FULL),
  sb('fanatics', 'Fanatics', ['us'], FULL),
  sb('bovada', 'Bovada', ['us'], FULL),
  sb('betonlineag', 'BetOnline.ag', ['us', 'eu'], FULL),
  sb('lowvig', 'LowVig.ag', ['us'], LINES_HIST),
  sb('mybookieag', 'MyBookie.ag', ['us', 'eu'], LINES),
  sb('betus', 'BetUS', ['us'], LINES),
  // us2
  sb('ballybet', 'Bally Bet', ['us2'], LINES_PROPS),
  sb('betanysports', 'BetAnySports', ['us2'], LINES),
  sb('betparx', 'betPARX', ['us2'], LINES_PROPS),
  sb('fliff', 'Fliff', ['us2'], LINES_PROPS),
  sb('hardrockbet', 'Hard Rock Bet', ['us2'], LINES_PROPS),
  sb('rebet', 'ReBet', ['us2'], LINES),
  sb('windcreek', 'Wind Creek (Betfred PA)', ['us2'], LINES),
  // uk
  sb('williamhill', 'William Hill', ['uk', 'eu'], FULL),
  sb('paddypower', 'Paddy Power', ['uk'], FULL),
  sb('skybet', 'Sky Bet', ['uk'], FULL),
  sb('sport888', '888sport', ['uk', 'eu'], LINES_PROPS),
  sb('betfair_sb_uk', 'Betfair Sportsbook', ['uk'], LINES_PROPS),
  sb('betvictor', 'Bet Victor', ['uk', 'eu'], LINES_PROPS),
  sb('betway', 'Betway', ['uk'], LINES_PROPS),
  sb('boylesports', 'BoyleSports', ['uk'], LINES),
  sb('casumo', 'Casumo', ['uk'], LINES),
  sb('coral', 'Coral', ['uk'], LINES_PROPS),
  sb('grosvenor', 'Grosvenor', ['uk'], LINES),
  sb('ladbrokes_uk', 'Ladbrokes', ['uk'], LINES_PROPS),
  sb('leovegas', 'LeoVegas', ['uk'], LINES),
  sb('livescorebet', 'LiveScore Bet', ['uk'], LINES),
  sb('unibet_uk', 'Unibet', ['uk'], LINES_PROPS),
  sb('virginbet', 'Virgin Bet', ['uk'], LINES),
  ex('betfair_ex_uk', 'Betfair', ['uk'], 0.05),
  ex('smarkets', 'Smarkets', ['uk'], 0.02),
  ex('matchbook', 'Matchbook', ['uk'], 0.02),
  ex('betdaq', 'Betdaq', ['uk'], 0.02),
  // eu
  sb('pinnacle', 'Pinnacle', ['eu'], FULL),
  sb('unibet_eu', 'Unibet', ['eu'], LINES_PROPS),
  sb('betsson', 'Betsson', ['eu'], LINES_PROPS),
  sb('onexbet', '1xBet', ['eu'], LINES_PROPS),
  sb('betclic', 'Betclic', ['eu'], LINES),
  sb('coolbet', 'Coolbet', ['eu'], LINES),
  sb('everygame', 'Everygame', ['eu'], LINES),
  sb('gtbets', 'GTbets', ['eu'], LINES),
  sb('marathonbet', 'Marathon Bet', ['eu'], LINES_HIST),
  sb('nordicbet', 'Nordic Bet', ['eu'], LINES),
  sb('suprabets', 'Suprabets', ['eu'], LINES),
  sb('tipico_de', 'Tipico (DE)', ['eu'], LINES),
  sb('winamax_de', 'Winamax (DE)', ['eu'], LINES),
  ex('betfair_ex_eu', 'Betfair', ['eu'], 0.05),
  // fr
  sb('winamax_fr', 'Winamax (FR)', ['fr', 'eu'], LINES_PROPS),
  sb('betclic_fr', 'Betclic (FR)', ['fr'], LINES_PROPS),
  sb('parionssport_fr', 'Parions Sport (FR)', ['fr'], LINES),
  sb('unibet_fr', 'Unibet (FR)', ['fr'], LINES),
  // au
  sb('sportsbet', 'SportsBet', ['au'], FULL),
  sb('tab', 'TAB', ['au'], FULL),
  sb('tabtouch', 'TABtouch', ['au'], LINES),
  sb('ladbrokes_au', 'Ladbrokes', ['au'], LINES_PROPS),
  sb('neds', 'Neds', ['au'], LINES_PROPS),
  sb('pointsbetau', 'PointsBet (AU)', ['au'], LINES_PROPS),
  sb('betr_au', 'Betr', ['au'], LINES),
  sb('betright', 'Bet Right', ['au'], LINES),
  sb('playup', 'PlayUp', ['au'], LINES),
  ex('betfair_ex_au', 'Betfair', ['au'], 0.05),
  // ca
  sb('thescore', 'theScore Bet', ['ca'], LINES_PROPS),
  sb('sportsinteraction', 'Sports Interaction', ['ca'], LINES),
  sb('proline', 'PROLINE+', ['ca'], LINES),
  // mx
  sb('caliente', 'Caliente', ['mx', 'latam'], LINES_PROPS),
  sb('codere_mx', 'Codere (MX)', ['mx'], LINES),
  sb('strendus', 'Strendus', ['mx'], LINES),
  // latam
  sb('betcris', 'Betcris', ['latam'], LINES),
  sb('rushbet', 'Rushbet', ['latam'], LINES),
  sb('wplay', 'Wplay', ['latam'], LINES),
  // br
  sb('betano_br', 'Betano (BR)', ['br'], LINES_PROPS),
  sb('sportingbet_br', 'Sportingbet (BR)', ['br'], LINES),
  sb('estrelabet', 'EstrelaBet', ['br'], LINES),
  // asia
  sb('sbobet', 'SBOBET', ['asia'], LINES_HIST),
  sb('dafabet', 'Dafabet', ['asia'], LINES),
  sb('fun88', 'FUN88', ['asia'], LINES),
  // us exchanges and prediction markets
  ex('prophetx', 'ProphetX', ['us'], 0.03),
  // what each takes from a winning bettor (their published schedules): Kalshi a taker fee of 0.07 * P * (1 - P) per
  // contract (rounded up to the cent per order, not modelled), PredictIt 10 % of the profit, Polymarket no trading fee
  pm('kalshi', 'Kalshi', ['us'], { tradingFee: 0.07 }),
  pm('polymarket', 'Polymarket', ['us']),
  pm('predictit', 'PredictIt', ['us'], { fee: 0.1 }),
  // us daily fantasy pick'em
  dfs('prizepicks', 'PrizePicks', ['us'], 3.0),
  dfs('underdog', 'Underdog Fantasy', ['us'], 3.0),
  dfs('sleeper', 'Sleeper', ['us'], 3.0),
  dfs('pick6', 'DraftKings Pick6', ['us'], 3.0),
  dfs('betr_us_dfs', 'Betr Picks', ['us'], 3.0),
  // not active
  merged('pointsbetus', 'PointsBet (US)', ['us'], 'fanatics',
    'PointsBet US was acquired by Fanatics in 2023; its markets are served under fanatics.'),
  merged('barstool', 'Barstool Sportsbook', ['us'], 'espnbet',
    'Barstool Sportsbook was rebranded as ESPN BET in 2023; use espnbet.'),
  merged('sugarhouse', 'SugarHouse', ['us'], 'betrivers',
    'SugarHouse was rebranded as BetRivers; use betrivers.'),
  merged('unibet', 'Unibet', ['au'], 'ladbrokes_au',
    'Unibet Australia customers were moved to Ladbrokes in 2023; use ladbrokes_au.'),
  decommissioned('foxbet', 'FOX Bet', ['us'], 'FOX Bet stopped taking bets in 2023; only historical lines remain.'),
  decommissioned('wynnbet', 'WynnBET', ['us'], 'WynnBET left online sports betting in 2023; only historical lines remain.'),
  decommissioned('unibet_us', 'Unibet (US)', ['us'], 'Unibet left the US market in 2024; only historical lines remain.'),
  decommissioned('twinspires', 'TwinSpires', ['us'], 'TwinSpires closed its sportsbook in 2023; only historical lines remain.'),
  notYetIntegrated('bet365', 'Bet365', ['uk', 'eu', 'au'], 'Feed integration in progress; no prices yet.'),
  notYetIntegrated('circasports', 'Circa Sports', ['us'], 'Feed integration planned; no prices yet.'),
  notYetIntegrated('singbet', 'Singbet', ['asia'], 'Feed integration planned; no prices yet.'),
]);

// ---------------------------------------------------------------------------------------------------------------
// Markets

function game(key: string, label: string, shape: OutcomeShape): MarketDef {
  return Object.freeze({ key, label, kind: 'game' as const, shape, families: frozen<string>([]) });
}

type PropRow = readonly [key: string, label: string];

/** Player props: every prop is an over/under on a line (yes/no props use a 0.5 line). */
function props(families: readonly string[], rows: readonly PropRow[]): MarketDef[] {
  const fams = frozen(families);
  return rows.map(([key, label]) => Object.freeze({ key, label, kind: 'prop' as const, shape: 'over_under' as const, families: fams }));
}

/** The Odds API v4's outright key: who wins a season, a tournament, an award or a race. */
export const OUTRIGHTS = 'outrights';

/**
 * An outright market maps onto the store as one line per selection (a team, a player, a horse), the selection in
 * the line's player slot, with no point and two outcomes: slot 0 the selection wins ("Yes": the price a
 * sportsbook posts on the selection, The Odds API's outcome named after it), slot 1 it does not ("No": a
 * prediction market's or an exchange's opposite contract). Yes and No of one selection are complementary, so
 * their arbitrage, EV and consensus are those of any two-way line; with no point, a selection has one line per
 * event and forms no middle. It is held only on events without teams (futures and event markets, engine/ingest.ts)
 * and applies to every sport family. It is a `prop` by shape: a per-selection line with two sides.
 */
function outright(key: string, label: string): MarketDef {
  const fams = frozen([...new Set(SPORTS.map((s) => s.family))]);
  return Object.freeze({ key, label, kind: 'prop' as const, shape: 'over_under' as const, families: fams });
}

export const MARKETS: readonly MarketDef[] = Object.freeze([
  game('h2h', 'Moneyline', 'two_way'),
  game('h2h_3_way', 'Moneyline 3-Way', 'three_way'),
  game('spreads', 'Point Spread', 'two_way'),
  game('totals', 'Total', 'over_under'),
  // shared across families: one key per concept
  ...props(['basketball', 'icehockey'], [['player_points', 'Points']]),
  ...props(['basketball', 'icehockey', 'soccer', 'esports'], [['player_assists', 'Assists']]),
  ...props(['basketball', 'volleyball'], [['player_blocks', 'Blocks']]),
  ...props(['icehockey', 'soccer'], [
    ['player_goals', 'Goals'],
    ['player_shots_on_goal', 'Shots on Goal'],
    ['player_saves', 'Goalie Saves'],
  ]),
  ...props(['americanfootball', 'soccer'], [['player_tackles', 'Tackles']]),
  ...props(['baseball', 'cricket'], [['player_runs', 'Runs Scored']]),
  ...props(['tennis', 'volleyball'], [['player_aces', 'Aces']]),
  ...props(['tennis', 'tabletennis'], [['player_games_won', 'Games Won']]),
  ...props(['esports', 'volleyball'], [['player_kills', 'Kills']]),
  ...props(['golf', 'discgolf'], [
    ['player_birdies', 'Birdies'],
    ['player_round_score', 'Round Score'],
  ]),
  ...props(['basketball', 'baseball', 'americanfootball', 'icehockey', 'soccer', 'esports'], [
    ['player_fantasy_points', 'Fantasy Score'],
  ]),
  ...props(['basketball'], [
    ['player_rebounds', 'Rebounds'],
    ['player_three_pointers', 'Three-Pointers Made'],
    ['player_three_pointers_attempted', 'Three-Pointers Attempted'],
    ['player_free_throws_made', 'Free Throws Made'],
    ['player_steals', 'Steals'],
    ['player_turnovers', 'Turnovers'],
    ['player_blocks_steals', 'Blocks + Steals'],
    ['player_points_rebounds', 'Points + Rebounds'],
    ['player_points_assists', 'Points + Assists'],
    ['player_rebounds_assists', 'Rebounds + Assists'],
    ['player_pts_rebs_asts', 'Points + Rebounds + Assists'],
    ['player_double_double', 'Double-Double'],
    ['player_triple_double', 'Triple-Double'],
  ]),
  ...props(['baseball'], [
    ['player_strikeouts', 'Strikeouts'],
    ['player_hits', 'Hits'],
    ['player_home_runs', 'Home Runs'],
    ['player_total_bases', 'Total Bases'],
    ['player_rbis', 'RBIs'],
    ['player_hits_runs_rbis', 'Hits + Runs + RBIs'],
    ['player_singles', 'Singles'],
    ['player_doubles', 'Doubles'],
    ['player_triples', 'Triples'],
    ['player_walks', 'Walks'],
    ['player_stolen_bases', 'Stolen Bases'],
    ['player_pitcher_outs', 'Pitcher Outs Recorded'],
    ['player_earned_runs', 'Earned Runs Allowed'],
    ['player_hits_allowed', 'Hits Allowed'],
    ['player_pitches_thrown', 'Pitches Thrown'],
  ]),
  ...props(['americanfootball'], [
    ['player_pass_yds', 'Passing Yards'],
    ['player_pass_tds', 'Passing Touchdowns'],
    ['player_pass_completions', 'Pass Completions'],
    ['player_pass_attempts', 'Pass Attempts'],
    ['player_pass_interceptions', 'Interceptions Thrown'],
    ['player_pass_longest_completion', 'Longest Completion'],
    ['player_rush_yds', 'Rushing Yards'],
    ['player_rush_attempts', 'Rush Attempts'],
    ['player_rush_longest', 'Longest Rush'],
    ['player_receptions', 'Receptions'],
    ['player_reception_yds', 'Receiving Yards'],
    ['player_reception_longest', 'Longest Reception'],
    ['player_pass_rush_yds', 'Passing + Rushing Yards'],
    ['player_rush_reception_yds', 'Rushing + Receiving Yards'],
    ['player_anytime_td', 'Anytime Touchdown'],
    ['player_sacks', 'Sacks'],
    ['player_defensive_interceptions', 'Defensive Interceptions'],
    ['player_field_goals', 'Field Goals Made'],
    ['player_kicking_points', 'Kicking Points'],
    ['player_pats', 'Extra Points Made'],
  ]),
  ...props(['icehockey'], [
    ['player_power_play_points', 'Power Play Points'],
    ['player_blocked_shots', 'Blocked Shots'],
    ['player_faceoffs_won', 'Faceoffs Won'],
  ]),
  ...props(['soccer'], [
    ['player_shots', 'Shots'],
    ['player_cards', 'Cards'],
    ['player_fouls', 'Fouls Committed'],
    ['player_passes', 'Passes Completed'],
    ['player_offsides', 'Offsides'],
    ['player_clearances', 'Clearances'],
  ]),
  ...props(['tennis'], [
    ['player_double_faults', 'Double Faults'],
    ['player_sets_won', 'Sets Won'],
    ['player_break_points_won', 'Break Points Won'],
  ]),
  ...props(['esports'], [
    ['player_headshots', 'Headshots'],
    ['player_deaths', 'Deaths'],
    ['player_creep_score', 'Creep Score'],
  ]),
  ...props(['mma'], [
    ['player_significant_strikes', 'Significant Strikes'],
    ['player_takedowns', 'Takedowns'],
  ]),
  ...props(['boxing'], [['player_punches_landed', 'Punches Landed']]),
  ...props(['cricket'], [
    ['player_wickets', 'Wickets'],
    ['player_sixes', 'Sixes'],
    ['player_fours', 'Fours'],
  ]),
  ...props(['volleyball'], [['player_digs', 'Digs']]),
  // last, so the ids of the markets above stay what they were
  outright(OUTRIGHTS, 'Outright Winner'),
]);

/** The selection market of futures and event markets (The Odds API v4 key). */
export function isOutright(market: MarketDef): boolean {
  return market.key === OUTRIGHTS;
}

// ---------------------------------------------------------------------------------------------------------------
// Lookups, built once at load

function index<T extends { key: string }>(what: string, rows: readonly T[]): Map<string, T> {
  const m = new Map<string, T>();
  for (const r of rows) {
    if (m.has(r.key)) throw new Error(`catalogue: duplicate ${what} key ${r.key}`);
    m.set(r.key, r);
  }
  return m;
}

const SPORT_BY_KEY = index('sport', SPORTS);
const BOOK_BY_KEY = index('bookmaker', BOOKMAKERS);
const MARKET_BY_KEY = index('market', MARKETS);
const UMBRELLA_BY_KEY = index('umbrella', UMBRELLAS);

/** Umbrella key -> active child sport keys, in catalogue order. */
const UMBRELLA_CHILDREN = new Map<string, readonly string[]>(
  UMBRELLAS.map((u) => [u.key, Object.freeze(SPORTS.filter((s) => s.active && s.key.startsWith(u.prefix)).map((s) => s.key))]),
);

/** Bit i set when a book lists REGIONS[i]; lets booksForRegions test membership with one AND. */
const REGION_BIT = new Map<Region, number>(REGIONS.map((r, i) => [r, 1 << i]));
const ACTIVE_BOOKS = BOOKMAKERS.filter((b) => b.status === 'active');
const ACTIVE_BOOK_MASKS = ACTIVE_BOOKS.map((b) => b.regions.reduce((m, r) => m | (REGION_BIT.get(r) ?? 0), 0));

const GAME_MARKETS = MARKETS.filter((m) => m.kind === 'game');
const MARKETS_BY_FAMILY = new Map<string, readonly MarketDef[]>();
for (const fam of new Set(SPORTS.map((s) => s.family))) {
  MARKETS_BY_FAMILY.set(fam, Object.freeze(MARKETS.filter((m) => m.kind === 'game' || m.families.includes(fam))));
}

export function sportByKey(key: string): SportDef | undefined {
  return SPORT_BY_KEY.get(key);
}

/** Sport keys (as resolveSportKeys gives them) that hold outrights alone, v4's futures sports such as
 *  basketball_nba_championship_winner: no game to list, stream or price as a game line. */
export function outrightsOnly(keys: readonly string[]): boolean {
  return keys.every((k) => SPORT_BY_KEY.get(k)?.has_outrights === true);
}

export function bookByKey(key: string): BookDef | undefined {
  return BOOK_BY_KEY.get(key);
}

export function marketByKey(key: string): MarketDef | undefined {
  return MARKET_BY_KEY.get(key);
}

export function umbrellaByKey(key: string): UmbrellaDef | undefined {
  return UMBRELLA_BY_KEY.get(key);
}

/**
 * A concrete sport key (active or not) gives `[key]`; an umbrella key gives its active children in catalogue
 * order (possibly empty); an unknown key gives null. The result is a fresh array.
 */
export function resolveSportKeys(key: string): string[] | null {
  if (SPORT_BY_KEY.has(key)) return [key];
  const children = UMBRELLA_CHILDREN.get(key);
  return children === undefined ? null : [...children];
}

/** Active books listed in any of `regions`, in catalogue order. */
export function booksForRegions(regions: readonly Region[]): BookDef[] {
  let mask = 0;
  for (const r of regions) mask |= REGION_BIT.get(r) ?? 0;
  const out: BookDef[] = [];
  for (let i = 0; i < ACTIVE_BOOKS.length; i++) {
    if ((ACTIVE_BOOK_MASKS[i]! & mask) !== 0) out.push(ACTIVE_BOOKS[i]!);
  }
  return out;
}

/**
 * Markets offered for a sport family: the game markets (which apply to every family) followed by the props
 * listing that family. An unknown family gets the game markets only. The result is a fresh array.
 */
export function marketsForFamily(family: string): MarketDef[] {
  return [...(MARKETS_BY_FAMILY.get(family) ?? GAME_MARKETS)];
}
