// GET /status: a small HTML page read at a glance (no build step, no framework): each source with its class,
// age and a 24-hour classification strip drawn from /v1/status/history, poller health, request rates and the
// live arbitrage and EV counts; it refreshes itself (status every 15 s, history every minute).

import type { Route } from '../router.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>linewire status</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2430; }
  h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
  .muted { color: #677; }
  table { border-collapse: collapse; margin-top: 1rem; width: 100%; max-width: 980px; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e3e6ea; }
  .cls { display: inline-block; min-width: 5.5em; padding: 0 .4em; border-radius: 3px; color: #fff; text-align: center; }
  .ok { background: #2e8b57; } .degraded { background: #c9a227; } .breach { background: #d2691e; } .stale { background: #b22222; }
  .strip { position: relative; width: 360px; height: 14px; background: #eef0f3; }
  .strip span { position: absolute; top: 0; height: 14px; }
  #summary span { margin-right: 1.2rem; }
  .axis { display: flex; justify-content: space-between; width: 360px; font-weight: normal; font-size: 12px; color: #677; }
  .legend span.cls { min-width: 0; margin: 0 .2rem 0 .8rem; }
  .legend .none { background: #eef0f3; color: #677; }
</style>
</head>
<body>
<h1>linewire status <span id="overall" class="cls">…</span></h1>
<div id="simulated" hidden style="background:#ecb22e;color:#1d1c1d;padding:.4rem .6rem;margin:.4rem 0;font-weight:600">SIMULATED DATA: the sources below are the built-in simulator's, not the bookmakers' own feeds</div>
<div class="muted" id="asof">loading…</div>
<div id="summary"></div>
<div class="muted legend">classes:<span class="cls ok">ok</span><span class="cls degraded">degraded</span><span class="cls breach">breach</span><span class="cls stale">stale</span><span class="cls none">no sample</span></div>
<table>
  <thead><tr><th>source</th><th>class</th><th>age (s)</th><th>last 24 hours<div class="axis"><span>24 h ago</span><span>12 h</span><span>now</span></div></th></tr></thead>
  <tbody id="sources"></tbody>
</table>
<h2 style="font-size:1.05rem;margin-top:1.5rem">feeds</h2>
<table><thead><tr><th>feed</th><th>circuit</th><th>failures</th><th>backoff (ms)</th><th>last pulse (s ago)</th></tr></thead><tbody id="feeds"></tbody></table>
<script>
"use strict";
var hist = {};
function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; }
function strip(source) {
  var box = el('div', undefined, 'strip');
  var segs = hist[source] || [];
  var end = Date.now(), start = end - 86400000;
  segs.forEach(function (s) {
    var a = Math.max(start, Date.parse(s.from)), b = Math.max(a + 30000, Date.parse(s.to) + 30000);
    var span = el('span', undefined, s.sla_state);
    span.style.left = ((a - start) / 864000) + '%';
    span.style.width = Math.max(0.2, (Math.min(b, end) - a) / 864000) + '%';
    span.title = s.sla_state + ' ' + s.from + ' to ' + s.to;
    box.appendChild(span);
  });
  return box;
}
function render(st) {
  var o = document.getElementById('overall');
  o.textContent = st.status; o.className = 'cls ' + (st.status === 'ok' ? 'ok' : st.status === 'degraded' ? 'breach' : 'stale');
  document.getElementById('asof').textContent = 'as of ' + st.generated_at + ' (window ' + st.window_s + ' s)';
  document.getElementById('simulated').hidden = st.simulated !== true;
  var sum = document.getElementById('summary'); sum.textContent = '';
  [['stale sources', st.data_freshness.stale_sources.length], ['requests last hour', st.requests.last_hour],
   ['p50 / p95 per minute', st.requests.p50_per_min + ' / ' + st.requests.p95_per_min],
   ['live arbitrages', st.analytics.arbitrage], ['live EV quotes', st.analytics.ev]].forEach(function (kv) {
    sum.appendChild(el('span', kv[0] + ': ' + kv[1]));
  });
  var body = document.getElementById('sources'); body.textContent = '';
  st.sources.forEach(function (s) {
    var tr = el('tr'); tr.dataset.source = s.source;
    tr.appendChild(el('td', s.source));
    var td = el('td'); td.appendChild(el('span', s.sla_state, 'cls ' + s.sla_state)); tr.appendChild(td);
    // null: no write within the status window (an hour), not necessarily never
    tr.appendChild(el('td', s.latest_write_age_seconds === null ? 'none in ' + Math.round(st.window_s / 60) + ' min' : s.latest_write_age_seconds));
    var sd = el('td'); sd.appendChild(strip(s.source)); tr.appendChild(sd);
    body.appendChild(tr);
  });
  var feeds = document.getElementById('feeds'); feeds.textContent = '';
  st.poller_health.feeds.forEach(function (f) {
    var tr = el('tr');
    [f.feed, f.circuit, f.consecutive_failures, f.backoff_ms, f.last_pulse_age_s === null ? 'never' : f.last_pulse_age_s].forEach(function (v) { tr.appendChild(el('td', v)); });
    feeds.appendChild(tr);
  });
}
function loadStatus() {
  fetch('/v1/status').then(function (r) {
    if (r.status === 503) { setTimeout(loadStatus, 1000 * Number(r.headers.get('Retry-After') || 5)); return null; }
    return r.json();
  }).then(function (st) { if (st) render(st); }).catch(function () { document.getElementById('asof').textContent = 'status unavailable, retrying'; });
}
function loadHistory() {
  fetch('/v1/status/history?window_s=86400').then(function (r) { return r.json(); }).then(function (h) {
    hist = {}; h.sources.forEach(function (s) { hist[s.source] = s.segments; }); loadStatus();
  }).catch(function () {});
}
loadHistory();
setInterval(loadStatus, 15000);
setInterval(loadHistory, 60000);
</script>
</body>
</html>
`;

export function statusPageRoutes(): Route[] {
  return [{
    method: 'GET',
    path: '/status',
    contentType: 'text/html; charset=utf-8',
    auth: 'none',
    tag: 'status',
    summary: 'The status page (HTML): sources with class, age and a 24-hour strip, feeds, request rates, live arbitrage and EV counts',
    handle: () => ({ status: 200, body: PAGE, contentType: 'text/html; charset=utf-8', headers: [['Cache-Control', 'no-cache']] }),
  }];
}
