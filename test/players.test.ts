import t from 'tap';
import { PlayerNames, playerKey } from '../engine/players.js';
import { startTestApp } from './helpers/app.js';

t.test('players - one key per person across accents, case, punctuation and suffixes', async (t) => {
  t.equal(playerKey('Luka Dončić'), playerKey('luka doncic'), 'accents and case');
  t.equal(playerKey('Jaren Jackson Jr.'), playerKey('Jaren Jackson'), 'Jr.');
  t.equal(playerKey('Ken Griffey III'), playerKey('Ken Griffey'), 'III');
  t.equal(playerKey("D'Angelo Russell"), playerKey('D Angelo Russell'), 'punctuation');
  t.not(playerKey('Jalen Williams'), playerKey('Jaylin Williams'), 'different people stay apart');
  t.equal(playerKey('V'), 'v', 'a one-word name keeps its word');
  const names = new PlayerNames();
  const a = names.id('Luka Dončić');
  t.equal(names.id('LUKA DONCIC'), a, 'same id');
  t.equal(names.name(a), 'Luka Dončić', 'the first spelling is served');
});

t.test('players - two books writing one player differently quote one line: one grouped prop', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const ev = { id: 'pl_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Dallas Mavericks', away_team: 'Memphis Grizzlies' };
  await app.ingest({ events: [ev], prices: [
    { book: 'draftkings', event_id: ev.id, market: 'player_points', player: 'Luka Dončić', point: 30.5, outcome: 'Over', price: 1.9 },
    { book: 'draftkings', event_id: ev.id, market: 'player_points', player: 'Luka Dončić', point: 30.5, outcome: 'Under', price: 1.9 },
    { book: 'fanduel', event_id: ev.id, market: 'player_points', player: 'Luka Doncic', point: 30.5, outcome: 'Over', price: 1.85 },
    { book: 'fanduel', event_id: ev.id, market: 'player_points', player: 'Luka Doncic', point: 30.5, outcome: 'Under', price: 1.95 },
  ] });
  const grouped = (await (await app.get(`/v1/sports/basketball_nba/props?apiKey=${key}&grouped=true`)).json()) as { player: string; books: unknown[] }[];
  t.equal(grouped.length, 1, 'one prop');
  t.equal(grouped[0].player, 'Luka Dončić', 'under the first spelling');
  t.equal(grouped[0].books.length, 2, 'with both books');
});
