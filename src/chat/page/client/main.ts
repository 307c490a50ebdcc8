/**
 * The room page's client: asks once for a token (kept in sessionStorage), trades it for a ticket,
 * opens the room's WebSocket with the replay it needs (`tail` first, `after=<last seq>` on
 * reconnect), acks what it received (flow control, protocol.ts), shows messages in seq order, reads
 * back any live gap from the history, and reconnects by itself: with backoff (a page-wide banner
 * counts down to the next try and offers "Reconnect now"), at once with a fresh ticket when the
 * socket reached its lifetime, and asks for a token again when it was revoked. A socket that stops
 * answering its pings is dropped and replaced within 15 s. Older messages load as the reader
 * scrolls up; `#<seq>` links to a message, which is also how a search result or a date is shown
 * (history-search.ts). Served as /assets/chat/room.js (scripts/build-page.ts).
 */
import { AckCounter, type ChatMessage, decodeServerFrame, isChatMessage, PROTOCOL, type ServerFrame } from '../../protocol';
import { HISTORY_MAX, HISTORY_PAGE, readHistory, requestTicket, type RoomInfo, takeViewerLink } from './api';
import { Attention } from './attention';
import { type Compose, setUpCompose } from './compose';
import { HistoryTools } from './history-search';
import { MessageList } from './message-list';
import { withIdentity } from './sender';
import { ago } from './time-format';
import { applyWall, wallFromUrlOrStorage } from './wall-mode';

/** Messages replayed on the first connection; older ones load as the reader scrolls up. */
const TAIL = 100;
/** Messages kept in the DOM in wall mode: a wall screen runs for weeks. */
const WALL_KEEP = 100;
const TOKEN_KEY = 'switchboard.token';
const RECONNECT_MAX_MS = 30_000;
const GAP_RETRIES = 5;
const GAP_RETRY_MS = 2_000;
/**
 * More often than PROTOCOL.heartbeatMs (the least a client must do): a socket that heard nothing,
 * not even a pong, for SILENT_AFTER_MS (two pings) is a silent drop, found within 15 s.
 */
const PING_EVERY_MS = 5_000;
const SILENT_AFTER_MS = 11_000;
const WATCH_EVERY_MS = 1_000;
/** Relative times ("3 min ago") are refreshed this often. */
const TIMES_EVERY_MS = 30_000;
/** Older messages load when the top of the list comes this close to the viewport. */
const LOAD_AHEAD_PX = 800;

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
const emptyNote = element('empty', HTMLElement);
const marker = element('new-marker', HTMLButtonElement);
const wallToggle = element('wall-toggle', HTMLButtonElement);
const toolsToggle = element('tools-toggle', HTMLButtonElement);
const searchField = element('search-q', HTMLInputElement);
const banner = element('offline', HTMLElement);
const bannerReason = element('offline-reason', HTMLElement);
const bannerCountdown = element('offline-countdown', HTMLElement);
const bannerLast = element('offline-last', HTMLElement);
const reconnectButton = element('reconnect', HTMLButtonElement);
const lastMessage = element('last-message', HTMLElement);
const composeForm = element('compose', HTMLFormElement);
const stickyTop = document.querySelector('header') ?? document.body;
// The Worker serves this page only at /rooms/<room id>, after checking the id.
const roomId = /^\/rooms\/([^/]+)$/.exec(location.pathname)?.[1];

const attention = new Attention(marker, document.title);
const messages = new MessageList(element('messages', HTMLOListElement), element('end', HTMLElement), {
  changed: () => updateOlder(),
  freshBelow: (count) => attention.freshBelow(count),
  critical: (view) => attention.critical(view.item),
  removed: (view) => attention.removed(view.item),
  bottom: (atBottom) => {
    if (atBottom) attention.atBottom();
  },
});

let socket: WebSocket | null = null;
let live = false;
/** Set once the page has been live (the first `ready`). */
let wasLive = false;
/** Messages above this seq arrived after the page first went live: they are new to the reader. */
let freshAfter = Number.POSITIVE_INFINITY;
let attempts = 0;
let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
let reconnectAt: number | null = null;
let lastMessageAt: Date | null = null;
let wall = wallFromUrlOrStorage();
let loadingOlder = false;
let compose: Compose | undefined;
let historyTools: HistoryTools | undefined;

/** A viewer link (`#view=…`, then kept for the room) reads the room in place of a token: no token is asked for. */
const viewerLink = roomId === undefined ? null : takeViewerLink(roomId);
const token = () => viewerLink ?? sessionStorage.getItem(TOKEN_KEY);

function setState(text: string, kind: StateKind): void {
  state.textContent = text;
  state.className = kind;
}

/** The page-wide banner: shown while the page cannot reach the room, until it is live again. */
function showBanner(reason: string, retry: boolean): void {
  banner.hidden = false;
  bannerReason.textContent = reason;
  reconnectButton.hidden = !retry;
  tick();
}

function hideBanner(): void {
  banner.hidden = true;
  reconnectAt = null;
}

/** Once a second: the reconnect countdown and "last message n min ago". */
function tick(): void {
  const now = new Date();
  const last = lastMessageAt === null ? '' : `Last message ${ago(lastMessageAt, now)}`;
  if (lastMessage.textContent !== last) lastMessage.textContent = last;
  if (banner.hidden) return;
  const countdown =
    reconnectAt !== null
      ? `Reconnecting in ${Math.max(0, Math.ceil((reconnectAt - now.getTime()) / 1000))} s`
      : socket !== null || reconnectButton.disabled
        ? 'Reconnecting…'
        : '';
  if (bannerCountdown.textContent !== countdown) bannerCountdown.textContent = countdown;
  const lastText = last === '' ? 'No message yet.' : `${last}.`;
  if (bannerLast.textContent !== lastText) bannerLast.textContent = lastText;
}

function show(batch: readonly ChatMessage[]): void {
  if (historyTools !== undefined) for (const m of batch) historyTools.sawMetadata(m.metadata);
  messages.add(
    batch.filter((m) => m.seq <= freshAfter),
    false,
  );
  messages.add(
    batch.filter((m) => m.seq > freshAfter),
    true,
  );
  const newest = batch.at(-1);
  if (newest !== undefined && newest.seq >= messages.lastSeq) {
    lastMessageAt = new Date(newest.createdAt);
    tick();
  }
}

function updateOlder(): void {
  // After every flush: written only when it changes (each write would invalidate style).
  const hide = wall || messages.firstSeq <= 1;
  if (older.hidden !== hide) older.hidden = hide;
  // A room without a message says so once the page is live (before, its replay may be on the way).
  const none = !live || messages.lastSeq > 0;
  if (emptyNote.hidden !== none) emptyNote.hidden = none;
}

function askToken(why: string): void {
  // A viewer link the server refuses was revoked or rotated: only a new link helps, never a token.
  if (viewerLink !== null) {
    setState('Link revoked', 'offline');
    showBanner('This link was revoked or replaced; ask for a new one.', false);
    return;
  }
  hideBanner();
  form.hidden = false;
  setState(why, 'offline');
  tokenInput.focus();
}

function showRoom(room: RoomInfo): void {
  element('room-name', HTMLElement).textContent = room.name;
  element('room-topic', HTMLElement).textContent = room.topic ?? '';
  attention.title = `${room.name} · Switchboard`;
}

async function connect(room: string): Promise<void> {
  clearTimeout(reconnectTimer);
  reconnectAt = null;
  const bearer = token();
  if (!bearer) return askToken('Token needed');
  setState('Connecting…', 'connecting');
  reconnectButton.disabled = true;
  tick();
  const answer = await requestTicket(room, bearer);
  reconnectButton.disabled = false;
  switch (answer.kind) {
    case 'token not accepted':
    case 'token may not read':
      sessionStorage.removeItem(TOKEN_KEY);
      return askToken(answer.kind === 'token not accepted' ? 'Token not accepted' : 'This token may not read rooms');
    case 'no such room':
      setState('No such room', 'offline');
      if (wasLive) showBanner('This room no longer exists.', false);
      return;
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
  let lastHeard = Date.now();
  let lastPing = 0;
  let watch: ReturnType<typeof setInterval> | undefined;
  const acks = new AckCounter();

  /** Heard nothing for too long (a network that dropped without a close): replace the socket now. */
  const silentDrop = () => {
    clearInterval(watch);
    if (socket !== ws) return;
    socket = null;
    live = false;
    ws.close();
    attempts = 0;
    reconnectLater(room, 'The connection went silent.');
  };

  ws.addEventListener('open', () => {
    lastHeard = Date.now();
    watch = setInterval(() => {
      const now = Date.now();
      if (now - lastHeard > SILENT_AFTER_MS) silentDrop();
      else if (now - lastPing >= PING_EVERY_MS) {
        lastPing = now;
        ws.send(PROTOCOL.ping);
      }
    }, WATCH_EVERY_MS);
  });
  ws.addEventListener('message', (event: MessageEvent<unknown>) => {
    if (socket !== ws) return;
    lastHeard = Date.now();
    if (typeof event.data === 'string') {
      // The room sends the rest of the replay, and keeps this socket, only as it hears acks.
      const ack = acks.frame(event.data);
      if (ack !== undefined && ws.readyState === WebSocket.OPEN) ws.send(ack);
    }
    const frame = typeof event.data === 'string' ? decodeFrame(event.data) : undefined;
    if (frame?.type === 'messages') {
      for (const m of frame.messages) {
        // Live seqs are contiguous; a jump means frames this socket never got (a room that
        // restarted between storing a message and sending it): read the missing ones.
        if (live && m.seq > messages.lastSeq + 1) void fillGap(room, messages.lastSeq, m.seq);
        show([m]);
      }
    } else if (frame?.type === 'update') {
      messages.update(frame.messages);
    } else if (frame?.type === 'ready') {
      attempts = 0;
      live = true;
      // The compose box takes its room at the page's foot before the replay is placed and a linked
      // message is scrolled to (a viewer link only reads): a reader following the latest messages
      // stays at the bottom, above the box, not with the newest under it.
      if (viewerLink === null && compose?.show() && messages.atBottom) messages.scrollToBottom();
      if (!wasLive) {
        wasLive = true;
        freshAfter = frame.lastSeq;
        // The replay is on the page by the time it says Live (it would be on the next frame).
        messages.flush();
        void showLinked(room);
      }
      hideBanner();
      setState('Live', 'live');
      updateOlder();
    }
  });
  ws.addEventListener('close', (event) => {
    clearInterval(watch);
    if (socket !== ws) return;
    socket = null;
    live = false;
    if (event.code === PROTOCOL.close.roomDeleted) {
      setState('This room was deleted', 'offline');
      return showBanner('This room was deleted.', false);
    }
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

/** A server frame; messages from a server that does not send `sender` and `level` yet get the defaults. */
function decodeFrame(data: string): ServerFrame | undefined {
  const frame = decodeServerFrame(data);
  if (frame !== undefined || data === PROTOCOL.pong) return frame;
  try {
    const parsed = JSON.parse(data) as { type?: unknown; messages?: unknown };
    if (parsed.type !== PROTOCOL.frames.messages || !Array.isArray(parsed.messages)) return undefined;
    const messages = parsed.messages.map(withIdentity);
    return messages.length > 0 && messages.every(isChatMessage) ? { type: 'messages', messages } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the messages with after < seq < before from the history (which has every stored one). If
 * the history cannot answer now (e.g. 503 while the room cannot flush), it tries again a few times,
 * later: a reconnect would not bring them (it asks for what follows the last seq shown).
 */
async function fillGap(room: string, after: number, before: number, tries = 0, limit: number = HISTORY_PAGE): Promise<boolean> {
  while (after + 1 < before) {
    const answer = await readHistory(room, token() ?? '', after, before, limit);
    if (!answer.ok) {
      // Only a network error or a 5xx can pass; a 4xx (token, room gone) would answer the same again.
      const transient = answer.status === undefined || answer.status >= 500;
      if (transient && tries < GAP_RETRIES) {
        setTimeout(() => void fillGap(room, after, before, tries + 1, limit), GAP_RETRY_MS * (tries + 1));
      }
      return false;
    }
    const last = answer.messages.at(-1);
    if (!last) return true;
    show(answer.messages);
    after = last.seq;
  }
  return true;
}

function reconnectLater(room: string, why = 'Offline: messages are not arriving.'): void {
  clearTimeout(reconnectTimer);
  const delay = Math.min(RECONNECT_MAX_MS, 1000 * 2 ** attempts) + Math.floor(Math.random() * 500);
  attempts++;
  setState(`Offline, reconnecting in ${Math.round(delay / 1000)} s`, 'offline');
  reconnectAt = Date.now() + delay;
  reconnectTimer = setTimeout(() => void connect(room), delay);
  showBanner(why, true);
}

/** The page of messages before the first shown, kept in the reader's place. */
async function loadOlder(room: string): Promise<void> {
  const first = messages.firstSeq;
  if (loadingOlder || wall || first <= 1) return;
  loadingOlder = true;
  try {
    const answer = await readHistory(room, token() ?? '', Math.max(0, first - 1 - HISTORY_PAGE), first);
    if (answer.ok) show(answer.messages);
    messages.flush();
  } finally {
    loadingOlder = false;
  }
  // Observing again makes the observer say whether the top is still near (a short page): if so, on.
  topWatch.unobserve(older);
  topWatch.observe(older);
}

const topWatch = new IntersectionObserver(
  (entries) => {
    if (roomId !== undefined && entries.some((e) => e.isIntersecting)) void loadOlder(roomId);
  },
  { rootMargin: `${LOAD_AHEAD_PX}px 0px 0px 0px` },
);

let linked: HTMLElement | null = null;

/** `#<seq>`: reads the history back to that message if need be, scrolls to it and highlights it. */
async function showLinked(room: string, block: ScrollLogicalPosition = 'center'): Promise<void> {
  const seq = Number(location.hash.slice(1));
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > messages.lastSeq) return;
  if (seq < messages.firstSeq && !wall) {
    // Contiguous from the linked message up to the first shown, so scrolling up stays gapless.
    if (!(await fillGap(room, seq - 1, messages.firstSeq, GAP_RETRIES, HISTORY_MAX))) return;
  }
  messages.flush();
  const view = messages.view(seq);
  if (view === undefined) return;
  linked?.classList.remove('linked');
  linked = view.item;
  linked.classList.add('linked');
  linked.scrollIntoView({ block });
  // At the top: below the sticky header, not under it.
  if (block === 'start') window.scrollBy(0, -stickyTop.getBoundingClientRect().bottom);
}

/** A search result or a date: the message in the timeline, through the same path as a `#<seq>` link. */
function reveal(room: string, seq: number, block: ScrollLogicalPosition): void {
  if (location.hash !== `#${seq}`) history.pushState(history.state, '', `#${seq}`);
  void showLinked(room, block);
}

/** Back to the latest messages, following them: no highlighted message, no `#<seq>` in the address. */
function toLive(): void {
  linked?.classList.remove('linked');
  linked = null;
  if (location.hash !== '') history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  messages.scrollToBottom();
  attention.atBottom();
}

function setWall(on: boolean, remember: boolean): void {
  wall = on;
  applyWall(on, wallToggle, remember);
  messages.keep = on ? WALL_KEEP : null;
  // A wall screen is watched, not searched: the history tools are hidden there (room.css).
  if (on && historyTools?.open) historyTools.leave();
  if (on) messages.scrollToBottom();
  updateOlder();
}

setWall(wall, false);
setInterval(tick, WATCH_EVERY_MS);
setInterval(() => messages.refreshTimes(new Date()), TIMES_EVERY_MS);
marker.addEventListener('click', () => {
  messages.scrollToBottom();
  attention.atBottom();
});
wallToggle.addEventListener('click', () => setWall(!wall, true));
// Narrow windows only (room.css): shows or hides the history tools, the search field ready to type in.
toolsToggle.addEventListener('click', () => {
  const open = document.documentElement.classList.toggle('tools-open');
  toolsToggle.setAttribute('aria-expanded', String(open));
  if (open) searchField.focus();
});

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

  compose = setUpCompose(
    composeForm,
    element('compose-text', HTMLTextAreaElement),
    element('compose-send', HTMLButtonElement),
    element('compose-status', HTMLElement),
    roomId,
    token,
  );
  // For keyboards and where scrolling does not reach the top; scrolling up loads by itself.
  older.addEventListener('click', () => void loadOlder(roomId));
  historyTools = new HistoryTools(
    roomId,
    {
      searchForm: element('search', HTMLFormElement),
      q: searchField,
      metadata: element('search-metadata', HTMLInputElement),
      metadataSeen: element('metadata-seen', HTMLDataListElement),
      jumpForm: element('jump', HTMLFormElement),
      jumpAt: element('jump-at', HTMLInputElement),
      jumpStatus: element('jump-status', HTMLElement),
      panel: element('results', HTMLElement),
      status: element('results-status', HTMLElement),
      list: element('results-list', HTMLOListElement),
      more: element('results-more', HTMLButtonElement),
      close: element('results-close', HTMLButtonElement),
    },
    { token: () => token() ?? '', reveal: (seq, block) => reveal(roomId, seq, block), toLive },
  );
  // Esc: out of a search or a linked message, back to live.
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || event.defaultPrevented || wall) return;
    if (historyTools?.open) historyTools.leave();
    else if (linked !== null) toLive();
  });
  topWatch.observe(older);
  reconnectButton.addEventListener('click', () => {
    if (socket === null) void connect(roomId);
  });
  window.addEventListener('hashchange', () => void showLinked(roomId));
  window.addEventListener('online', () => {
    if (!socket) void connect(roomId);
  });
  void connect(roomId);
}
