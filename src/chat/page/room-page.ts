import { CHAT_LIMITS } from '../limits';
import { PROTOCOL } from '../protocol';

export const ROOM_SCRIPT_PATH = '/assets/chat/room.js';
export const ROOM_STYLE_PATH = '/assets/chat/room.css';

/** The page holds no data and no inline script; the script learns the room id from `data-room-id`. */
export function roomPageHtml(roomId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Room · Switchboard</title>
<link rel="stylesheet" href="${ROOM_STYLE_PATH}">
<script src="${ROOM_SCRIPT_PATH}" defer></script>
</head>
<body data-room-id="${roomId}">
<header>
  <div><h1 id="room-name">Room</h1><p id="room-topic"></p></div>
  <span id="state" class="connecting" role="status" aria-live="polite">Starting…</span>
</header>
<form id="token-form" hidden>
  <label for="token">Access token with <code>chat:read</code></label>
  <input id="token" type="password" autocomplete="off" required>
  <button type="submit">Open room</button>
  <p class="hint">Kept in this browser tab only (session storage).</p>
</form>
<main>
  <button id="older" type="button" hidden>Load older messages</button>
  <ol id="messages"></ol>
</main>
</body>
</html>
`;
}

/** Strict CSP: scripts and styles only from this origin, no inline code, images over https only. */
export function roomPageCsp(requestUrl: string): string {
  const url = new URL(requestUrl);
  const ws = `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    `connect-src 'self' ${ws}`,
    'img-src https:',
    "style-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const ROOM_STYLE = `:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; font-family: system-ui, sans-serif; }
[hidden] { display: none !important; }
body { margin: 0 auto; max-width: 56rem; padding: 0 1rem 2rem; }
header { display: flex; justify-content: space-between; align-items: center; gap: 1rem; position: sticky; top: 0;
  background: Canvas; border-bottom: 1px solid var(--line); padding: .75rem 0; }
h1 { font-size: 1.25rem; margin: 0; }
#room-topic { margin: .25rem 0 0; color: var(--muted); }
#state { font-size: .85rem; padding: .2rem .6rem; border-radius: 1rem; border: 1px solid var(--line); white-space: nowrap; }
#state.live { color: #047857; border-color: #047857; }
#state.connecting { color: #b45309; border-color: #b45309; }
#state.offline { color: #b91c1c; border-color: #b91c1c; }
form { display: grid; gap: .5rem; margin: 1.5rem 0; max-width: 28rem; }
.hint { color: var(--muted); font-size: .85rem; margin: 0; }
#older { margin: 1rem 0 0; }
ol { list-style: none; padding: 0; margin: 0; }
.message { border-bottom: 1px solid var(--line); padding: .75rem 0; overflow-wrap: anywhere; }
.meta { color: var(--muted); font-size: .8rem; margin-bottom: .25rem; }
.tag { border: 1px solid var(--line); border-radius: .25rem; padding: 0 .3rem; }
.body img { max-width: 100%; }
.body pre { overflow-x: auto; padding: .5rem; border: 1px solid var(--line); }
.body table { border-collapse: collapse; }
.body th, .body td { border: 1px solid var(--line); padding: .25rem .5rem; }
`;

/**
 * The page script, plain browser JavaScript. The wire protocol is not restated here: PROTOCOL from
 * protocol.ts is inlined as data (frame names, query names, heartbeat, close codes).
 */
export const ROOM_SCRIPT = `'use strict';
(() => {
  const P = ${JSON.stringify(PROTOCOL)};
  const TAIL = 100;
  const PAGE = ${CHAT_LIMITS.historyDefault};
  const TOKEN_KEY = 'switchboard.token';
  const roomId = document.body.dataset.roomId;
  const $ = (id) => document.getElementById(id);
  const list = $('messages'), state = $('state'), form = $('token-form'), tokenInput = $('token'), older = $('older');
  let socket = null, attempts = 0, lastSeq = 0, lastHeard = 0, heartbeat = null, reconnectTimer = null, live = false;

  const setState = (text, kind) => { state.textContent = text; state.className = kind; };
  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const firstSeq = () => Number(list.firstElementChild ? list.firstElementChild.dataset.seq : lastSeq + 1);

  function askToken(why) {
    form.hidden = false;
    setState(why, 'offline');
    tokenInput.focus();
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = tokenInput.value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    tokenInput.value = '';
    form.hidden = true;
    connect();
  });

  /** Inserts a message at its place by seq; a seq already shown is ignored. */
  function render(m) {
    if (list.querySelector('[data-seq="' + m.seq + '"]')) return;
    const item = document.createElement('li');
    item.className = 'message';
    item.dataset.seq = String(m.seq);
    const meta = document.createElement('div');
    meta.className = 'meta';
    const time = document.createElement('time');
    time.dateTime = m.createdAt;
    time.textContent = new Date(m.createdAt).toLocaleString();
    meta.append('#' + m.seq + ' · ', time);
    if (m.metadata) {
      const tag = document.createElement('span');
      tag.className = 'tag';
      tag.textContent = m.metadata;
      meta.append(' ', tag);
    }
    const body = document.createElement('div');
    body.className = 'body';
    body.innerHTML = m.html; // sanitised on the server when the message was posted; CSP backs it up
    item.append(meta, body);

    const last = list.lastElementChild;
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    if (!last || Number(last.dataset.seq) < m.seq) {
      list.append(item);
      if (atBottom) item.scrollIntoView({ block: 'end' });
    } else {
      let next = list.firstElementChild;
      while (next && Number(next.dataset.seq) < m.seq) next = next.nextElementSibling;
      list.insertBefore(item, next);
    }
    lastSeq = Math.max(lastSeq, m.seq);
    older.hidden = firstSeq() <= 1;
  }

  async function connect() {
    clearTimeout(reconnectTimer);
    const bearer = token();
    if (!bearer) return askToken('Token needed');
    setState('Connecting…', 'connecting');
    let res;
    try {
      res = await fetch('/api/v1/rooms/' + roomId + '/ws-ticket', { method: 'POST', headers: { Authorization: 'Bearer ' + bearer } });
    } catch {
      return reconnectLater();
    }
    if (res.status === 401 || res.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      return askToken(res.status === 401 ? 'Token not accepted' : 'This token may not read rooms');
    }
    if (res.status === 404) return setState('No such room', 'offline');
    if (!res.ok) return reconnectLater();
    const { ticket, room } = await res.json();
    $('room-name').textContent = room.name;
    $('room-topic').textContent = room.topic || '';
    document.title = room.name + ' · Switchboard';

    const query = new URLSearchParams();
    query.set(P.query.ticket, ticket);
    if (lastSeq > 0) query.set(P.query.after, String(lastSeq));
    else query.set(P.query.tail, String(TAIL));
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(scheme + '//' + location.host + '/api/v1/rooms/' + roomId + '/ws?' + query);
    socket = ws;
    ws.addEventListener('open', () => {
      lastHeard = Date.now();
      heartbeat = setInterval(() => {
        if (Date.now() - lastHeard > 2.5 * P.heartbeatMs) return ws.close();
        ws.send(P.ping);
      }, P.heartbeatMs);
    });
    ws.addEventListener('message', (event) => {
      lastHeard = Date.now();
      let frame;
      try { frame = JSON.parse(event.data); } catch { return; }
      if (frame.type === P.frames.messages) {
        for (const m of frame.messages) {
          // Live seqs are contiguous; a jump means frames this socket never got (a room that
          // restarted between storing a message and sending it): read the missing ones.
          if (live && socket === ws && m.seq > lastSeq + 1) fillGap(lastSeq, m.seq);
          render(m);
        }
      } else if (frame.type === P.frames.ready) { attempts = 0; live = true; setState('Live', 'live'); older.hidden = firstSeq() <= 1; }
    });
    ws.addEventListener('close', (event) => {
      clearInterval(heartbeat);
      if (socket !== ws) return;
      socket = null;
      live = false;
      if (event.code === P.close.roomDeleted) return setState('This room was deleted', 'offline');
      reconnectLater();
    });
  }

  /**
   * Reads the messages with after < seq < before from the history (which has every stored one). If
   * the history cannot answer now (e.g. 503 while the room cannot flush), it tries again a few times,
   * later: a reconnect would not bring them (it asks for what follows the last seq shown).
   */
  async function fillGap(after, before, tries = 0) {
    while (after + 1 < before) {
      let res = null;
      try {
        res = await fetch('/api/v1/rooms/' + roomId + '/messages?after=' + after + '&before=' + before + '&limit=' + PAGE,
          { headers: { Authorization: 'Bearer ' + token() } });
      } catch {}
      if (!res || !res.ok) {
        // Only a network error or a 5xx can pass; a 4xx (token, room gone) would answer the same again.
        if ((!res || res.status >= 500) && tries < 5) setTimeout(() => fillGap(after, before, tries + 1), 2000 * (tries + 1));
        return;
      }
      const { entities } = await res.json();
      if (entities.length === 0) return;
      entities.forEach(render);
      after = entities[entities.length - 1].seq;
    }
  }

  function reconnectLater() {
    const delay = Math.min(30000, 1000 * 2 ** attempts) + Math.floor(Math.random() * 500);
    attempts++;
    setState('Offline, reconnecting in ' + Math.round(delay / 1000) + ' s', 'offline');
    reconnectTimer = setTimeout(connect, delay);
  }

  older.addEventListener('click', async () => {
    const first = firstSeq();
    if (first <= 1) return;
    const after = Math.max(0, first - 1 - PAGE);
    const res = await fetch('/api/v1/rooms/' + roomId + '/messages?after=' + after + '&before=' + first + '&limit=' + PAGE,
      { headers: { Authorization: 'Bearer ' + token() } });
    if (!res.ok) return;
    for (const m of (await res.json()).entities) render(m);
  });

  window.addEventListener('online', () => { if (!socket) connect(); });
  connect();
})();
`;
