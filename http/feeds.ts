// FEED and the connectors' settings: which feeds run (several at once: FEED=sim,theoddsapi), how each is labelled
// (simulated or real upstream data), and The Odds API's THE_ODDS_API_* variables, all checked at start-up.

import { isRegion, marketByKey, sportByKey } from '../engine/catalogue.js';
import { envInt, httpUrl } from './env.js';
import { DEFAULT_THE_ODDS_API, type TheOddsApiConfig } from '../workers/theoddsapi-feed.js';

/** The feeds FEED may name; `none` runs none. */
export const FEEDS = ['sim', 'theoddsapi'] as const;
export type FeedName = (typeof FEEDS)[number];

/** FEED: a comma list of feed names, or none. Unknown names throw with the list of known ones. */
export function parseFeeds(raw: string | undefined): FeedName[] {
  const names = (raw ?? 'sim').split(',').map((f) => f.trim()).filter((f) => f !== '');
  const out: FeedName[] = [];
  for (const f of names) {
    if (f === 'none') continue;
    if (!(FEEDS as readonly string[]).includes(f)) {
      throw new Error(`FEED ${JSON.stringify(f)} is not known: use none, or a comma list of ${FEEDS.join(', ')} (e.g. FEED=sim,theoddsapi)`);
    }
    if (!out.includes(f as FeedName)) out.push(f as FeedName);
  }
  if (names.includes('none') && out.length > 0) throw new Error('FEED none cannot be combined with other feeds');
  return out;
}

/** X-Data-Source: `simulated` for the simulator, the connector's name for real upstream data; null with no feed. */
export function dataSourceHeader(feeds: readonly string[]): string | null {
  if (feeds.length === 0) return null;
  return feeds.map((f) => (f === 'sim' ? 'simulated' : f)).join(', ');
}

/** The start banner's feed line. */
export function feedBanner(feeds: readonly string[]): string {
  if (feeds.length === 0) return 'none';
  const parts = feeds.map((f) => f === 'sim'
    ? 'sim (SIMULATED prices: real book keys, not real bookmaker prices)'
    : f === 'theoddsapi' ? 'theoddsapi (real upstream prices from The Odds API)' : f);
  return parts.join(' + ') + (feeds.length > 1 ? '; raw_json.feed names the source of each event' : '');
}

function list(raw: string | undefined, dflt: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return dflt;
  return [...new Set(raw.split(',').map((x) => x.trim()).filter((x) => x !== ''))];
}

/** THE_ODDS_API_*: checked against the catalogue, so a typo stops the start instead of costing credits. */
export function theOddsApiConfigFromEnv(env: NodeJS.ProcessEnv): TheOddsApiConfig {
  const D = DEFAULT_THE_ODDS_API;
  const key = env.THE_ODDS_API_KEY?.trim() ?? '';
  if (key === '') throw new Error('FEED=theoddsapi needs THE_ODDS_API_KEY (the API key of a The Odds API subscription)');
  const int = (name: string, dflt: number, min: number, max: number): number => envInt(env, name, dflt, min, max);
  const base = env.THE_ODDS_API_BASE?.trim() || D.base;
  const url = httpUrl('THE_ODDS_API_BASE', base);
  const sports = list(env.THE_ODDS_API_SPORTS, ['basketball_nba', 'americanfootball_nfl', 'baseball_mlb', 'icehockey_nhl']);
  const badSports = sports.filter((s) => sportByKey(s) === undefined);
  if (badSports.length > 0) throw new Error(`THE_ODDS_API_SPORTS names sport key(s) the catalogue does not know: ${badSports.join(', ')} (GET /v1/sports lists them)`);
  const markets = list(env.THE_ODDS_API_MARKETS, D.markets);
  const badMarkets = markets.filter((m) => marketByKey(m) === undefined || m === 'h2h_3_way');
  if (badMarkets.length > 0) {
    throw new Error(`THE_ODDS_API_MARKETS names market key(s) not mapped: ${badMarkets.join(', ')} (a three-way moneyline is asked as h2h)`);
  }
  const regions = list(env.THE_ODDS_API_REGIONS, D.regions);
  const badRegions = regions.filter((r) => !isRegion(r));
  if (badRegions.length > 0) throw new Error(`THE_ODDS_API_REGIONS names unknown region(s): ${badRegions.join(', ')}`);
  return {
    apiKey: key,
    base,
    sports,
    markets,
    regions,
    minIntervalMs: int('THE_ODDS_API_MIN_INTERVAL_S', D.minIntervalMs / 1000, 1, 86_400) * 1000,
    timeoutMs: int('THE_ODDS_API_TIMEOUT_MS', D.timeoutMs, 100, 120_000),
    resetDay: int('THE_ODDS_API_RESET_DAY', D.resetDay, 1, 31),
    reserve: int('THE_ODDS_API_RESERVE', D.reserve, 0, 100_000_000),
    propsWithinMs: int('THE_ODDS_API_PROPS_WITHIN_H', D.propsWithinMs / 3_600_000, 0, 24 * 14) * 3_600_000,
    sportsRefreshMs: D.sportsRefreshMs,
    exhaustedProbeMs: D.exhaustedProbeMs,
  };
}
