/**
 * What a page did, seen from outside the page's own code: trap hits, dialogs, requests, CSP
 * violations, WebSockets, the connection indicator's states and the offline banner. The in-page part
 * is plain browser JavaScript, installed before any of the page's scripts run (and in every frame).
 *
 * Also a scripted room (`scriptRoom`): the room page's WebSocket and history answered by the test
 * from a list of messages it controls (any seq, time, sender and level), for what a real room
 * cannot show on demand (yesterday's messages, thousands of them, a frame at a chosen moment).
 */
import type { Page, WebSocketRoute } from 'playwright-core';
import type { ChatMessage } from '../../../src/chat/protocol';

/**
 * `__xss` is a trap: reading it gives a recording function, assigning it records the value; it
 * cannot be redefined. Frames report to the top window when they can reach it.
 */
const INIT_SCRIPT = `(() => {
  const top = (() => { try { return window.top && window.top.__probe ? window.top : window; } catch { return window; } })();
  const probe = top === window ? { hits: [], csp: [], states: [], banners: [], loadId: Math.random().toString(36).slice(2) } : top.__probe;
  if (top === window) Object.defineProperty(window, '__probe', { value: probe, configurable: false });
  const hit = (how, value) => probe.hits.push({ how, value: String(value), frame: String(location.href).slice(0, 200) });
  Object.defineProperty(window, '__xss', {
    configurable: false,
    get() { return (value) => hit('call', value); },
    set(value) { hit('set', value); },
  });
  document.addEventListener('securitypolicyviolation', (e) => {
    probe.csp.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample, source: e.sourceFile + ':' + e.lineNumber });
  }, true);
  if (top !== window) return;
  const watchState = () => {
    const el = document.getElementById('state');
    if (!el) return;
    const note = () => {
      const last = probe.states[probe.states.length - 1];
      if (!last || last.kind !== el.className || last.text !== el.textContent) {
        probe.states.push({ kind: el.className, text: el.textContent, at: Date.now() });
      }
    };
    note();
    new MutationObserver(note).observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
  };
  const watchBanner = () => {
    const el = document.getElementById('offline');
    if (!el) return;
    const note = () => {
      const shown = !el.hidden;
      const text = shown ? (el.textContent || '').replace(/\\s+/g, ' ').trim() : '';
      const last = probe.banners[probe.banners.length - 1];
      if (!last || last.shown !== shown || (shown && last.reason !== (document.getElementById('offline-reason') || {}).textContent)) {
        probe.banners.push({ shown, text, reason: (document.getElementById('offline-reason') || {}).textContent || '', at: Date.now() });
      }
    };
    note();
    new MutationObserver(note).observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
  };
  const watch = () => { watchState(); watchBanner(); };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watch);
  else watch();
})();`;

export interface StateChange {
  kind: string;
  text: string;
  at: number;
}

export interface BannerChange {
  shown: boolean;
  /** All the banner's text when shown, e.g. "Offline: … Reconnecting in 3 s Last message … Reconnect now". */
  text: string;
  reason: string;
  at: number;
}

export interface PageReport {
  hits: { how: string; value: string; frame: string }[];
  csp: { directive: string; blocked: string; sample: string; source: string }[];
  states: StateChange[];
  /** The offline banner: each time it appeared, changed its reason, or went away. */
  banners: BannerChange[];
  loadId: string;
}

export interface Probe {
  dialogs: string[];
  /** Every request the page made to anything but the server (and the allowed URLs), with its kind. */
  foreign: string[];
  /** Requests to allowed foreign URLs (answered with an abort: nothing leaves the machine). */
  allowedForeign: string[];
  webSockets: string[];
  pageErrors: string[];
  report(): Promise<PageReport>;
}

/**
 * Installs the probe on a page before it navigates. Requests are answered by the route: the
 * server's origin goes through, everything else is aborted and recorded as foreign unless listed
 * in `allowed` (exact URLs, e.g. a legitimate https image that cannot load offline).
 */
export async function attachProbe(page: Page, origin: string, allowed: readonly string[] = []): Promise<Probe> {
  const probe: Probe = {
    dialogs: [],
    foreign: [],
    allowedForeign: [],
    webSockets: [],
    pageErrors: [],
    async report() {
      return (await page.evaluate('window.__probe')) as PageReport;
    },
  };
  await page.addInitScript({ content: INIT_SCRIPT });
  page.on('dialog', (dialog) => {
    probe.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('pageerror', (err) => probe.pageErrors.push(err.message));
  page.on('websocket', (ws) => {
    probe.webSockets.push(ws.url());
    if (!ws.url().startsWith(`${origin.replace(/^http/, 'ws')}/`)) probe.foreign.push(`websocket ${ws.url()}`);
  });
  // Whatever the route does not see (data:, blob:, about:) still shows up here.
  page.on('request', (req) => {
    const url = req.url();
    if (url.startsWith(`${origin}/`) || allowed.includes(url) || url === 'about:blank') return;
    if (!/^https?:/.test(url)) probe.foreign.push(`${req.resourceType()} ${url.slice(0, 200)}`);
  });
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    if (allowed.includes(url)) probe.allowedForeign.push(url);
    else probe.foreign.push(`${route.request().resourceType()} ${url.slice(0, 200)}`);
    return route.abort('blockedbyclient');
  });
  return probe;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` says yes; fails with the last value after `timeoutMs`. */
export async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

/** A message as the room would store it; `at` defaults to now, sender to a webhook, level to info. */
export function makeMessage(
  roomId: string,
  seq: number,
  fields: Partial<Pick<ChatMessage, 'markdown' | 'html' | 'metadata' | 'sender' | 'level' | 'createdAt'>> = {},
): ChatMessage {
  const markdown = fields.markdown ?? `message ${seq}`;
  return {
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    roomId,
    seq,
    webhookId: '11111111-2222-4333-8444-555555555555',
    markdown,
    html: fields.html ?? `<p>${markdown}</p>\n`,
    metadata: fields.metadata ?? null,
    sender: fields.sender ?? { name: 'CI', iconUrl: '/assets/chat/icons/generic.svg' },
    level: fields.level ?? 'info',
    createdAt: fields.createdAt ?? new Date().toISOString(),
  };
}

export interface ScriptedRoom {
  /** Every message of the room, in seq order (what the history answers from). */
  readonly stored: ChatMessage[];
  /** The WebSocket URLs the page opened, in order. */
  readonly sockets: string[];
  /** The history reads the page made (their query strings). */
  readonly reads: string[];
  /** Frames the page sent (acks, pings). */
  readonly fromPage: string[];
  /** Stores messages and sends them live to the page's current socket. */
  post(messages: ChatMessage[]): void;
  /** Closes the page's current socket from the server's side. */
  close(code?: number): Promise<void>;
}

/**
 * Answers the page's room WebSocket and history reads from `stored`, as the room would: `tail=n`
 * replays the last n, `after=s` everything after s, then `ready`; a ping gets a pong. The ticket
 * request still goes to the real server (the room must exist there).
 */
export async function scriptRoom(page: Page, stored: ChatMessage[]): Promise<ScriptedRoom> {
  let current: WebSocketRoute | undefined;
  const room: ScriptedRoom = {
    stored,
    sockets: [],
    reads: [],
    fromPage: [],
    post(messages) {
      stored.push(...messages);
      current?.send(JSON.stringify({ type: 'messages', messages }));
    },
    async close(code = 1011) {
      await current?.close({ code, reason: 'scripted' });
      current = undefined;
    },
  };
  await page.routeWebSocket(/\/api\/v1\/rooms\/[^/]+\/ws\?/, (ws) => {
    current = ws;
    room.sockets.push(ws.url());
    ws.onMessage((message) => {
      room.fromPage.push(String(message));
      if (String(message) === '{"type":"ping"}') ws.send('{"type":"pong"}');
    });
    const query = new URL(ws.url()).searchParams;
    const after = query.get('after');
    const tail = query.get('tail');
    const replay = after !== null ? stored.filter((m) => m.seq > Number(after)) : stored.slice(-Number(tail ?? 0));
    for (let i = 0; i < replay.length; i += 200) ws.send(JSON.stringify({ type: 'messages', messages: replay.slice(i, i + 200) }));
    ws.send(JSON.stringify({ type: 'ready', lastSeq: stored.at(-1)?.seq ?? 0 }));
  });
  await page.route('**/api/v1/rooms/*/messages?*', async (route) => {
    const query = new URL(route.request().url()).searchParams;
    room.reads.push(query.toString());
    const after = Number(query.get('after') ?? 0);
    const before = query.has('before') ? Number(query.get('before')) : Number.POSITIVE_INFINITY;
    const limit = Number(query.get('limit') ?? 100);
    const entities = stored.filter((m) => m.seq > after && m.seq < before).slice(0, limit);
    await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ entities }) });
  });
  return room;
}
