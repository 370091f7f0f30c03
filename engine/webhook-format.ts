// Request bodies of webhook deliveries. Variant A: the JSON envelope {id, event_type, timestamp_ms, data}.
// Variant B: `format` json gives {id, event, timestamp, data}; `slack` gives a team-chat message (text plus
// attachments with fields) and `discord` a community-chat message (content plus embeds), both written for a
// person to read, with the event id and type in a footer so they can be traced.

import type { Format, Variant } from './webhook-catalogue.js';

export interface Envelope {
  id: string;
  type: string;
  at: number;
  data: Record<string, unknown>;
  /** made while the node served the simulator's prices (X-Data-Source: simulated): the body says so, in `simulated:
   *  true` beside `data` and in a chat message's title, so that no reader takes it for a bookmaker's real price */
  simulated?: boolean;
}

interface Summary {
  title: string;
  text: string;
  fields: [string, string][];
  /** 0xRRGGBB */
  color: number;
}

const GREEN = 0x2eb67d;
const RED = 0xe01e5a;
const AMBER = 0xecb22e;
const BLUE = 0x36c5f0;

const pct = (x: unknown) => `${(x as number).toFixed(2)} %`;
/** a decimal price for a person: at most three decimals (1.9090909090909092 reads 1.909); the JSON keeps it whole */
const odds = (x: unknown) => String(Number((x as number).toFixed(3)));
const game = (d: Record<string, unknown>) => `${d.away_team} @ ${d.home_team}`;
const line = (d: Record<string, unknown>) => `${d.market}${d.player ? ` ${d.player}` : ''}${d.point !== null && d.point !== undefined ? ` ${d.point}` : ''}`;

function legs(d: Record<string, unknown>): string {
  const list = (d.legs as { book: string; side?: string; outcome?: string; price: number }[]) ?? [];
  return list.map((l) => `${l.side ?? l.outcome} at ${l.book} ${odds(l.price)}`).join('\n');
}

/** A person's reading of an event. */
export function summarize(type: string, d: Record<string, unknown>): Summary {
  switch (type) {
    case 'arb_flagged':
    case 'live_arb':
    case 'arbitrage.opened':
      return {
        title: `${type === 'live_arb' ? 'Live arbitrage' : 'Arbitrage'}: ${game(d)}`,
        text: `${d.sport_key} ${d.market}, edge ${pct(d.edge_pct)}`,
        fields: [['Edge', pct(d.edge_pct)], ['Market', String(d.market)], ['Legs', legs(d)]],
        color: GREEN,
      };
    case 'arbitrage.closed':
      return {
        title: `Arbitrage closed: ${game(d)}`,
        text: `${d.sport_key} ${d.market}, open for ${(d.duration_s as number).toFixed(0)} s`,
        fields: [['Edge at open', pct(d.edge_pct_at_open)], ['Opened', String(d.opened_at)], ['Closed', String(d.closed_at)]],
        color: AMBER,
      };
    case 'ev_alert':
    case 'ev.flagged':
      return {
        title: `+EV ${pct(d.edge_pct)}: ${d.side ?? d.outcome} at ${d.book}`,
        text: `${game(d)} (${d.sport_key}), ${line(d)}: ${odds(d.price)} against fair ${(d.fair_price as number).toFixed(3)} (${d.sharp_book} no-vig)`,
        fields: [['Edge', pct(d.edge_pct)], ['Price', `${odds(d.price)} (${d.price_american})`], ['Fair price', (d.fair_price as number).toFixed(3)], ['Sharp book', String(d.sharp_book)]],
        color: GREEN,
      };
    case 'line_move': {
      const from = d.from as { point: number | null; price_american: number };
      const to = d.to as { point: number | null; price_american: number };
      const fmt = (x: { point: number | null; price_american: number }) => `${x.point ?? ''} ${x.price_american}`.trim();
      return {
        title: `Line move at ${d.book}: ${d.side}`,
        text: `${game(d)} (${d.sport_key}) ${d.market}: ${fmt(from)} to ${fmt(to)}`,
        fields: [['From', fmt(from)], ['To', fmt(to)], ['Book', String(d.book)]],
        color: BLUE,
      };
    }
    case 'odds_drop':
      return {
        title: `Odds drop ${pct(d.drop_pct)} at ${d.book}: ${d.side}`,
        text: `${game(d)} (${d.sport_key}) ${line(d)}: ${odds(d.price)} against a 5-minute average of ${(d.average_price as number).toFixed(3)}`,
        fields: [['Price', odds(d.price)], ['5-minute average', (d.average_price as number).toFixed(3)], ['Drop', pct(d.drop_pct)]],
        color: RED,
      };
    case 'new_event':
      return { title: `New event: ${game(d)}`, text: `${d.sport_key}, starts ${d.commence_time}`, fields: [['Starts', String(d.commence_time)]], color: BLUE };
    case 'line_move.steam': {
      const books = d.books as { book: string; from: number; to: number }[];
      return {
        title: `Steam (${d.direction}): ${d.outcome}, ${game(d)}`,
        text: `${d.sport_key} ${line(d)}: ${books.length} books within ${d.window_s} s`,
        fields: [['Moves', books.map((b) => `${b.book} ${b.from} to ${b.to}`).join('\n')]],
        color: AMBER,
      };
    }
    case 'source_quality.breach':
      return {
        title: `Source breach: ${d.title} is ${d.to}`,
        text: `Newest write ${(d.age_s as number).toFixed(0)} s old (${d.sla_class} class)`,
        fields: [['Book', String(d.book)], ['State', String(d.to)], ['Age', `${(d.age_s as number).toFixed(0)} s`]],
        color: RED,
      };
    case 'source_quality.recovery':
      return {
        title: `Source recovered: ${d.title} is ok`,
        text: `Back after ${(d.breached_for_s as number).toFixed(0)} s`,
        fields: [['Book', String(d.book)], ['Breached for', `${(d.breached_for_s as number).toFixed(0)} s`]],
        color: GREEN,
      };
    case 'parser.degraded':
      return {
        title: `Feed ${d.feed} degraded: ${pct(d.rejected_pct)} rejected`,
        text: `${d.rejected} of ${d.observations} items rejected in the last ${d.window_s} s`,
        fields: [['Rejected', `${d.rejected} of ${d.observations}`], ['Threshold', pct(d.threshold_pct)]],
        color: RED,
      };
    default:
      return { title: `Test delivery`, text: String(d.message ?? type), fields: [], color: BLUE };
  }
}

/** The exact request body of a delivery. */
export function renderBody(variant: Variant, format: Format, env: Envelope): string {
  const sim = env.simulated === true ? { simulated: true } : {};
  if (variant === 'A') return JSON.stringify({ id: env.id, event_type: env.type, timestamp_ms: env.at, ...sim, data: env.data });
  if (format === 'json') return JSON.stringify({ id: env.id, event: env.type, timestamp: Math.floor(env.at / 1000), ...sim, data: env.data });
  const s = summarize(env.type, env.data);
  if (env.simulated === true) s.title = `[SIMULATED] ${s.title}`;
  const footer = `${env.simulated === true ? 'simulated data, not a bookmaker\'s price · ' : ''}${env.type} · ${env.id}`;
  if (format === 'slack') {
    return JSON.stringify({
      text: `*${s.title}*\n${s.text}`,
      attachments: [{
        color: '#' + s.color.toString(16).padStart(6, '0'),
        title: s.title,
        text: s.text,
        fields: s.fields.map(([title, value]) => ({ title, value, short: !value.includes('\n') })),
        footer,
        ts: Math.floor(env.at / 1000),
      }],
    });
  }
  return JSON.stringify({
    content: `**${s.title}**`,
    embeds: [{
      title: s.title,
      description: s.text,
      color: s.color,
      fields: s.fields.map(([name, value]) => ({ name, value, inline: !value.includes('\n') })),
      footer: { text: footer },
      timestamp: new Date(env.at).toISOString(),
    }],
  });
}
