// The simulator's tables: the markets it prices, the sports with their teams, rosters and scoring models, and
// the name pools of individual sports. Data only (engine/simulator.ts is the model).

// ---------------------------------------------------------------------------------------------------------------
// Markets

export const SIM_MARKETS: readonly string[] = Object.freeze([
  'h2h', 'h2h_3_way', 'spreads', 'totals',
  'player_points', 'player_rebounds', 'player_assists', 'player_three_pointers', 'player_pts_rebs_asts',
  'player_strikeouts', 'player_hits', 'player_total_bases', 'player_home_runs',
  'player_pass_yds', 'player_rush_yds', 'player_reception_yds', 'player_receptions',
  'player_shots_on_goal', 'player_goals',
]);

export const H2H = 0;
export const H2H_3WAY = 1;
export const SPREADS = 2;
export const TOTALS = 3;
export const FIRST_PROP = 4;

export function market(key: string): number {
  const i = SIM_MARKETS.indexOf(key);
  if (i < 0) throw new Error(`simulator: unknown market ${key}`);
  return i;
}

export const STRIKEOUTS = market('player_strikeouts');

// ---------------------------------------------------------------------------------------------------------------
// Sports, teams and rosters

/** One prop a player of this role carries: mean drawn in [lo, hi) (NaN lo: sum of the role's first three). */
export interface StatSpec {
  readonly market: number;
  readonly lo: number;
  readonly hi: number;
  readonly sigma: number;
  /** fixed line (yes/no style props), NaN when the line follows the player's mean */
  readonly line: number;
}

export interface RoleSpec {
  readonly count: number;
  readonly stats: readonly StatSpec[];
}

export interface SportSpec {
  readonly key: string;
  /** real league team names; null for individual competitors drawn from a name pool */
  readonly teams: readonly string[] | null;
  readonly pool: 'team' | 'tennis' | 'mma';
  /** standard deviation of the final margin, and the mean and spread of the pre-match expected margin */
  readonly sigma: number;
  readonly dMean: number;
  readonly dSd: number;
  /** expected total, its spread across games, and the standard deviation of the final total (0: no totals) */
  readonly total: number;
  readonly totalSd: number;
  readonly totalSigma: number;
  readonly minutes: number;
  /** scoring comes in unit jumps (soccer, hockey, baseball) rather than a continuous drift */
  readonly discrete: boolean;
  readonly threeWay: boolean;
  /** 'half': spread follows the margin in 0.5 steps; 'runline': fixed +-1.5; 'none': no spreads or totals */
  readonly spreads: 'half' | 'runline' | 'none';
  readonly roster: readonly RoleSpec[];
}

export const NAN = Number.NaN;
export const stat = (key: string, lo: number, hi: number, sigma: number, line = NAN): StatSpec =>
  ({ market: market(key), lo, hi, sigma, line });

export const NBA_TEAMS = [
  'Atlanta Hawks', 'Boston Celtics', 'Brooklyn Nets', 'Charlotte Hornets', 'Chicago Bulls', 'Cleveland Cavaliers',
  'Dallas Mavericks', 'Denver Nuggets', 'Detroit Pistons', 'Golden State Warriors', 'Houston Rockets',
  'Indiana Pacers', 'Los Angeles Clippers', 'Los Angeles Lakers', 'Memphis Grizzlies', 'Miami Heat',
  'Milwaukee Bucks', 'Minnesota Timberwolves', 'New Orleans Pelicans', 'New York Knicks', 'Oklahoma City Thunder',
  'Orlando Magic', 'Philadelphia 76ers', 'Phoenix Suns', 'Portland Trail Blazers', 'Sacramento Kings',
  'San Antonio Spurs', 'Toronto Raptors', 'Utah Jazz', 'Washington Wizards',
];
export const MLB_TEAMS = [
  'Arizona Diamondbacks', 'Athletics', 'Atlanta Braves', 'Baltimore Orioles', 'Boston Red Sox', 'Chicago Cubs',
  'Chicago White Sox', 'Cincinnati Reds', 'Cleveland Guardians', 'Colorado Rockies', 'Detroit Tigers',
  'Houston Astros', 'Kansas City Royals', 'Los Angeles Angels', 'Los Angeles Dodgers', 'Miami Marlins',
  'Milwaukee Brewers', 'Minnesota Twins', 'New York Mets', 'New York Yankees', 'Philadelphia Phillies',
  'Pittsburgh Pirates', 'San Diego Padres', 'San Francisco Giants', 'Seattle Mariners', 'St. Louis Cardinals',
  'Tampa Bay Rays', 'Texas Rangers', 'Toronto Blue Jays', 'Washington Nationals',
];
export const NFL_TEAMS = [
  'Arizona Cardinals', 'Atlanta Falcons', 'Baltimore Ravens', 'Buffalo Bills', 'Carolina Panthers', 'Chicago Bears',
  'Cincinnati Bengals', 'Cleveland Browns', 'Dallas Cowboys', 'Denver Broncos', 'Detroit Lions',
  'Green Bay Packers', 'Houston Texans', 'Indianapolis Colts', 'Jacksonville Jaguars', 'Kansas City Chiefs',
  'Las Vegas Raiders', 'Los Angeles Chargers', 'Los Angeles Rams', 'Miami Dolphins', 'Minnesota Vikings',
  'New England Patriots', 'New Orleans Saints', 'New York Giants', 'New York Jets', 'Philadelphia Eagles',
  'Pittsburgh Steelers', 'San Francisco 49ers', 'Seattle Seahawks', 'Tampa Bay Buccaneers', 'Tennessee Titans',
  'Washington Commanders',
];
export const NHL_TEAMS = [
  'Anaheim Ducks', 'Boston Bruins', 'Buffalo Sabres', 'Calgary Flames', 'Carolina Hurricanes', 'Chicago Blackhawks',
  'Colorado Avalanche', 'Columbus Blue Jackets', 'Dallas Stars', 'Detroit Red Wings', 'Edmonton Oilers',
  'Florida Panthers', 'Los Angeles Kings', 'Minnesota Wild', 'Montréal Canadiens', 'Nashville Predators',
  'New Jersey Devils', 'New York Islanders', 'New York Rangers', 'Ottawa Senators', 'Philadelphia Flyers',
  'Pittsburgh Penguins', 'San Jose Sharks', 'Seattle Kraken', 'St Louis Blues', 'Tampa Bay Lightning',
  'Toronto Maple Leafs', 'Utah Mammoth', 'Vancouver Canucks', 'Vegas Golden Knights', 'Washington Capitals',
  'Winnipeg Jets',
];
export const EPL_TEAMS = [
  'Arsenal', 'Aston Villa', 'Bournemouth', 'Brentford', 'Brighton and Hove Albion', 'Burnley', 'Chelsea',
  'Crystal Palace', 'Everton', 'Fulham', 'Leeds United', 'Liverpool', 'Manchester City', 'Manchester United',
  'Newcastle United', 'Nottingham Forest', 'Sunderland', 'Tottenham Hotspur', 'West Ham United',
  'Wolverhampton Wanderers',
];
export const LALIGA_TEAMS = [
  'Alavés', 'Athletic Bilbao', 'Atlético Madrid', 'Barcelona', 'Celta Vigo', 'Elche CF', 'Espanyol', 'Getafe',
  'Girona', 'Levante', 'Mallorca', 'Osasuna', 'Rayo Vallecano', 'Real Betis', 'Real Madrid', 'Real Oviedo',
  'Real Sociedad', 'Sevilla', 'Valencia', 'Villarreal',
];

export const NBA_ROSTER: readonly RoleSpec[] = [{
  count: 5,
  stats: [
    stat('player_points', 9.5, 30.5, 6.2),
    stat('player_rebounds', 2.8, 11.5, 2.8),
    stat('player_assists', 1.5, 8.5, 2.3),
    stat('player_three_pointers', 0.6, 3.6, 1.2),
    stat('player_pts_rebs_asts', NAN, NAN, 7.8),
  ],
}];
export const MLB_ROSTER: readonly RoleSpec[] = [
  { count: 1, stats: [stat('player_strikeouts', 3.6, 8.2, 2.0)] },
  {
    count: 3,
    stats: [
      stat('player_hits', 0.75, 1.3, 0.85, 0.5),
      stat('player_total_bases', 1.1, 2.2, 1.3),
      stat('player_home_runs', 0.08, 0.3, 0.4, 0.5),
    ],
  },
];
export const NFL_ROSTER: readonly RoleSpec[] = [
  { count: 1, stats: [stat('player_pass_yds', 195, 290, 55), stat('player_rush_yds', 6, 35, 13)] },
  {
    count: 1,
    stats: [stat('player_rush_yds', 40, 90, 24), stat('player_reception_yds', 10, 35, 13),
      stat('player_receptions', 1.5, 4.5, 1.5)],
  },
  { count: 2, stats: [stat('player_reception_yds', 38, 88, 25), stat('player_receptions', 3.2, 7.2, 1.9)] },
  { count: 1, stats: [stat('player_reception_yds', 25, 55, 18), stat('player_receptions', 2.5, 5.2, 1.7)] },
];
export const NHL_ROSTER: readonly RoleSpec[] = [{
  count: 4,
  stats: [
    stat('player_shots_on_goal', 1.8, 4.1, 1.4),
    stat('player_goals', 0.18, 0.48, 0.55, 0.5),
    stat('player_points', 0.4, 1.1, 0.8, 0.5),
  ],
}];

export const SPORT_SPECS: readonly SportSpec[] = [
  {
    key: 'basketball_nba', teams: NBA_TEAMS, pool: 'team', sigma: 12, dMean: 2.5, dSd: 5.5, total: 227, totalSd: 6,
    totalSigma: 18, minutes: 150, discrete: false, threeWay: false, spreads: 'half', roster: NBA_ROSTER,
  },
  {
    key: 'baseball_mlb', teams: MLB_TEAMS, pool: 'team', sigma: 3.6, dMean: 0.2, dSd: 0.9, total: 8.7, totalSd: 0.8,
    totalSigma: 4.2, minutes: 175, discrete: true, threeWay: false, spreads: 'runline', roster: MLB_ROSTER,
  },
  {
    key: 'americanfootball_nfl', teams: NFL_TEAMS, pool: 'team', sigma: 13.5, dMean: 1.5, dSd: 5.5, total: 44.5,
    totalSd: 4, totalSigma: 13.5, minutes: 195, discrete: false, threeWay: false, spreads: 'half', roster: NFL_ROSTER,
  },
  {
    key: 'icehockey_nhl', teams: NHL_TEAMS, pool: 'team', sigma: 2.4, dMean: 0.2, dSd: 0.55, total: 6.1, totalSd: 0.3,
    totalSigma: 2.4, minutes: 155, discrete: true, threeWay: false, spreads: 'runline', roster: NHL_ROSTER,
  },
  {
    key: 'soccer_epl', teams: EPL_TEAMS, pool: 'team', sigma: 1.65, dMean: 0.3, dSd: 0.6, total: 2.9, totalSd: 0.3,
    totalSigma: 1.65, minutes: 113, discrete: true, threeWay: true, spreads: 'half', roster: [],
  },
  {
    key: 'soccer_spain_la_liga', teams: LALIGA_TEAMS, pool: 'team', sigma: 1.6, dMean: 0.3, dSd: 0.65, total: 2.6,
    totalSd: 0.3, totalSigma: 1.6, minutes: 113, discrete: true, threeWay: true, spreads: 'half', roster: [],
  },
  {
    key: 'tennis_atp_finals', teams: null, pool: 'tennis', sigma: 1, dMean: 0, dSd: 0.85, total: 0,
    totalSd: 0, totalSigma: 0, minutes: 150, discrete: false, threeWay: false, spreads: 'none', roster: [],
  },
  {
    key: 'mma_mixed_martial_arts', teams: null, pool: 'mma', sigma: 1, dMean: 0, dSd: 0.85, total: 0, totalSd: 0,
    totalSigma: 0, minutes: 25, discrete: false, threeWay: false, spreads: 'none', roster: [],
  },
];

export const SIM_SPORTS: readonly string[] = Object.freeze(SPORT_SPECS.map((s) => s.key));

export const FIRST_NAMES: Record<SportSpec['pool'], readonly string[]> = {
  team: [
    'James', 'Michael', 'Chris', 'Anthony', 'Jalen', 'Tyler', 'Marcus', 'Devin', 'Jordan', 'Brandon', 'Kevin',
    'Isaiah', 'Darius', 'Cameron', 'Trevor', 'Austin', 'Logan', 'Mason', 'Ryan', 'Caleb', 'Nathan', 'Dylan', 'Evan',
    'Cole', 'Jake', 'Luke', 'Zach', 'Derek', 'Trey', 'Malik', 'Andre', 'Xavier', 'Jaylen', 'Keegan', 'Bryce',
    'Garrett', 'Spencer', 'Connor', 'Brady', 'Aaron', 'Jonah', 'Elijah', 'Miles', 'Quinn', 'Reid', 'Seth', 'Victor',
    'Luis', 'Carlos', 'Mateo', 'Nikolai', 'Mikko', 'Jesper', 'Sam', 'Noah', 'Owen', 'Wyatt', 'Gavin', 'Colton',
  ],
  tennis: [
    'Alejandro', 'Matteo', 'Lorenzo', 'Felix', 'Alexander', 'Daniil', 'Andrey', 'Stefan', 'Hubert', 'Casper',
    'Holger', 'Tommy', 'Ben', 'Sebastian', 'Ugo', 'Arthur', 'Jiri', 'Tomas', 'Nicolas', 'Francisco', 'Jakub',
    'Alex', 'Gael', 'Adrian', 'Lucas', 'Roman', 'Pavel', 'Kei', 'Jordan', 'Miomir', 'Dusan', 'Marton', 'Flavio',
    'Luca', 'Nuno', 'Hamad', 'Tallon', 'Giovanni', 'Dominik', 'Laslo', 'Mikhail', 'Emil', 'Jaume', 'Rinky',
  ],
  mma: [
    'Khalid', 'Rafael', 'Diego', 'Tiago', 'Magomed', 'Arman', 'Dustin', 'Justin', 'Colby', 'Sean', 'Leon', 'Robert',
    'Marvin', 'Sergei', 'Alexandre', 'Brandon', 'Cory', 'Umar', 'Max', 'Beneil', 'Mateusz', 'Renato', 'Paulo', 'Bo',
    'Caio', 'Jack', 'Gregory', 'Derrick', 'Curtis', 'Tai', 'Jailton', 'Said', 'Movsar', 'Jalin', 'Ikram', 'Kai',
  ],
};
export const LAST_NAMES: Record<SportSpec['pool'], readonly string[]> = {
  team: [
    'Johnson', 'Williams', 'Brown', 'Davis', 'Miller', 'Wilson', 'Moore', 'Taylor', 'Anderson', 'Thomas', 'Jackson',
    'White', 'Harris', 'Martin', 'Thompson', 'Robinson', 'Clark', 'Lewis', 'Walker', 'Hall', 'Allen', 'Young',
    'King', 'Wright', 'Scott', 'Green', 'Baker', 'Adams', 'Nelson', 'Carter', 'Mitchell', 'Roberts', 'Turner',
    'Phillips', 'Campbell', 'Parker', 'Evans', 'Edwards', 'Collins', 'Stewart', 'Morris', 'Murphy', 'Cook', 'Rogers',
    'Morgan', 'Cooper', 'Peterson', 'Bailey', 'Reed', 'Kelly', 'Howard', 'Ward', 'Cox', 'Richardson', 'Wood',
    'Watson', 'Brooks', 'Bennett', 'Gray', 'Hughes', 'Price', 'Sanders', 'Myers', 'Long', 'Ross', 'Foster', 'Powell',
    'Jenkins', 'Perry', 'Russell', 'Sullivan', 'Bell', 'Coleman', 'Butler', 'Henderson', 'Barnes', 'Fisher',
    'Vasquez', 'Simmons', 'Graham', 'Marshall', 'Owens', 'Harrison', 'Gibson', 'Wallace', 'Hayes', 'Holt',
    'Lindqvist', 'Karlsson', 'Novak', 'Petrov', 'Dubois', 'Larkin', 'Okafor', 'Mensah',
  ],
  tennis: [
    'Moreau', 'Kovac', 'Novotny', 'Lindgren', 'Varga', 'Castillo', 'Navarro', 'Hoffmann', 'Schneider', 'Popescu',
    'Ivanov', 'Sokolov', 'Nakamura', 'Tanaka', 'Costa', 'Almeida', 'Fernandez', 'Marin', 'Petit', 'Lambert',
    'Rousseau', 'Janssen', 'Peeters', 'Horvat', 'Kowalski', 'Nowak', 'Olsen', 'Berg', 'Halvorsen', 'Kaya', 'Demir',
    'Sato', 'Watanabe', 'Romano', 'Bianchi', 'Galli', 'Mancini', 'Weber', 'Fischer', 'Wagner', 'Becker', 'Ortiz',
    'Ramos', 'Moretti', 'Kuznetsov', 'Volkov', 'Lehmann', 'Dumont',
  ],
  mma: [
    'Ramirez', 'Alvarez', 'Torres', 'Moreno', 'Castro', 'Vieira', 'Barbosa', 'Lima', 'Araujo', 'Rocha', 'Magomedov',
    'Aliev', 'Gadzhiev', 'Rahmonov', 'Walker', 'Hughes', 'Dawson', 'Burns', 'Cruz', 'Kowalczyk', 'Nowicki',
    'Petrosyan', 'Hakobyan', 'Yilmaz', 'Sandoval', 'Herrera', 'Figueroa', 'Medina', 'Ortega', 'Duarte', 'Valdez',
    'Brennan', 'Keller', 'Hunt', 'Stone', 'Porter', 'Reyes', 'Santos', 'Oliveira', 'Pereira', 'Souza',
  ],
};

