/**
 * The room page's client: asks once for a token (kept in sessionStorage), trades it for a ticket,
 * opens the room's WebSocket with the replay it needs (`tail` first, `after=<last seq>` on
 * reconnect), acks what it received (flow control, protocol.ts), shows messages in seq order, reads
 * back any live gap from the history, and reconnects by itself: with backoff, at once with a fresh
 * ticket when the socket reached its lifetime, and asks for a token again when it was revoked.
 * Served as /assets/chat/room.js (scripts/build-page.ts).
 */
import { AckCounter, decodeServerFrame, PROTOCOL, type ChatMessage } from '../../protocol';
import { HISTORY_PAGE, readHistory, requestTicket, type RoomInfo } from './api';
import { MessageList } from './message-list';

/** Messages replayed on the first connection; older ones come with "Load older messages". */
const TAIL = 100;
const TOKEN_KEY = 'switchboard.token';
const RECONNECT_MAX_MS = 30_000;
const GAP_RETRIES = 5;
const GAP_RETRY_MS = 2_000;
/** A socket that has heard nothing, not even a pong, for this many heartbeats is closed and replaced. */
const SILENT_BEATS = 2.5;

type StateKind = 'connecting' | 'live' | 'offline';

function element<T extends HTMLElement>(id: string, type: { new (): T; prototype: T }): T {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`the page has no #${id}`);
  return el;
}

const state = element('state', HTMLElement);
const form = element('token-form', HTMLFormElement);
const tokenInput = element('token', HTMLInputElement);
const older = element('older', HTMLButtonElement);
const messages = new MessageList(element('messages', HTMLOListElement));
// The Worker serves this page only at /rooms/<room id>, after checking the id.
const roomId = /^\/rooms\/([^/]+)$/.exec(location.pathname)?.[1];

let socket: WebSocket | null = null;
let live = false;
let attempts = 0;
let reconnectTimer: ReturnType<typeof setTimeout> | undefined;

const token = () => sessionStorage.getItem(TOKEN_KEY);

function setState(text: string, kind: StateKind): void {
  state.textContent = text;
  state.className = kind;
}

function show(batch: readonly ChatMessage[]): void {
  for (const m of batch) messages.render(m);
  older.hidden = messages.firstSeq <= 1;
}

function askToken(why: string): void {
  form.hidden = false;
  setState(why, 'offline');
  tokenInput.focus();
}

function showRoom(room: RoomInfo): void {
  element('room-name', HTMLElement).textContent = room.name;
  element('room-topic', HTMLElement).textContent = room.topic ?? '';
  document.title = `${room.name} · Switchboard`;
}

async function connect(room: string): Promise<void> {
  clearTimeout(reconnectTimer);
  const bearer = token();
  if (!bearer) return askToken('Token needed');
  setState('Connecting…', 'connecting');
  const answer = await requestTicket(room, bearer);
  switch (answer.kind) {
    case 'token not accepted':
    case 'token may not read':
      sessionStorage.removeItem(TOKEN_KEY);
      return askToken(answer.kind === 'token not accepted' ? 'Token not accepted' : 'This token may not read rooms');
    case 'no such room':
      return setState('No such room', 'offline');
    case 'try later':
      return reconnectLater(room);
    case 'ticket':
      showRoom(answer.room);
      openSocket(room, answer.ticket);
  }
}

function openSocket(room: string, ticket: string): void {
  const query = new URLSearchParams({ [PROTOCOL.query.ticket]: ticket });
  if (messages.lastSeq > 0) query.set(PROTOCOL.query.after, String(messages.lastSeq));
  else query.set(PROTOCOL.query.tail, String(TAIL));
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${scheme}//${location.host}/api/v1/rooms/${room}/ws?${query}`);
  socket = ws;
  let lastHeard = 0;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const acks = new AckCounter();

  ws.addEventListener('open', () => {
    lastHeard = Date.now();
    heartbeat = setInterval(() => {
      if (Date.now() - lastHeard > SILENT_BEATS * PROTOCOL.heartbeatMs) ws.close();
      else ws.send(PROTOCOL.ping);
    }, PROTOCOL.heartbeatMs);
  });
  ws.addEventListener('message', (event: MessageEvent<unknown>) => {
    lastHeard = Date.now();
    if (typeof event.data === 'string') {
      // The room sends the rest of the replay, and keeps this socket, only as it hears acks.
      const ack = acks.frame(event.data);
      if (ack !== undefined && ws.readyState === WebSocket.OPEN) ws.send(ack);
    }
    const frame = typeof event.data === 'string' ? decodeServerFrame(event.data) : undefined;
    if (frame?.type === 'messages') {
      for (const m of frame.messages) {
        // Live seqs are contiguous; a jump means frames this socket never got (a room that
        // restarted between storing a message and sending it): read the missing ones.
        if (live && socket === ws && m.seq > messages.lastSeq + 1) void fillGap(room, messages.lastSeq, m.seq);
        messages.render(m);
      }
      older.hidden = messages.firstSeq <= 1;
    } else if (frame?.type === 'ready') {
      attempts = 0;
      live = true;
      setState('Live', 'live');
      older.hidden = messages.firstSeq <= 1;
    }
  });
  ws.addEventListener('close', (event) => {
    clearInterval(heartbeat);
    if (socket !== ws) return;
    socket = null;
    live = false;
    if (event.code === PROTOCOL.close.roomDeleted) return setState('This room was deleted', 'offline');
    if (event.code === PROTOCOL.close.revoked) {
      sessionStorage.removeItem(TOKEN_KEY);
      return askToken('Token revoked');
    }
    // The socket's lifetime ended: a fresh ticket (connect asks for one) and `after=`, at once.
    if (event.code === PROTOCOL.close.expired) return void connect(room);
    // Too slow (4008) and everything else: again with `after=<last seq shown>`, after a backoff.
    reconnectLater(room);
  });
}

/**
 * Reads the messages with after < seq < before from the history (which has every stored one). If
 * the history cannot answer now (e.g. 503 while the room cannot flush), it tries again a few times,
 * later: a reconnect would not bring them (it asks for what follows the last seq shown).
 */
async function fillGap(room: string, after: number, before: number, tries = 0): Promise<void> {
  while (after + 1 < before) {
    const answer = await readHistory(room, token() ?? '', after, before);
    if (!answer.ok) {
      // Only a network error or a 5xx can pass; a 4xx (token, room gone) would answer the same again.
      const transient = answer.status === undefined || answer.status >= 500;
      if (transient && tries < GAP_RETRIES) {
        setTimeout(() => void fillGap(room, after, before, tries + 1), GAP_RETRY_MS * (tries + 1));
      }
      return;
    }
    const last = answer.messages.at(-1);
    if (!last) return;
    show(answer.messages);
    after = last.seq;
  }
}

function reconnectLater(room: string): void {
  const delay = Math.min(RECONNECT_MAX_MS, 1000 * 2 ** attempts) + Math.floor(Math.random() * 500);
  attempts++;
  setState(`Offline, reconnecting in ${Math.round(delay / 1000)} s`, 'offline');
  reconnectTimer = setTimeout(() => void connect(room), delay);
}

if (roomId === undefined) {
  setState('No such room', 'offline');
} else {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = tokenInput.value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    tokenInput.value = '';
    form.hidden = true;
    void connect(roomId);
  });

  older.addEventListener('click', async () => {
    const first = messages.firstSeq;
    if (first <= 1) return;
    const answer = await readHistory(roomId, token() ?? '', Math.max(0, first - 1 - HISTORY_PAGE), first);
    if (answer.ok) show(answer.messages);
  });

  window.addEventListener('online', () => {
    if (!socket) void connect(roomId);
  });
  void connect(roomId);
}
