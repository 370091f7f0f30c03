// WebSocket streams (issue 4): /ws/odds/{sport_key}, /ws/live/{sport_key}, /v1/ws/odds-fast/{sport_key}, each
// also under /v4. Auth as REST (apiKey query, X-API-Key, Bearer); business tier and above. A refused connection
// is upgraded and then closed: 4001 bad or missing key, 4003 tier, 4400 bad parameters, 4404 unknown sport, 4029 the
// account holds as many open streams as its tier allows.
// Frames: snapshot (segmented above limits.segmentBytes), delta, heartbeat (every 5 s), error. Channels coalesce per
// tier window (business 1 s, enterprise 500 ms, scale 0); odds-fast pushes every change batch.

import { randomBytes } from 'node:crypto';
import { unpack } from 'msgpackr';
import uWS, { type TemplatedApp, type WebSocket } from 'uWebSockets.js';
import { BOOKMAKERS, MARKETS, REGIONS, booksForRegions, isRegion, outrightsOnly, resolveSportKeys } from '../../engine/catalogue.js';
import type { EventView } from '../../engine/read-model.js';
import type { Region } from '../../engine/types.js';
import { CHANGE, CHG } from '../../engine/records.js';
import { slaClassOf } from '../../engine/sla.js';
import { TIERS } from '../../engine/tiers.js';
import type { ChangeBatch } from '../../workers/hub.js';
import { AMBIGUOUS_KEY, decodePathPart, nextRequestId, queryKey } from '../router.js';
import type { Services } from '../services.js';
import { Channel, DEFAULT_LIMITS, passes, type Filters, type Snapshot, type SocketState, type StreamLimits } from './channel.js';
import { EventCrcs } from './event-crc.js';
import { crcOf, encode, eventHead, eventItems, itemKey, outcomeName, outcomePoint, repriced, v4Event, type DeltaItem } from './frames.js';

export const HEARTBEAT_MS = 5000;
/** how long a built snapshot may be reused: the socket that gets it catches up from its seq with one merged delta,
 *  which grows with the snapshot's age */
const SNAPSHOT_REUSE_MS = 250;
const EMPTY_CRC = crcOf([]);
/** the main thread's time spent on queued snapshots before it turns to other work (deltas, requests) */
const SNAPSHOT_SLICE_MS = 8;
/** Subscribes that need a new snapshot, per socket: a burst of SUBSCRIBE_BURST, then one per SUBSCRIBE_INTERVAL_MS; one
 *  past that waits its turn (the WebSocket audit: a client that read each answer and sent a new bookmakers subset
 *  every 5 ms got 170 full 1.2 MB snapshots in 6 s, /health p50 1.6 to 5.7 ms and max 22 to 382 ms) */
const SUBSCRIBE_BURST = 4;
const SUBSCRIBE_INTERVAL_MS = 500;
/** the largest client message handled (a subscribe with a few thousand event ids) */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** coalescing window per tier with WebSocket access (engine/tiers.ts, the table GET /v1/pricing shows) */
const WINDOW_MS: Record<string, number> = Object.fromEntries(TIERS.filter((t) => t.wsWindowMs !== null).map((t) => [t.tier, t.wsWindowMs!]));
/** open streams per account and tier (engine/tiers.ts) */
const MAX_STREAMS: Record<string, number> = Object.fromEntries(TIERS.filter((t) => t.wsStreams !== null).map((t) => [t.tier, t.wsStreams!]));
const BOOK_KEYS = new Set(BOOKMAKERS.map((b) => b.key));
const INACTIVE_BOOKS = new Set(BOOKMAKERS.filter((b) => b.status !== 'active').map((b) => b.key));
const MARKET_KEYS = new Set(MARKETS.map((m) => m.key));
const decoder = new TextDecoder();

type Kind = 'odds' | 'live' | 'odds-fast';

/** a channel's key among Streams' channels: one per stream kind, sport key (as the path names it) and window */
function channelKey(kind: Kind, sport: string, window: number): string {
  return `${kind}:${sport}:${window}`;
}

/** what sets two sockets' snapshots apart among their filters: equal keys, equal snapshots */
function filtersKey(f: Filters): string {
  const part = (set: Set<string> | null) => (set === null ? '*' : [...set].sort().join(','));
  return `${part(f.markets)}|${part(f.bookmakers)}|${part(f.eventIds)}`;
}

const utf8 = new TextEncoder();
/** a frame as the bytes sent: a JSON text encoded once, however many sockets it goes to */
function bytes(frame: string | Uint8Array): Uint8Array {
  return typeof frame === 'string' ? utf8.encode(frame) : frame;
}

/** A list parameter: null when absent; an empty list when given with no value (`markets=`, `[]`), which the
 *  caller refuses as REST answers 422 (the WebSocket audit: `markets=` streamed every market, `markets=%20,` none) */
function csv(raw: string | null): string[] | null {
  if (raw === null) return null;
  return [...new Set(raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0))];
}

/** Filters from query or subscribe fields; a string message when one is bad. */
/** the query parameters a stream reads; one given twice with different values is refused, as REST refuses it */
const STREAM_PARAMS = ['markets', 'bookmakers', 'regions', 'eventIds', 'format', 'oddsFormat', 'resume'];

function parseFilters(get: (name: string) => string | null): Filters | string {
  for (const n of ['markets', 'bookmakers', 'regions', 'eventIds']) {
    if (csv(get(n))?.length === 0) return `${n} must list at least one value (omit it for all)`;
  }
  const markets = csv(get('markets'));
  const bad = markets?.filter((m) => !MARKET_KEYS.has(m)) ?? [];
  if (bad.length > 0) return `unknown markets: ${bad.join(', ')}`;
  const books = csv(get('bookmakers'));
  const badBooks = books?.filter((b) => !BOOK_KEYS.has(b)) ?? [];
  if (badBooks.length > 0) return `unknown bookmakers: ${badBooks.join(', ')}`;
  // as /odds refuses them: a merged or decommissioned book has no quotes, so the stream would never carry it
  const inactive = books?.filter((b) => INACTIVE_BOOKS.has(b)) ?? [];
  if (inactive.length > 0) return `bookmakers not active (merged or decommissioned; see /v1/bookmakers): ${inactive.join(', ')}`;
  const regions = csv(get('regions'));
  const badRegions = regions?.filter((r) => !isRegion(r)) ?? [];
  if (badRegions.length > 0) return `unknown regions: ${badRegions.join(', ')} (known: ${REGIONS.join(', ')})`;
  const ids = csv(get('eventIds'));
  // a soccer moneyline is its three-way line, as /odds reads markets=h2h
  if (markets !== null && markets.includes('h2h') && !markets.includes('h2h_3_way')) markets.push('h2h_3_way');
  return {
    markets: markets === null ? null : new Set(markets),
    // as on /odds, bookmakers override regions; neither: every book
    bookmakers: books !== null ? new Set(books) : regions !== null ? new Set(booksForRegions(regions as Region[]).map((b) => b.key)) : null,
    eventIds: ids === null ? null : new Set(ids),
  };
}

/** Sockets the server closed on its own after they were open, by cause (the /metrics counter
 *  linewire_ws_server_closes_total): backpressure (4008 too far behind, or dropped with no close frame when it reads
 *  nothing, its PONGs piling up included), 4002 silent, 4001 key revoked. */
export interface StreamCloses {
  backpressure: number;
  silence: number;
  revoked: number;
  /** 4003: the key's tier went below the streaming tiers */
  tier: number;
}

export class Streams {
  readonly epoch = Date.now().toString(36) + randomBytes(3).toString('hex');
  readonly closes: StreamCloses = { backpressure: 0, silence: 0, revoked: 0, tier: 0 };
  private readonly channels = new Map<string, Channel>();
  /** open streams per account id (sockets waiting for their first snapshot included) */
  private readonly perAccount = new Map<number, number>();
  /** channels held now (linewire_ws_channels) */
  get channelCount(): number {
    return this.channels.size;
  }
  /** per channel key, how many times a channel of it was dropped (its next one's epoch) */
  private readonly generations = new Map<string, number>();
  private readonly bySport = new Map<string, Channel[]>();
  private readonly liveSeen = new Map<Channel, Set<string>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private lastHeartbeat = 0;
  private lastFlush = new Map<Channel, number>();
  /** Snapshots built, per channel and per what tells them apart (format, odds format, reason, filters), reused for
   *  SNAPSHOT_REUSE_MS while the channel's ring reaches back to their seq (a socket sent one catches up from there):
   *  a thousand clients connecting at once get a few snapshots built and a thousand sent, not a thousand built on
   *  the main thread while every stream's deltas wait (bench/ws.ts, connection storm). */
  private readonly snapshotCache = new Map<Channel, Map<string, Snapshot & { at: number }>>();
  /** snapshots built and snapshots reused from snapshotCache (the /metrics counters) */
  readonly snapshotReuse = { builds: 0, hits: 0 };

  constructor(private readonly s: Services, private readonly limits: StreamLimits = DEFAULT_LIMITS,
    private readonly log?: (msg: string) => void) {
    s.hub.onBatch((b) => this.onBatch(b));
    s.hub.onEventHead((ev, oldHome, oldAway) => this.headChanged(ev, oldHome, oldAway));
    this.crcs = new EventCrcs(s.hub.readModel, this.player);
  }

  mount(app: TemplatedApp): void {
    const paths: [string, Kind][] = [
      ['/ws/odds/:sport', 'odds'], ['/ws/live/:sport', 'live'], ['/v1/ws/odds-fast/:sport', 'odds-fast'],
      ['/v4/ws/odds/:sport', 'odds'], ['/v4/ws/live/:sport', 'live'], ['/v4/ws/odds-fast/:sport', 'odds-fast'],
    ];
    // with a trailing slash too, as REST paths take one (an upgrade to /ws/odds/x/ met the 426 of a plain GET)
    const routes: [string, Kind][] = paths.flatMap(([p, k]): [string, Kind][] => [[p, k], [`${p}/`, k]]);
    for (const [pattern, kind] of routes) {
      app.ws<SocketState>(pattern, {
        // inbound silence is watched here (tick), since our own heartbeats would keep uWebSockets.js's idle
        // timer from ever firing; its timeout stays as a last resort
        idleTimeout: Math.max(this.limits.idleSeconds * 2, 16),
        sendPingsAutomatically: true,
        pong: (ws) => {
          ws.getUserData().lastInbound = Date.now();
        },
        // above MAX_MESSAGE_BYTES a message gets an error frame; uWebSockets.js drops the connection without a close
        // frame only beyond this
        maxPayloadLength: 16 * MAX_MESSAGE_BYTES,
        // backpressure is ours (channel.ts): no data frame is sent past lowWatermark but one burst (a snapshot), so
        // this bound is for what the client makes uWebSockets.js send on its own (PONGs); a send past it closes the
        // socket, never a silent drop. It was 1 GiB with no close: PING frames from a client that did not read grew
        // the server by 737 MiB in 4 s (the WebSocket audit)
        maxBackpressure: this.limits.maxBytes,
        closeOnBackpressureLimit: 1,
        ping: (ws, message) => this.pinged(ws, message.byteLength),
        upgrade: (res, req, context) => this.upgrade(res, req, context, kind),
        open: (ws) => this.open(ws),
        message: (ws, msg, binary) => {
          // an exception here would end the process, every client with it: a message never may
          try {
            this.message(ws, msg, binary);
          } catch (e) {
            this.log?.(`ws message handler failed: ${e instanceof Error ? e.stack : String(e)}`);
            this.badMessage(ws, 'the message could not be handled');
          }
        },
        drain: (ws) => {
          const st = ws.getUserData();
          if (st.channel !== null && st.dirty) st.channel.catchUp(ws, this.s.now());
        },
        close: (ws) => {
          const st = ws.getUserData();
          st.closed = true;
          st.channel?.sockets.delete(ws);
          if (st.counted) {
            st.counted = false;
            const id = st.keyState!.account.id;
            const n = this.perAccount.get(id)! - 1;
            if (n === 0) this.perAccount.delete(id);
            else this.perAccount.set(id, n);
          }
        },
      });
    }
    this.timers.push(setInterval(() => this.tick(), 100));
    for (const t of this.timers) t.unref();
  }

  /** Stops the timers and ends every open stream with 1001 (going away): a client learns the node is shutting down
   *  (and reconnects, to another node if there is one) instead of seeing the connection drop with 1006. */
  close(): void {
    for (const t of this.timers) clearInterval(t);
    for (const ws of this.snapshotQueue.splice(0).slice(this.snapshotQueueHead)) {
      const st = ws.getUserData();
      if (st.closed) continue;
      st.closed = true;
      ws.end(1001, 'server shutting down');
    }
    this.snapshotQueueHead = 0;
    for (const ws of this.held.splice(0)) {
      const st = ws.getUserData();
      if (st.closed) continue;
      st.closed = true;
      ws.end(1001, 'server shutting down');
    }
    for (const ch of this.channels.values()) {
      for (const ws of [...ch.sockets]) {
        const st = ws.getUserData();
        if (st.closed) continue;
        st.closed = true;
        ws.end(1001, 'server shutting down');
      }
    }
  }

  private upgrade(res: uWS.HttpResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t, kind: Kind): void {
    const started = performance.now();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const auth = req.getHeader('authorization');
    let key = req.getHeader('x-api-key');
    if (key === '' && auth.toLowerCase().startsWith('bearer ')) key = auth.slice(7).trim();
    if (key === '') key = queryKey(query);
    const state: SocketState = {
      channel: null, filters: { markets: null, bookmakers: null, eventIds: null }, format: 'json', american: false,
      lastSeq: 0, dirty: false, dirtySince: 0, refuse: null, key, keyState: null, tier: '', kind, sport: decodePathPart(req.getParameter(0) ?? ''),
      resume: query.get('resume'), closed: false, queued: false, queuedReason: null, wantsSnapshot: null, lastInbound: Date.now(), lastPing: 0,
      pongBytes: 0, counted: false, lastBuffered: 0, subscribeTat: 0, heldUntil: 0,
    };
    const refuse = (code: number, reason: string) => {
      if (state.refuse === null) state.refuse = { code, reason };
    };
    const k = key === '' || key === AMBIGUOUS_KEY ? null : this.s.accounts.resolve(key);
    state.keyState = k;
    if (key === '') refuse(4001, 'missing API key: apiKey=<key>');
    else if (key === AMBIGUOUS_KEY) refuse(4001, 'apiKey is given more than once with different keys: send one');
    else if (k === null) refuse(4001, 'invalid API key');
    else if (!(k.tier in WINDOW_MS)) refuse(4003, `WebSocket streams need the business tier or above (this key is ${k.tier})`);
    else state.tier = k.tier;
    const sports = resolveSportKeys(state.sport);
    if (sports === null) refuse(4404, `unknown sport key ${state.sport}`);
    // a sport key of outrights alone (basketball_nba_championship_winner) has no game to stream: an open stream of it
    // would hold heartbeats forever
    else if (outrightsOnly(sports)) {
      refuse(4400, `${state.sport} holds outrights only, and the streams carry game lines: read its outrights on /props (include_event_markets=true) or /v1/prediction-markets`);
    }
    for (const n of STREAM_PARAMS) {
      const all = query.getAll(n);
      if (all.length > 1 && !all.every((v) => v === all[0])) refuse(4400, `${n} is given ${all.length} times with different values: send it once (a list is comma-separated: ${n}=a,b)`);
    }
    const filters = parseFilters((n) => query.get(n));
    if (typeof filters === 'string') refuse(4400, filters);
    else state.filters = filters;
    const fmt = query.get('format') ?? 'json';
    if (fmt !== 'json' && fmt !== 'msgpack') refuse(4400, 'format must be json or msgpack');
    else state.format = fmt;
    // a token that cannot be one of ours is a client's mistake, not a restart of the server
    if (state.resume !== null && !/^[A-Za-z0-9_-]{1,64}:\d{1,15}$/.test(state.resume)) refuse(4400, 'resume is <epoch>:<seq> as a frame of the channel gave them');
    const odds = query.get('oddsFormat') ?? 'decimal';
    if (odds !== 'decimal' && odds !== 'american') refuse(4400, 'oddsFormat must be decimal or american');
    else state.american = odds === 'american';
    // every response carries X-Request-ID and X-Response-Time (DESIGN.md), the 101 too: a refusal follows as a close
    // code, and the id ties a failed stream to the server's log. uWebSockets.js writes headers of an upgrade only
    // after an explicit status.
    res.writeStatus('101 Switching Protocols');
    res.writeHeader('X-Request-ID', nextRequestId());
    if (this.s.simulated) res.writeHeader('X-Data-Source', 'simulated');
    res.writeHeader('X-Response-Time', (performance.now() - started).toFixed(3));
    res.upgrade(state, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'), context);
  }

  private channelFor(kind: Kind, sport: string, tier: string): Channel {
    const window = kind === 'odds-fast' ? 0 : WINDOW_MS[tier];
    const key = channelKey(kind, sport, window);
    let ch = this.channels.get(key);
    if (ch !== undefined) return ch;
    const sports = resolveSportKeys(sport)!;
    // the epoch names the sequence: every channel counts its deltas apart (the tiers' channels of one kind and sport
    // share a name, each coalescing over its own window), so a resume token taken on one must not replay another's.
    // A channel dropped for want of sockets (dropIdle) and made again counts afresh: a new epoch, so no token taken
    // on the old one replays the new one's deltas
    const gen = this.generations.get(key) ?? 0;
    ch = new Channel(`${kind}:${sport}`, kind, sports, window, `${this.epochBase(key, window)}${gen === 0 ? '' : `-${gen}`}`,
      (id) => {
        const ev = this.eventById(id);
        // a live channel holds in-play events only: one that left it has no quotes there (the CRC of none)
        if (ev === undefined || (kind === 'live' && this.liveSeen.get(ch!)?.has(id) !== true)) return EMPTY_CRC;
        return this.crcs.of(ev);
      },
      (id) => {
        const ev = this.eventById(id);
        return ev === undefined ? null : eventHead(ev);
      },
      (ws, reason) => this.buildSnapshot(ws, reason), (ws, snap) => this.sendSnapshot(ws, snap), this.limits);
    // quiet since it opened: a heartbeat's quiet_seconds counts from here until the first delta
    ch.lastDeltaAt = this.s.now();
    ch.idleSince = ch.lastDeltaAt;
    this.channels.set(key, ch);
    for (const sp of sports) {
      let list = this.bySport.get(sp);
      if (list === undefined) this.bySport.set(sp, (list = []));
      list.push(ch);
    }
    if (kind === 'live') this.liveSeen.set(ch, new Set(this.events(ch).map((e) => e.id)));
    return ch;
  }

  /** Per channel key (kind, sport, window), the number it got when first made in this process, kept across its
   *  generations: every channel's epoch names it (the WebSocket audit: an epoch was the process's and the window's
   *  alone, so an NFL token resumed on MLB, or a /ws/live one on /ws/odds, replayed that channel's deltas onto the
   *  other's book). */
  private readonly channelIds = new Map<string, number>();

  /** the epoch of a channel key's first generation, `<process>-c<n>-<window>`; a later one's adds `-<generation>` */
  private epochBase(key: string, window: number): string {
    let id = this.channelIds.get(key);
    if (id === undefined) this.channelIds.set(key, (id = this.channelIds.size + 1));
    return `${this.epoch}-c${id}-${window}`;
  }

  private readonly player = (id: number): string | null => (id < 0 ? null : this.s.hub.players.name(id));
  /** events' CRCs, shared by every channel (several channels of a sport carry the same events) */
  private readonly crcs: EventCrcs;

  private eventById(id: string): EventView | undefined {
    const idx = this.s.hub.eventIds.peek(id);
    return idx < 0 ? undefined : this.s.hub.readModel.event(idx);
  }

  /** events on a channel now: every game not final, in play only for live */
  private events(ch: Channel): EventView[] {
    const now = this.s.now();
    const out: EventView[] = [];
    for (const sp of ch.sports) {
      for (const ev of this.s.hub.readModel.sportEvents(sp)) {
        // game odds only, like /odds: futures and event markets are served by /props and /v1/prediction-markets
        // a started game joins the live channel once its pregame quotes have left the store (Hub.inPlay)
        if (ev.status === 'final' || ev.kind !== 'game' || (ch.kind === 'live' && !this.s.hub.inPlay(ev, now))) continue;
        out.push(ev);
      }
    }
    return out.sort((a, b) => a.commence - b.commence || (a.id < b.id ? -1 : 1));
  }

  private open(ws: WebSocket<SocketState>): void {
    const st = ws.getUserData();
    if (st.refuse !== null) {
      st.closed = true;
      ws.end(st.refuse.code, st.refuse.reason);
      return;
    }
    // checked when the stream opens: a socket is a snapshot built and sent, and up to maxBytes of the server's
    // memory (the WebSocket audit: 300 sockets of one business key were all accepted)
    const account = st.keyState!.account.id;
    const open = this.perAccount.get(account) ?? 0;
    const max = this.limits.maxStreams > 0 ? this.limits.maxStreams : MAX_STREAMS[st.tier];
    if (open >= max) {
      st.closed = true;
      ws.end(4029, `too many open streams: this account holds ${open}, the most for ${st.tier} (close one first; GET /v1/pricing lists each tier's max_streams)`);
      return;
    }
    this.perAccount.set(account, open + 1);
    st.counted = true;
    const ch = this.channelFor(st.kind as Kind, st.sport, st.tier);
    st.channel = ch;
    if (st.resume !== null) {
      const [epoch, seqText] = st.resume.split(':');
      const seq = Number(seqText);
      // a token of this process's earlier run of the same channel (dropped when no socket held it past the resume
      // window) is past that window; any other epoch is another process's, or another channel's (another kind,
      // sport or tier window): a snapshot, as after a restart
      const base = this.epochBase(channelKey(ch.kind, st.sport, ch.windowMs), ch.windowMs);
      if (epoch !== ch.epoch) return this.enqueue(ws, epoch === base || epoch.startsWith(`${base}-`) ? 'resume_window_exceeded' : 'server_restarted');
      const entries = Number.isInteger(seq) && seq >= 0 ? ch.replay(seq) : null;
      if (entries === null) return this.enqueue(ws, 'resume_window_exceeded');
      ch.sockets.add(ws);
      ch.replayTo(ws, seq, entries, this.s.now());
      return;
    }
    this.enqueue(ws, null);
  }

  /** A new socket's first snapshot waits its turn: the queue is worked through a few milliseconds at a time, so a
   *  thousand clients connecting at once (a snapshot of a busy sport is about a megabyte, sent to each) do not hold
   *  the deltas of the streams already open for the whole storm (bench/ws.ts, connection storm). Until its
   *  snapshot is sent the socket is not in its channel, so it gets no delta it could not place. */
  private enqueue(ws: WebSocket<SocketState>, reason: string | null): void {
    const st = ws.getUserData();
    st.queued = true;
    st.queuedReason = reason;
    this.snapshotQueue.push(ws);
    if (this.snapshotQueue.length === 1) setImmediate(this.workQueue);
  }

  private readonly snapshotQueue: WebSocket<SocketState>[] = [];
  private snapshotQueueHead = 0;
  private readonly workQueue = (): void => {
    const q = this.snapshotQueue;
    const until = performance.now() + SNAPSHOT_SLICE_MS;
    while (this.snapshotQueueHead < q.length) {
      const ws = q[this.snapshotQueueHead++];
      const st = ws.getUserData();
      st.queued = false;
      if (st.closed) continue;
      this.snapshot(ws, st.queuedReason);
      st.channel!.sockets.add(ws);
      if (performance.now() >= until) break;
    }
    if (this.snapshotQueueHead < q.length) {
      setImmediate(this.workQueue);
      return;
    }
    q.length = 0;
    this.snapshotQueueHead = 0;
  };

  /** The channel's current state for this socket's filters, split into segments above limits.segmentBytes. */
  snapshot(ws: WebSocket<SocketState>, reason: string | null): void {
    this.sendSnapshot(ws, this.buildSnapshot(ws, reason));
  }

  /** the snapshot frames, encoded, not yet sent; shared by sockets asking for the same state (snapshotCache) */
  buildSnapshot(ws: WebSocket<SocketState>, reason: string | null): Snapshot {
    const st = ws.getUserData();
    const ch = st.channel!;
    const now = this.s.now();
    const key = `${st.format}|${st.american ? 'a' : 'd'}|${reason ?? ''}|${filtersKey(st.filters)}`;
    let cached = this.snapshotCache.get(ch);
    const hit = cached?.get(key);
    if (hit !== undefined && now - hit.at < SNAPSHOT_REUSE_MS && ch.reaches(hit.seq)) {
      this.snapshotReuse.hits++;
      return hit;
    }
    this.snapshotReuse.builds++;
    const snap = { seq: ch.seq, at: now, frames: this.encodeSnapshot(st, ch, reason, now) };
    if (cached === undefined) this.snapshotCache.set(ch, (cached = new Map()));
    cached.set(key, snap);
    return snap;
  }

  private encodeSnapshot(st: SocketState, ch: Channel, reason: string | null, now: number): Uint8Array[] {
    const rm = this.s.hub.readModel;
    const docs: object[] = [];
    for (const ev of this.events(ch)) {
      if (st.filters.eventIds !== null && !st.filters.eventIds.has(ev.id)) continue;
      const items = eventItems(rm, ev, this.player).filter((i) => passes(st.filters, i));
      docs.push(v4Event(ev, items, st.american));
    }
    // a node serving the simulator's prices says so in every snapshot and heartbeat, as X-Data-Source does over HTTP
    const head = { type: 'snapshot', channel: ch.name, epoch: ch.epoch, seq: ch.seq, prev_seq: null, pt: now, ...(reason === null ? {} : { reason }),
      ...(this.s.simulated ? { simulated: true } : {}) };
    const whole = bytes(encode({ ...head, events: docs }, st.format));
    if (whole.length <= this.limits.segmentBytes || docs.length <= 1) return [whole];
    const per = Math.max(1, Math.floor(docs.length / Math.ceil(whole.length / this.limits.segmentBytes)));
    const frames: Uint8Array[] = [];
    for (let i = 0; i < docs.length; i += per) {
      const seg = i === 0 ? 'start' : i + per >= docs.length ? 'end' : 'mid';
      frames.push(bytes(encode({ ...head, seg, events: docs.slice(i, i + per) }, st.format)));
    }
    return frames;
  }

  sendSnapshot(ws: WebSocket<SocketState>, snap: Snapshot): void {
    const st = ws.getUserData();
    ws.cork(() => {
      for (const f of snap.frames) ws.send(f, st.format === 'msgpack');
    });
    st.lastSeq = snap.seq;
    // a snapshot built a moment before holds an earlier seq: the socket catches up from there as one that lagged
    // (Channel.enforce and drain: one merged delta once its buffer is below the low watermark)
    st.dirty = snap.seq !== st.channel!.seq;
    if (st.dirty) st.dirtySince = this.s.now();
  }

  private message(ws: WebSocket<SocketState>, msg: ArrayBuffer, binary: boolean): void {
    const st = ws.getUserData();
    st.lastInbound = Date.now();
    const fail = (message: string) => this.badMessage(ws, message);
    if (msg.byteLength > MAX_MESSAGE_BYTES) return fail(`a message is at most ${MAX_MESSAGE_BYTES} bytes`);
    let body: unknown;
    try {
      body = binary ? unpack(new Uint8Array(msg.slice(0))) : JSON.parse(decoder.decode(msg));
    } catch {
      fail('messages are JSON (text) or msgpack (binary) objects such as {"op": "subscribe", "markets": "h2h,spreads"}');
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('a message is a JSON object with an "op"');
    const m = body as Record<string, unknown>;
    if (m.op === 'ping') {
      // a client that sends but does not read gets no reply to pile up (the WebSocket audit: pings from a paused
      // client on a quiet channel grew the server by 14 MB a second): the reply is dropped, the socket marked behind
      if (!this.replyRoom(ws)) return;
      ws.send(encode({ type: 'pong', channel: st.channel?.name ?? null, epoch: st.channel?.epoch ?? this.epoch, seq: st.lastSeq, prev_seq: st.lastSeq, pt: this.s.now() }, st.format), st.format === 'msgpack');
      return;
    }
    if (m.op !== 'subscribe') return fail(`unknown op ${JSON.stringify(m.op)}: use subscribe or ping`);
    for (const n of ['markets', 'bookmakers', 'regions', 'eventIds']) {
      const v = m[n];
      if (v === undefined || v === null || typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'))) continue;
      return fail(`${n} is a comma-separated string or an array of strings`);
    }
    const get = (n: string): string | null => {
      const v = m[n];
      if (v === undefined || v === null) return null;
      // an empty array is a list given empty, refused as `markets=` is
      return Array.isArray(v) ? v.join(',') : String(v);
    };
    const filters = parseFilters(get);
    if (typeof filters === 'string') return fail(filters);
    if (m.oddsFormat !== undefined && m.oddsFormat !== 'decimal' && m.oddsFormat !== 'american') return fail('oddsFormat must be decimal or american');
    st.filters = filters;
    if (m.oddsFormat !== undefined) st.american = m.oddsFormat === 'american';
    // a socket still waiting for its first snapshot (or for its turn, below) gets it with the new filters, as the
    // answer
    if (st.queued) {
      st.queuedReason = 'subscribed';
      return;
    }
    if (st.wantsSnapshot === null) {
      // a new snapshot: past a burst, one per SUBSCRIBE_INTERVAL_MS (GCRA, its theoretical arrival time kept per socket)
      const now = this.s.now();
      const tat = Math.max(st.subscribeTat, now);
      st.subscribeTat = tat + SUBSCRIBE_INTERVAL_MS;
      const due = tat - (SUBSCRIBE_BURST - 1) * SUBSCRIBE_INTERVAL_MS;
      if (due > now) return this.hold(ws, due);
    }
    this.answerSubscribe(ws);
  }

  /** A subscribe's snapshot, now: once drained, or through the snapshot queue. */
  private answerSubscribe(ws: WebSocket<SocketState>): void {
    const st = ws.getUserData();
    if (st.wantsSnapshot !== null || ws.getBufferedAmount() > this.limits.lowWatermark) {
      // a client that asks faster than it reads gets one snapshot once it has drained, not one per message held in
      // the server's memory (the 4008 bound counts from when it first fell behind)
      st.wantsSnapshot = 'subscribed';
      if (!st.dirty) {
        st.dirty = true;
        st.dirtySince = this.s.now();
      }
      // back in its channel when it was held (hold)
      st.channel?.sockets.add(ws);
    } else {
      // through the snapshot queue, as a new socket's first snapshot: built on the spot, a client sending subscribes
      // with changing filters (no shared snapshot) held the main thread a megabyte snapshot at a time (200 of them:
      // /healthz past 3 s). Out of the channel until it is sent (no delta under filters its book does not have yet);
      // subscribes meanwhile only change the filters it is built with
      st.channel?.sockets.delete(ws);
      this.enqueue(ws, 'subscribed');
    }
  }

  /** A subscribe past the socket's budget waits until `due`, out of its channel as a queued socket is (subscribes
   *  meanwhile only change the filters), and is answered then (tick). */
  private hold(ws: WebSocket<SocketState>, due: number): void {
    const st = ws.getUserData();
    st.channel?.sockets.delete(ws);
    st.queued = true;
    st.queuedReason = 'subscribed';
    st.heldUntil = due;
    this.held.push(ws);
  }

  /** sockets whose subscribe waits for its turn (hold) */
  private readonly held: WebSocket<SocketState>[] = [];

  private releaseHeld(now: number): void {
    let kept = 0;
    for (const ws of this.held) {
      const st = ws.getUserData();
      if (st.closed) continue;
      if (st.heldUntil > now) {
        this.held[kept++] = ws;
        continue;
      }
      st.queued = false;
      this.answerSubscribe(ws);
    }
    this.held.length = kept;
  }

  /** A PING frame from the client, which uWebSockets.js has already answered with a PONG of its payload: no reply of
   *  ours, so replyRoom cannot hold it back. The PONGs queued while the socket is above the low watermark are counted,
   *  and past lowWatermark bytes of them the socket is dropped at once (counted as a backpressure close): a client
   *  that sends PINGs and reads nothing (the WebSocket audit: 737 MiB in 4 s from one socket) holds at most that
   *  much more, where keep-alive PINGs of a client behind on its reading add a few bytes a minute. */
  private pinged(ws: WebSocket<SocketState>, bytes: number): void {
    const st = ws.getUserData();
    st.lastInbound = Date.now();
    if (st.closed) return;
    if (ws.getBufferedAmount() <= this.limits.lowWatermark) {
      st.pongBytes = 0;
      return;
    }
    st.pongBytes += bytes + 2;
    if (st.pongBytes <= this.limits.lowWatermark) return;
    st.closed = true;
    this.closes.backpressure++;
    ws.close();
  }

  /** whether a reply (pong, error) may be sent: not when the socket is above the low watermark, which then marks it
   *  behind (Channel.enforce closes it with 4008 if it stays past the hard bound) */
  private replyRoom(ws: WebSocket<SocketState>): boolean {
    const ch = ws.getUserData().channel;
    return ch === null || ch.room(ws, this.s.now());
  }

  private badMessage(ws: WebSocket<SocketState>, message: string): void {
    const st = ws.getUserData();
    if (st.closed || !this.replyRoom(ws)) return;
    ws.send(encode({ type: 'error', channel: st.channel?.name ?? null, epoch: st.channel?.epoch ?? this.epoch, seq: st.lastSeq, prev_seq: st.lastSeq, pt: this.s.now(), code: 'BAD_MESSAGE', message }, st.format), st.format === 'msgpack');
  }

  /** change records of a batch as delta items, to every channel of their sports */
  private onBatch(b: ChangeBatch): void {
    if (this.channels.size === 0) return;
    const rm = this.s.hub.readModel;
    const now = this.s.now();
    const bySport = new Map<string, DeltaItem[]>();
    const d = b.records;
    for (let i = 0, off = 0; i < b.count; i++, off += CHG.STRIDE) {
      const ev = rm.event(d[off + CHG.EVENT]);
      if (ev === undefined || ev.kind !== 'game' || !this.bySport.has(ev.sport)) continue;
      const kind = d[off + CHG.KIND];
      const market = d[off + CHG.MARKET];
      const o = d[off + CHG.OUTCOME];
      const removed = kind === CHANGE.REMOVED;
      const item: DeltaItem = {
        event_id: ev.id, market: MARKETS[market].key, point: outcomePoint(market, d[off + CHG.POINT], o),
        player: this.player(d[off + CHG.PLAYER]), outcome: outcomeName(ev, market, o), book: BOOKMAKERS[d[off + CHG.BOOK]].key,
        price: removed ? 0 : d[off + CHG.PRICE], last_update: Math.max(d[off + CHG.LINE_CHANGED_AT], d[off + CHG.VERIFIED_AT]),
      };
      if (removed) item.removed = true;
      let list = bySport.get(ev.sport);
      if (list === undefined) bySport.set(ev.sport, (list = []));
      list.push(item);
    }
    for (const [sport, items] of bySport) {
      for (const ch of this.bySport.get(sport)!) {
        if (ch.kind !== 'live') {
          ch.offer(items, now);
          continue;
        }
        const seen = this.liveSeen.get(ch)!;
        ch.offer(items.filter((i) => seen.has(i.event_id)), now);
      }
    }
  }

  private tick(): void {
    const now = this.s.now();
    for (const [ch, cached] of this.snapshotCache) {
      for (const [key, entry] of cached) if (now - entry.at >= SNAPSHOT_REUSE_MS) cached.delete(key);
      if (cached.size === 0) this.snapshotCache.delete(ch);
    }
    if (this.held.length > 0) this.releaseHeld(now);
    for (const ch of this.channels.values()) {
      if (ch.kind === 'live') this.admitLive(ch, now);
      if (ch.windowMs > 0 && now - (this.lastFlush.get(ch) ?? 0) >= ch.windowMs) {
        this.lastFlush.set(ch, now);
        ch.flush(now);
      }
      this.closes.backpressure += ch.enforce(now);
    }
    this.dropIdle(now);
    if (now - this.lastHeartbeat >= HEARTBEAT_MS) {
      this.lastHeartbeat = now;
      this.heartbeat(now);
    }
    const wall = Date.now();
    if (wall - this.lastSilenceCheck >= 1000) {
      this.lastSilenceCheck = wall;
      this.watchSilence(wall);
    }
  }

  private lastSilenceCheck = 0;

  /** Drops the channels no socket has held for longer than the resume window (the WebSocket audit: every channel
   *  ever opened, one per stream kind, sport and window, was fed every batch and kept its ring for good). A token of
   *  one is past that window anyway; a socket waiting for its first snapshot on one keeps it. */
  private dropIdle(now: number): void {
    for (const [key, ch] of this.channels) {
      if (ch.sockets.size > 0 || now - ch.idleSince <= this.limits.ringMs) continue;
      if (this.snapshotQueue.some((ws, i) => i >= this.snapshotQueueHead && ws.getUserData().channel === ch)) continue;
      if (this.held.some((ws) => ws.getUserData().channel === ch)) continue;
      this.channels.delete(key);
      this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
      for (const sp of ch.sports) {
        const list = this.bySport.get(sp)!;
        list.splice(list.indexOf(ch), 1);
        if (list.length === 0) this.bySport.delete(sp);
      }
      this.liveSeen.delete(ch);
      this.lastFlush.delete(ch);
      this.snapshotCache.delete(ch);
    }
  }

  /** closes a socket whose key was revoked; pings a client silent for half the idle bound, and closes one silent for all of it */
  private watchSilence(wall: number): void {
    const idle = this.limits.idleSeconds * 1000;
    for (const ch of this.channels.values()) {
      for (const ws of ch.sockets) {
        const st = ws.getUserData();
        if (st.closed) continue;
        if (st.keyState !== null && st.keyState.revoked) {
          st.closed = true;
          this.closes.revoked++;
          ws.end(4001, 'API key revoked');
          continue;
        }
        // the account moved below the streaming tiers (an admin's change, or a cluster peer's)
        if (st.keyState !== null && !(st.keyState.tier in WINDOW_MS)) {
          st.closed = true;
          this.closes.tier++;
          ws.end(4003, `WebSocket streams need the business tier or above (this key is now ${st.keyState.tier})`);
          continue;
        }
        if (st.keyState !== null && st.keyState.tier !== st.tier) this.retier(ws, st, st.keyState.tier);
        const quiet = wall - st.lastInbound;
        if (quiet > idle) {
          st.closed = true;
          this.closes.silence++;
          ws.end(4002, `no frame or pong from the client for ${this.limits.idleSeconds} s`);
        } else if (quiet > idle / 2 && wall - st.lastPing > idle / 2) {
          st.lastPing = wall;
          ws.ping();
        }
      }
    }
  }

  /** The account moved between the streaming tiers: the socket moves to its new tier's channel (its coalescing
   *  window: an enterprise key moved to business had kept streaming every 500 ms), with a snapshot of it (reason
   *  `tier_changed`: the channel's epoch and sequence are the new one's). odds-fast has one channel for every tier.
   *  A socket behind on its reading moves once it has drained (the next check). */
  private retier(ws: WebSocket<SocketState>, st: SocketState, tier: string): void {
    const next = this.channelFor(st.kind as Kind, st.sport, tier);
    if (next === st.channel) {
      st.tier = tier;
      return;
    }
    if (st.queued) {
      // its first snapshot is still to come: it comes from the new channel
      st.tier = tier;
      st.channel = next;
      return;
    }
    if (st.dirty || st.wantsSnapshot !== null || ws.getBufferedAmount() > this.limits.lowWatermark) return;
    st.channel?.sockets.delete(ws);
    st.tier = tier;
    st.channel = next;
    this.enqueue(ws, 'tier_changed');
  }

  /** An event's start, teams or title changed with none of its quotes: a delta carries an event's head only with a
   *  quote of it, so its channels are offered its quotes again (unchanged: a client applies them idempotently) with
   *  the new head, and, when its teams were renamed, its quotes under their old outcome names as removals. */
  private headChanged(ev: EventView, oldHome: string, oldAway: string): void {
    const channels = this.bySport.get(ev.sport);
    if (channels === undefined) return;
    const items = eventItems(this.s.hub.readModel, ev, this.player);
    if (items.length === 0) return;
    if (oldHome !== ev.home || oldAway !== ev.away) {
      const keys = new Set(items.map(itemKey));
      const gone: DeltaItem[] = [];
      for (const i of items) {
        const outcome = i.outcome === ev.home ? oldHome : i.outcome === ev.away ? oldAway : i.outcome;
        if (outcome === i.outcome) continue;
        const old: DeltaItem = { event_id: i.event_id, market: i.market, point: i.point, player: i.player, outcome, book: i.book, price: 0, last_update: i.last_update, removed: true };
        if (!keys.has(itemKey(old))) gone.push(old);
      }
      items.unshift(...gone);
    }
    const now = this.s.now();
    for (const ch of channels) {
      // a live channel announces only the events it holds (one whose start moved later leaves it at the next tick)
      if (ch.kind === 'live' && !this.liveSeen.get(ch)!.has(ev.id)) continue;
      ch.offer(items, now);
    }
  }

  /** events that went in play join a live channel with their whole quote set; finished ones leave */
  private admitLive(ch: Channel, now: number): void {
    const seen = this.liveSeen.get(ch)!;
    const items: DeltaItem[] = [];
    const current = new Set<string>();
    for (const ev of this.events(ch)) {
      current.add(ev.id);
      if (!seen.has(ev.id)) {
        seen.add(ev.id);
        items.push(...eventItems(this.s.hub.readModel, ev, this.player));
      }
    }
    for (const id of seen) {
      if (current.has(id)) continue;
      seen.delete(id);
      ch.forget(id);
      // a final event's quotes leave by the store's removals; one that is no longer in play but still held (its
      // start moved later) leaves the live book here, or the clients would keep it for good
      const ev = this.eventById(id);
      if (ev !== undefined && ev.status !== 'final' && ev.kind === 'game') {
        for (const i of eventItems(this.s.hub.readModel, ev, this.player)) items.push(repriced(i, 0, true));
      }
    }
    if (items.length === 0) return;
    // the channel's membership moved without its sports' data versions: a snapshot built before is not its state
    this.snapshotCache.delete(ch);
    ch.offer(items, now);
  }

  /** source freshness over every book that has written: ok, degraded, breach, stale by its SLA class */
  upstream(now: number): { worst_sla: string; counts: Record<string, number> } {
    const counts = { ok: 0, degraded: 0, breach: 0, stale: 0 };
    const order = ['ok', 'degraded', 'breach', 'stale'] as const;
    let worst = 0;
    const newest = this.s.hub.readModel.newestByBook;
    for (let b = 0; b < newest.length; b++) {
      const t = newest[b];
      if (!(t > 0)) continue;
      const c = slaClassOf(BOOKMAKERS[b]);
      const age = (now - t) / 1000;
      const k = age <= c.tight_s ? 0 : age <= c.slack_s ? 1 : age <= c.stale_s ? 2 : 3;
      counts[order[k]]++;
      worst = Math.max(worst, k);
    }
    return { worst_sla: order[worst], counts };
  }

  private heartbeat(now: number): void {
    const upstream = this.upstream(now);
    for (const ch of this.channels.values()) {
      if (ch.sockets.size === 0) continue;
      const frame = { type: 'heartbeat', channel: ch.name, epoch: ch.epoch, seq: ch.seq, prev_seq: ch.seq, pt: now,
        quiet_seconds: (now - ch.lastDeltaAt) / 1000, upstream, ...(this.s.simulated ? { simulated: true } : {}) };
      const json = encode(frame, 'json');
      const pack = encode(frame, 'msgpack');
      for (const ws of ch.sockets) {
        const st = ws.getUserData();
        if (st.closed || st.dirty || ws.getBufferedAmount() > this.limits.lowWatermark) continue;
        ws.send(st.format === 'json' ? json : pack, st.format === 'msgpack');
      }
    }
  }
}
