import t from 'tap';
import { canonicalInEvent, initialOf, isInitialKey, PlayerNames, playerKey } from '../engine/players.js';
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

t.test('players - initials: one person when the event has one matching full name', async (t) => {
  t.ok(isInitialKey(playerKey('J. Tatum')), '"J. Tatum" is an initial spelling');
  t.notOk(isInitialKey(playerKey('A.J. Brown')), '"A.J. Brown": the initials are the name');
  t.notOk(isInitialKey(playerKey('Jayson Tatum')), 'a full name is not');
  t.equal(initialOf(playerKey('Jayson Tatum Jr.')), 'j tatum', 'initial key of a full name, suffix dropped');
  const names = new PlayerNames();
  const full = names.id('Jayson Tatum');
  const init = names.id('J. Tatum');
  t.not(init, full, 'interned apart: initials are settled per event, not globally');
  t.equal(canonicalInEvent([init, full], names).get(init), full, '"J. Tatum" joins "Jayson Tatum" in the same event');
  t.equal(canonicalInEvent([full, init], names).get(init), full, 'whatever the order');
  t.equal(canonicalInEvent([init], names).get(init), init, 'alone in its event, it stays itself');
  const jalen = names.id('Jalen Williams');
  const jaylin = names.id('Jaylin Williams');
  const jw = names.id('J. Williams');
  const amb = canonicalInEvent([jalen, jaylin, jw], names);
  t.same([amb.get(jw), amb.get(jalen), amb.get(jaylin)], [jw, jalen, jaylin], 'two full names share the initial: ambiguous, all separate');
  t.equal(canonicalInEvent([jalen, jw], names).get(jw), jalen, 'in a game with only Jalen, J. Williams is Jalen');
  const kw = names.id('K. Williams');
  t.equal(canonicalInEvent([jalen, kw], names).get(kw), kw, 'another initial does not match');
  t.equal(canonicalInEvent([-1, -1], names).size, 0, 'game markets (player -1) are skipped');
});

t.test('players - initials across books in /props, per event; ambiguous initials stay apart', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const e1 = { id: 'pi_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const e2 = { id: 'pi_2', sport_key: 'basketball_nba', commence_time: now + 7_200_000, home_team: 'Oklahoma City Thunder', away_team: 'Memphis Grizzlies' };
  const e3 = { id: 'pi_3', sport_key: 'basketball_nba', commence_time: now + 9_000_000, home_team: 'Chicago Bulls', away_team: 'Utah Jazz' };
  const ou = (book: string, e: typeof e1, player: string, point: number) => [
    { book, event_id: e.id, market: 'player_points', player, point, outcome: 'Over', price: 1.9 },
    { book, event_id: e.id, market: 'player_points', player, point, outcome: 'Under', price: 1.9 },
  ];
  const r = await app.ingest({ events: [e1, e2, e3], prices: [
    ...ou('fanduel', e1, 'J. Tatum', 27.5), ...ou('draftkings', e1, 'Jayson Tatum', 27.5),
    // both Williams play in e2: J. Williams is ambiguous there
    ...ou('draftkings', e2, 'Jalen Williams', 20.5), ...ou('draftkings', e2, 'Jaylin Williams', 8.5), ...ou('fanduel', e2, 'J. Williams', 20.5),
    // e3: a J. Williams alone (a different player): not merged with e2's Jalen
    ...ou('fanduel', e3, 'J. Williams', 12.5),
  ] });
  t.equal(r.json.accepted, 12, 'fixture accepted');
  const grouped = (await (await app.get(`/v1/sports/basketball_nba/props?apiKey=${key}&grouped=true`)).json()) as { event_id: string; player: string; books: { bookmaker: string }[] }[];
  t.same(grouped.map((g) => `${g.event_id}:${g.player}:${g.books.map((b) => b.bookmaker).join('+')}`), [
    'pi_1:Jayson Tatum:draftkings+fanduel',
    'pi_2:J. Williams:fanduel', 'pi_2:Jalen Williams:draftkings', 'pi_2:Jaylin Williams:draftkings',
    'pi_3:J. Williams:fanduel',
  ], 'one Tatum with both books under the full name; the Williams stay apart where ambiguous and in another game');
  const v = await app.get(`/v1/verdict?apiKey=${key}&sport=basketball_nba&team=celtics&market=player_points&player=tatum&side=over&line=27.5&books=draftkings,fanduel`);
  const vb = (await v.json()) as { player: string; books_compared: number };
  t.same([v.status, vb.player, vb.books_compared], [200, 'Jayson Tatum', 2], 'the verdict finds one player quoted by both books');
});
