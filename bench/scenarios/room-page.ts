/**
 * Scenario 5 (issue 25 item 11): the room page in headless Chromium (playwright-core, the e2e
 * suite's launcher) against the real Worker under `wrangler dev`, measured with the browser's own
 * performance timeline, never asserted in a test.
 *
 * - A room of 10,000 webhook posts (realistic markdown of mixed sizes, 8 in flight; `--quick` 2,000)
 *   and a room of 100 as the floor.
 * - Opening the page (fresh context each time, opens alternating between the two rooms): first
 *   paint and first contentful paint (PerformanceObserver 'paint'), when the latest message is in
 *   the page (a MutationObserver installed before the page's script), long tasks during the load.
 * - Live 200 messages/s with the page as just opened (the latest 100 in the DOM: the floor), then
 *   with every message of the room in the DOM (a deep link to an early message reads them all back):
 *   long tasks (PerformanceObserver 'longtask'), and post start → the message in the page, p50/p99.
 * - Scroll-up loads of 100 older messages with ~10,000 in the DOM: the page's own `room:render`
 *   measure of each (message-list.ts), which includes the layout the reader's anchor forces.
 * - The two live phases again from a light source (measureLiveLight): the page's socket answered
 *   inside Playwright with messages the server stored before the phase, the server idle. Under `wrangler dev` the
 *   Worker, its room and wrangler's proxy share the two cores with Chromium, so the server-fed
 *   phases measure the machine as much as the page; both are kept, and each phase also says how
 *   much of its long-task time lies inside the page's own flushes (room:render).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { type ChatMessage, PROTOCOL } from '../../src/chat/protocol';
import { launchChromium } from '../../test/e2e/support/browser';
import { api, isUp, postText } from '../lib/http';
import { progress, type Results } from '../lib/results';
import { percentile, sleep } from '../lib/stats';
import { storeDir } from '../lib/store';
import { errorLines, migrate, startDev, type DevServer } from '../lib/wrangler';

export interface RoomPageOptions {
  results: Results;
  token: string;
  workerConfig: string[];
  quick: boolean;
  /** Messages in the measured room (default 10,000; quick 2,000). */
  messages: number;
  /**
   * A directory with another build of the page's `room.js` and `room.css` (or another checkout's
   * `buildPage(dir)` output), served instead of the snapshot's: the same Worker with another client,
   * for before/after comparisons of a page change.
   */
  assets?: string;
  detail: Record<string, unknown>;
}

const SCENARIO = '5 room page';
const PORT = 8836;
const INSPECTOR = 8837;
const FLOOR_MESSAGES = 100;
const POST_IN_FLIGHT = 8;
const LIVE_RATE = 200;
const LONG_TASK_MS = 50;
const FIRST_PAINT_TARGET_MS = 300;
const OLDER_TARGET_MS = 50;
const TOKEN_KEY = 'switchboard.token';
const RENDER_MEASURE = 'room:render';
const VIEWPORT = { width: 1100, height: 900 };

/** Epoch milliseconds with sub-millisecond precision (comparable with the page's timeOrigin + now()). */
const epochNow = () => performance.timeOrigin + performance.now();

/**
 * Installed before any of the page's scripts: long tasks and paints (buffered), and the time each
 * message element enters the list, as epoch ms.
 */
const INIT_SCRIPT = `(() => {
  const perf = { longTasks: [], paints: {}, added: [] };
  Object.defineProperty(window, '__perf', { value: perf });
  const epoch = (t) => performance.timeOrigin + t;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) perf.longTasks.push([epoch(e.startTime), e.duration]);
  }).observe({ type: 'longtask', buffered: true });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) perf.paints[e.name] = e.startTime;
  }).observe({ type: 'paint', buffered: true });
  const note = (records) => {
    const at = epoch(performance.now());
    for (const r of records) for (const node of r.addedNodes) {
      if (node.nodeType !== 1) continue;
      if (node.matches('li.message')) perf.added.push([Number(node.dataset.seq), at]);
      else for (const li of node.querySelectorAll('li.message')) perf.added.push([Number(li.dataset.seq), at]);
    }
  };
  const watch = () => {
    const list = document.getElementById('messages');
    if (list) new MutationObserver(note).observe(list, { childList: true, subtree: true });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watch);
  else watch();
})();`;

interface PagePerf {
  longTasks: [number, number][];
  paints: Record<string, number>;
  added: [number, number][];
}

interface Hook {
  url: string;
}

/** Realistic webhook markdown of mixed sizes: one-liners most, some lists, code, tables and long text. */
export function pageMessage(n: number): string {
  switch (n % 10) {
    case 0:
      return `**Build #${n} passed** on \`main\` — [details](https://ci.example/builds/${n})`;
    case 1:
      return `Deploy of \`api@1.${n % 97}.${n % 13}\` to **production** finished in ${(n % 300) + 40} s :tada:`;
    case 2:
      return [
        `### Release notes for v2.${n % 50}`,
        '',
        `- Fixed the retry of webhook posts (#${n})`,
        '- Faster history reads on large rooms',
        `- [Changelog](https://example.com/changelog/${n})`,
      ].join('\n');
    case 3:
      return [
        `Build #${n} **failed** in \`test:e2e\`:`,
        '',
        '```ts',
        `expect(received).toBe(expected) // run ${n}`,
        '  at Object.<anonymous> (test/e2e/room-page.test.ts:212:31)',
        '  at processTicksAndRejections (node:internal/process/task_queues:95:5)',
        '```',
      ].join('\n');
    case 4:
      return `@here queue **Billing** is above its service level target (${60 + (n % 30)} % answered in 20 s)`;
    case 5:
      return [
        `| env | version | status |`,
        '|-----|---------|--------|',
        `| prod | 1.${n % 40} | green |`,
        `| staging | 1.${(n % 40) + 1} | yellow |`,
      ].join('\n');
    case 6:
      return `> ${'Customer reports that the export page times out after about thirty seconds when the range spans more than a quarter; the logs show the query planner choosing a full scan. '.repeat(3)}\n\nOPS-${n}`;
    case 7:
      return `PR #${n} merged by *alice*: _Room page keeps the reader's place on older loads_`;
    case 8:
      return [`1. Pull request #${n} opened`, '2. Checks queued', '3. Review requested from @bob', '', `- [x] lint`, `- [ ] e2e`].join(
        '\n',
      );
    default:
      return `Alert resolved: \`db-${n % 5}\` disk usage back under 80 %`;
  }
}

async function post(url: string, n: number): Promise<{ t0: number; seq: number }> {
  const t0 = epochNow();
  const body = JSON.stringify({ message: pageMessage(n), metadata: n % 3 === 0 ? 'ci' : n % 3 === 1 ? 'deploys' : 'alerts' });
  const r = await postText(url, body);
  if (r.status !== 200) throw new Error(`webhook post answered ${r.status}: ${r.text.slice(0, 300)}`);
  const seq = (JSON.parse(r.text) as { deliveries: { seq: number }[] }).deliveries[0]!.seq;
  return { t0, seq };
}

async function fill(hook: Hook, count: number, label: string, from = 0): Promise<void> {
  let next = 0;
  let lastReport = Date.now();
  await Promise.all(
    Array.from({ length: POST_IN_FLIGHT }, async () => {
      while (next < count) {
        const n = next++;
        await post(hook.url, from + n);
        if (Date.now() - lastReport > 5_000) {
          lastReport = Date.now();
          progress(`${SCENARIO}: ${label}: ${next.toLocaleString('en-US')} of ${count.toLocaleString('en-US')} posted`);
        }
      }
    }),
  );
}

/** Open loop: one post every 1000/rate ms whatever the answers take; each post's start and seq. */
async function live(hook: Hook, seconds: number, from: number): Promise<{ t0: number; seq: number }[]> {
  const interval = 1000 / LIVE_RATE;
  const total = Math.round(LIVE_RATE * seconds);
  const start = epochNow() + 20;
  const pending: Promise<{ t0: number; seq: number }>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + i * interval - epochNow();
    if (wait > 1) await sleep(wait);
    const posted = post(hook.url, from + i);
    // Handled now, awaited below: a post that fails before the loop ends (the dev server dropped the
    // connection) must fail the scenario, not the bench process as an unhandled rejection (11-27 15:02).
    posted.catch(() => {});
    pending.push(posted);
  }
  return Promise.all(pending);
}

async function makeRoom(base: string, token: string, name: string): Promise<{ roomId: string; hook: Hook }> {
  const room = await api<{ id: string }>(base, token, 'POST', '/api/v1/rooms', { name, topic: 'deploys, builds and alerts' });
  const hook = await api<{ url: string }>(base, token, 'POST', '/api/v1/webhooks', {
    name: `${name} CI`,
    kind: 'generic',
    roomId: room.id,
    rateLimit: { burst: 100_000, perSecond: 100_000 },
  });
  return { roomId: room.id, hook: { url: base + new URL(hook.url).pathname } };
}

const perfOf = (page: Page) => page.evaluate('window.__perf') as Promise<PagePerf>;

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${SCENARIO}: timed out waiting for ${what}`);
    await sleep(100);
  }
}

let assetsDir: string | undefined;

async function openPage(
  browser: Browser,
  base: string,
  roomId: string,
  viewerToken: string,
  prepare?: (context: BrowserContext) => Promise<void>,
) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  await prepare?.(context);
  const dir = assetsDir;
  if (dir !== undefined) {
    await context.route(/\/assets\/chat\/room\.(js|css)$/, (route) => {
      const file = path.basename(new URL(route.request().url()).pathname);
      return route.fulfill({
        body: readFileSync(path.join(dir, file)),
        contentType: file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      });
    });
  }
  await context.addInitScript({ content: `sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(viewerToken)});` });
  await context.addInitScript({ content: INIT_SCRIPT });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${base}/rooms/${roomId}`, { waitUntil: 'commit', timeout: 60_000 });
  // Waited for from the navigation's commit on: #state may not be parsed yet.
  try {
    await waitUntil('the page to go live', async () => (await page.evaluate(`document.getElementById('state')?.className`)) === 'live');
  } catch (err) {
    // What the page says, for the report: its state line and errors.
    const state = await page.evaluate(`document.getElementById('state')?.outerHTML ?? 'no #state'`).catch(() => 'unreadable');
    throw new Error(
      `${(err as Error).message}; the page shows ${String(state).slice(0, 300)}; page errors: ${errors.join('; ') || 'none'}`,
    );
  }
  return { context, page, errors };
}

interface OpenFigures {
  firstPaint: number;
  firstContentfulPaint: number;
  /** From navigation start until the room's latest message is in the page. */
  latestShown: number;
  longTasks: number;
  longestTask: number;
}

async function measureOpen(browser: Browser, base: string, roomId: string, viewerToken: string, lastSeq: number): Promise<OpenFigures> {
  const { context, page, errors } = await openPage(browser, base, roomId, viewerToken);
  try {
    await waitUntil('the latest message', async () => (await perfOf(page)).added.some(([seq]) => seq === lastSeq), 30_000);
    await sleep(1_000); // long tasks after the insert (layout, paint) are reported late
    const perf = await perfOf(page);
    const origin = (await page.evaluate('performance.timeOrigin')) as number;
    const shownAt = perf.added.find(([seq]) => seq === lastSeq)![1] - origin;
    const tasks = perf.longTasks.filter(([at]) => at - origin <= shownAt + 1_000).map(([, d]) => d);
    if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`);
    return {
      firstPaint: perf.paints['first-paint'] ?? NaN,
      firstContentfulPaint: perf.paints['first-contentful-paint'] ?? NaN,
      latestShown: shownAt,
      longTasks: tasks.length,
      longestTask: Math.max(0, ...tasks),
    };
  } finally {
    await context.close();
  }
}

/** A live source: sends messages at LIVE_RATE for `seconds`; each one's send start (epoch ms) and seq. */
type LiveSource = (seconds: number) => Promise<{ t0: number; seq: number }[]>;

/** CDP's Runtime.getHeapUsage: V8's heap, and Blink's (the DOM, styles, layout; `embedderHeapUsedSize`). */
interface HeapUsage {
  usedSize: number;
  totalSize: number;
  embedderHeapUsedSize: number;
}

interface LiveFigures {
  /** Requests for the senders' icons during the phase (the page's messages all share one). */
  iconLoads: number;
  /** Messages in the DOM when the phase ends (`domSize`: when it starts); the page keeps FOLLOW_KEEP while following. */
  domAtEnd: number;
  /** The page's heaps after the phase and a full collection (the light source's large phase). */
  heap?: HeapUsage;
  /**
   * Attribution on the page's own timeline: the long tasks' total time, and how much of it lies
   * inside the page's flushes (room:render measures overlapping each long task).
   */
  longTaskMs: number;
  inFlushesMs: number;
  /** The same inside the refreshes of relative times (room:times; pages from 2026-11-26 21:45 on). */
  inTimesMs: number;
  /** Each long task: page time (ms since the page's time origin) and duration. */
  longTaskAt: [number, number][];
  /** The page's own flushes during the phase (room:render): count, p50, p99, max in ms. */
  renders: { count: number; p50: number; p99: number; max: number };
  /** Each flush: when (page time), how long, how many messages it added below. */
  flushes: { at: number; ms: number; newer: number }[];
  /** The page's drops of the oldest groups while following (room:drop): tasks, messages, the longest, ms. */
  drops: { count: number; dropped: number; max: number };
  posted: number;
  shown: number;
  domSize: number;
  longTasks: number[];
  p50: number;
  p99: number;
  max: number;
}

/** Live at 200/s from `source` for `seconds` while `page` is open at the bottom of the room. */
async function measureLive(page: Page, source: LiveSource, seconds: number): Promise<LiveFigures> {
  const before = (await perfOf(page)).added.length;
  const rendersBefore = (await page.evaluate(`performance.getEntriesByName(${JSON.stringify(RENDER_MEASURE)}).length`)) as number;
  const domSize = (await page.evaluate(`document.querySelectorAll('#messages li.message').length`)) as number;
  let iconLoads = 0;
  const countIcons = (r: { url(): string }) => {
    if (r.url().includes('/assets/chat/icons/')) iconLoads++;
  };
  page.on('request', countIcons);
  const started = epochNow();
  const posts = await source(seconds);
  const last = Math.max(...posts.map((p) => p.seq));
  await waitUntil('the live messages', async () => (await perfOf(page)).added.some(([seq]) => seq === last), 30_000);
  await sleep(1_000);
  const ended = epochNow();
  page.off('request', countIcons);
  const domAtEnd = (await page.evaluate(`document.querySelectorAll('#messages li.message').length`)) as number;
  const perf = await perfOf(page);
  const shownAt = new Map(perf.added.slice(before).map(([seq, at]) => [seq, at]));
  const delays = posts.flatMap((p) => {
    const at = shownAt.get(p.seq);
    return at === undefined ? [] : [at - p.t0];
  });
  const phaseTasks = perf.longTasks.filter(([at]) => at >= started && at <= ended);
  const longTasks = phaseTasks.map(([, d]) => d);
  const entries = (
    (await page.evaluate(
      `performance.getEntriesByName(${JSON.stringify(RENDER_MEASURE)}).map((e) => [e.startTime, e.duration, e.detail.newer])`,
    )) as [number, number, number][]
  ).slice(rendersBefore);
  const flushes = entries.map(([, ms]) => ms);
  const timeOrigin = (await page.evaluate('performance.timeOrigin')) as number;
  // The page's drops of old groups while following (message-list.ts DROP_MEASURE), in this phase.
  const drops = (
    (await page.evaluate(`performance.getEntriesByName('room:drop').map((e) => [e.startTime, e.duration, e.detail.dropped])`)) as [
      number,
      number,
      number,
    ][]
  ).filter(([at]) => at + timeOrigin >= started);
  const origin = (await page.evaluate('performance.timeOrigin')) as number;
  const times = (await page.evaluate(`performance.getEntriesByName('room:times').map((e) => [e.startTime, e.duration])`)) as [
    number,
    number,
  ][];
  const overlap = (start: number, ms: number, measures: readonly (readonly [number, number, ...number[]])[]) =>
    measures.reduce((sum, [at, d]) => sum + Math.max(0, Math.min(start + ms, at + d) - Math.max(start, at)), 0);
  let inFlushesMs = 0;
  let inTimesMs = 0;
  for (const [at, ms] of phaseTasks) {
    inFlushesMs += overlap(at - origin, ms, entries);
    inTimesMs += overlap(at - origin, ms, times);
  }
  return {
    iconLoads,
    domAtEnd,
    longTaskMs: longTasks.reduce((a, b) => a + b, 0),
    inFlushesMs,
    inTimesMs,
    longTaskAt: phaseTasks.map(([at, ms]) => [Math.round(at - origin), Math.round(ms)]),
    renders: { count: flushes.length, p50: percentile(flushes, 50), p99: percentile(flushes, 99), max: Math.max(0, ...flushes) },
    flushes: entries.map(([at, ms, newer]) => ({ at: Math.round(at), ms: Math.round(ms * 10) / 10, newer })),
    drops: { count: drops.length, dropped: drops.reduce((n, [, , d]) => n + d, 0), max: Math.max(0, ...drops.map(([, ms]) => ms)) },
    posted: posts.length,
    shown: delays.length,
    domSize,
    longTasks,
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    max: Math.max(...delays),
  };
}

const median = (values: number[]) => percentile(values, 50);

/** Every message of a room after seq `from` as the history answers it (the server's HTML), oldest first. */
async function storedMessages(base: string, token: string, roomId: string, from = 0): Promise<ChatMessage[]> {
  const all: ChatMessage[] = [];
  let after = from;
  for (;;) {
    const page = await api<{ entities: ChatMessage[]; nextAfter?: number }>(
      base,
      token,
      'GET',
      `/api/v1/rooms/${roomId}/messages?after=${after}&limit=500`,
    );
    all.push(...page.entities);
    if (page.nextAfter === undefined) return all;
    after = page.nextAfter;
  }
}

/** What a trace of the light source's large phase records: tasks, style and layout, paint, script and both heaps' collections. */
const TRACE_CATEGORIES = ['devtools.timeline', 'blink.user_timing', 'v8', 'blink_gc', 'toplevel'];

/**
 * The live phases again with the server out of the page's way: the page's room socket is answered
 * inside Playwright, and messages the server stored beforehand (their real HTML, their seqs) are
 * sent on it at LIVE_RATE from this process, while the Worker, its room and wrangler's proxy sit
 * idle; so the two cores are left to Chromium and this driver, and what the page's main thread
 * still spends is the page's own work. The frames are the ones the room sends (one message per
 * frame, as at 200 posts/s), the page is the same build and does the same acks, and the DOM holds
 * the same messages.
 *
 * History reads go to the server, which holds every message the socket has sent: each phase's
 * messages are posted before the phase (the page's socket does not see them) and sent during it.
 * Nothing else is routed because Playwright turns the browser's cache off for a context with any
 * `route`: then every avatar `<img>` of a new message loaded its icon again as a resource of its
 * own, each SVG an image document of its own (893 of them in the run of 11-27 14:17), which no real
 * page does (`--page-assets` routes room.js and room.css, so it has that cost too).
 */
async function measureLiveLight(
  browser: Browser,
  base: string,
  token: string,
  room: { roomId: string; hook: Hook },
  viewerToken: string,
  seconds: number,
): Promise<{ floor: LiveFigures; big: LiveFigures }> {
  // What the socket has sent, and what it sends next (stored, not yet sent).
  const sent = await storedMessages(base, token, room.roomId);
  let queue: ChatMessage[] = [];
  const total = Math.round(LIVE_RATE * seconds);
  /** Posts the next phase's messages to the server (no page watches them arrive) and queues them. */
  const stock = async () => {
    const after = sent.at(-1)?.seq ?? 0;
    await fill(room.hook, total, 'light source stock', after);
    queue = (await storedMessages(base, token, room.roomId, after)).slice(0, total);
    if (queue.length !== total) throw new Error(`${SCENARIO}: light source stocked ${queue.length} of ${total}`);
    await sleep(1_000);
  };
  let socket: WebSocketRoute | undefined;
  const prepare = async (context: BrowserContext) => {
    await context.routeWebSocket(/\/api\/v1\/rooms\/[^/]+\/ws\?/, (ws) => {
      socket = ws;
      ws.onMessage((frame) => {
        if (String(frame) === PROTOCOL.ping) ws.send(PROTOCOL.pong);
      });
      const query = new URL(ws.url()).searchParams;
      const after = query.get(PROTOCOL.query.after);
      const tail = Number(query.get(PROTOCOL.query.tail) ?? 0);
      const replay = after !== null ? sent.filter((m) => m.seq > Number(after)) : sent.slice(-tail);
      for (let i = 0; i < replay.length; i += 200) ws.send(JSON.stringify({ type: 'messages', messages: replay.slice(i, i + 200) }));
      ws.send(JSON.stringify({ type: 'ready', lastSeq: sent.at(-1)?.seq ?? 0 }));
    });
  };
  const source: LiveSource = async (phaseSeconds) => {
    const interval = 1000 / LIVE_RATE;
    const count = Math.min(queue.length, Math.round(LIVE_RATE * phaseSeconds));
    const start = epochNow() + 20;
    const out: { t0: number; seq: number }[] = [];
    for (let i = 0; i < count; i++) {
      const wait = start + i * interval - epochNow();
      if (wait > 1) await sleep(wait);
      const m = queue[i]!;
      sent.push(m);
      const t0 = epochNow();
      socket?.send(JSON.stringify({ type: 'messages', messages: [m] }));
      out.push({ t0, seq: m.seq });
    }
    queue = queue.slice(count);
    return out;
  };
  await stock();
  const { context, page, errors } = await openPage(browser, base, room.roomId, viewerToken, prepare);
  try {
    const last = sent.at(-1)!.seq;
    await waitUntil('the latest message', async () => (await perfOf(page)).added.some(([seq]) => seq === last));
    await sleep(1_000);
    const floor = await measureLive(page, source, seconds);
    progress(`${SCENARIO}: light source, live with ${floor.domSize} in the DOM: ${summary(floor)}`);
    // Every message into the DOM: a deep link to the first reads the history back, 500 at a time.
    await page.evaluate(`location.hash = '#1'`);
    await waitUntil(
      'the deep link to #1',
      async () => (await page.$$eval('#messages li.message.linked', (els) => els.map((el) => el.getAttribute('data-seq')))).join() === '1',
    );
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    await stock();
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    await sleep(500);
    // ROOM_PAGE_TRACE=file: a Chromium performance trace of this phase (chrome://tracing, Perfetto).
    const trace = process.env.ROOM_PAGE_TRACE;
    if (trace) await browser.startTracing(page, { path: trace, categories: TRACE_CATEGORIES });
    const big = await measureLive(page, source, seconds);
    if (trace) await browser.stopTracing();
    // What the page retains: both heaps after a full collection.
    const cdp = await context.newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    big.heap = (await cdp.send('Runtime.getHeapUsage')) as HeapUsage;
    progress(`${SCENARIO}: light source, live with ${big.domSize} in the DOM: ${summary(big)}`);
    if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`);
    return { floor, big };
  } finally {
    await context.close();
  }
}

/** A live phase in one line: the long tasks, and the slowest flushes with the messages each added. */
function summary(f: LiveFigures): string {
  const slowest = [...f.flushes].sort((a, b) => b.ms - a.ms).slice(0, 5);
  const over = f.longTasks.filter((d) => d > LONG_TASK_MS).length;
  return `${f.shown} of ${f.posted} shown, ${f.domSize} → ${f.domAtEnd} in the DOM, long tasks ${f.longTasks.length}, ${over} over ${LONG_TASK_MS} ms (max ${Math.max(0, ...f.longTasks).toFixed(0)} ms; ${f.longTaskMs.toFixed(0)} ms, ${f.inFlushesMs.toFixed(0)} in flushes, ${f.inTimesMs.toFixed(0)} in time refreshes), ${f.renders.count} flushes (p50 ${f.renders.p50.toFixed(1)} ms), ${f.drops.count} drops of ${f.drops.dropped} (max ${f.drops.max.toFixed(1)} ms), icon requests ${f.iconLoads}, slowest ${slowest.map((x) => `${x.ms} ms/${x.newer}`).join(', ')}`;
}

export async function roomPageScenario(o: RoomPageOptions): Promise<void> {
  const persistTo = storeDir('room-page');
  rmSync(persistTo, { recursive: true, force: true });
  migrate(persistTo);
  let dev: DevServer | undefined;
  let browser: Browser | undefined;
  const detail: Record<string, unknown> = {};
  o.detail.roomPage = detail;
  const liveSeconds = o.quick ? 2 : 10;
  const opens = o.quick ? 2 : 5;
  const olderLoads = o.quick ? 3 : 6;
  // A directory with the two files, or the output of another checkout's buildPage(dir) (scripts/build-page.ts).
  const built = o.assets === undefined ? undefined : path.join(o.assets, 'assets', 'chat');
  assetsDir = built !== undefined && existsSync(path.join(built, 'room.js')) ? built : o.assets;
  detail.assets = o.assets ?? 'the snapshot';
  try {
    dev = await startDev({
      config: o.workerConfig,
      port: PORT,
      inspectorPort: INSPECTOR,
      persistTo,
      vars: { ADMIN_TOKEN: o.token },
      ready: (b) => isUp(b, o.token),
    });
    const base = dev.url;
    const viewerToken = (
      await api<{ token: string }>(base, o.token, 'POST', '/api/v1/tokens', { name: 'bench viewer', permissions: ['chat:read'] })
    ).token;
    const big = await makeRoom(base, o.token, 'Ops room');
    const floor = await makeRoom(base, o.token, 'Small room');
    const t0 = Date.now();
    await fill(big.hook, o.messages, 'the large room');
    progress(`${SCENARIO}: ${o.messages.toLocaleString('en-US')} messages posted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await fill(floor.hook, FLOOR_MESSAGES, 'the small room');
    browser = await launchChromium();
    progress(`${SCENARIO}: Chromium ${browser.version()}`);

    // ---- opening the page: alternating the two rooms --------------------------------------------
    const bigOpens: OpenFigures[] = [];
    const floorOpens: OpenFigures[] = [];
    await measureOpen(browser, base, floor.roomId, viewerToken, FLOOR_MESSAGES); // warm-up (Chromium's first start)
    for (let i = 0; i < opens; i++) {
      bigOpens.push(await measureOpen(browser, base, big.roomId, viewerToken, o.messages));
      floorOpens.push(await measureOpen(browser, base, floor.roomId, viewerToken, FLOOR_MESSAGES));
    }
    detail.opens = { big: bigOpens, floor: floorOpens };
    const pick = (list: OpenFigures[], key: keyof OpenFigures) => median(list.map((f) => f[key]));
    const messages = o.messages.toLocaleString('en-US');
    const fcp = pick(bigOpens, 'firstContentfulPaint');
    o.results.add({
      scenario: SCENARIO,
      metric: `first contentful paint, a room of ${messages} messages (median of ${opens} opens; first paint ${pick(bigOpens, 'firstPaint').toFixed(0)} ms)`,
      value: fcp,
      unit: 'ms',
      peer: `a room of ${FLOOR_MESSAGES}`,
      peerValue: pick(floorOpens, 'firstContentfulPaint'),
      target: `≤ ${FIRST_PAINT_TARGET_MS} ms`,
      met: fcp <= FIRST_PAINT_TARGET_MS,
    });
    o.results.add({
      scenario: SCENARIO,
      metric: 'navigation start → the latest message in the page (median)',
      value: pick(bigOpens, 'latestShown'),
      unit: 'ms',
      peer: `a room of ${FLOOR_MESSAGES}`,
      peerValue: pick(floorOpens, 'latestShown'),
    });
    o.results.add({
      scenario: SCENARIO,
      metric: `long tasks during the load: the longest (median of opens; ${bigOpens.map((f) => f.longTasks).join(' / ')} tasks)`,
      value: pick(bigOpens, 'longestTask'),
      unit: 'ms',
      peer: `a room of ${FLOOR_MESSAGES}`,
      peerValue: pick(floorOpens, 'longestTask'),
    });

    // ---- live with the latest 100 in the DOM (the floor), then with the whole room --------------
    const { context, page, errors } = await openPage(browser, base, big.roomId, viewerToken);
    let posted = o.messages;
    await waitUntil('the latest message', async () => (await perfOf(page)).added.some(([seq]) => seq === posted));
    await sleep(1_000);
    const liveFloor = await measureLive(page, (seconds) => live(big.hook, seconds, posted), liveSeconds);
    posted += liveFloor.posted;
    progress(`${SCENARIO}: live with ${liveFloor.domSize} in the DOM: ${summary(liveFloor)}`);

    // Every message into the DOM: a deep link reads the history back from there, then the reader
    // scrolls to the top, each time loading the 100 before (timed by the page's own measure).
    const linked = 1 + FLOOR_MESSAGES * olderLoads;
    await page.evaluate(`location.hash = '#${linked}'`);
    await waitUntil(
      'the deep link',
      async () =>
        (await page.$$eval('#messages li.message.linked', (els) => els.map((el) => el.getAttribute('data-seq')))).join() === String(linked),
    );
    const firstShown = () => page.evaluate(`Number(document.querySelector('#messages li.message')?.dataset.seq ?? 0)`) as Promise<number>;
    while ((await firstShown()) > 1) {
      const first = await firstShown();
      await page.evaluate('window.scrollTo(0, 0)');
      await waitUntil('older messages', async () => (await firstShown()) < first, 30_000);
      await sleep(300);
    }
    const renders = (await page.evaluate(
      `performance.getEntriesByName(${JSON.stringify(RENDER_MEASURE)}).map((e) => ({ ms: e.duration, ...e.detail }))`,
    )) as { ms: number; older: number; shown: number }[];
    const olderPages = renders.filter((r) => r.older === 100 && r.shown > o.messages / 2);
    detail.olderPages = olderPages;
    const olderMs = olderPages.map((r) => r.ms);
    const shownAtOlder = Math.round(median(olderPages.map((r) => r.shown)));
    o.results.add({
      scenario: SCENARIO,
      metric: `100 older messages rendered with ~${shownAtOlder.toLocaleString('en-US')} in the DOM (room:render, median of ${olderMs.length}; max ${Math.max(...olderMs).toFixed(1)})`,
      value: median(olderMs),
      unit: 'ms',
      target: `≤ ${OLDER_TARGET_MS} ms`,
      met: median(olderMs) <= OLDER_TARGET_MS,
    });

    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    await sleep(1_000);
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    await sleep(500);
    const liveBig = await measureLive(page, (seconds) => live(big.hook, seconds, posted), liveSeconds);
    progress(`${SCENARIO}: live with ${liveBig.domSize} in the DOM: ${summary(liveBig)}`);
    if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`);
    await context.close();
    detail.live = { floor: liveFloor, big: liveBig };

    const over = (f: LiveFigures) => f.longTasks.filter((d) => d > LONG_TASK_MS).length;
    const dom = liveBig.domSize.toLocaleString('en-US');
    o.results.add({
      scenario: SCENARIO,
      metric: `live ${LIVE_RATE} messages/s for ${liveSeconds} s with ${dom} in the DOM at the start (${liveBig.domAtEnd.toLocaleString('en-US')} at the end, ${liveBig.drops.count} drops of old groups up to ${liveBig.drops.max.toFixed(0)} ms): long tasks over ${LONG_TASK_MS} ms (of ${liveBig.longTasks.length} long tasks)`,
      value: over(liveBig),
      unit: 'tasks',
      peer: `the same with the latest ${liveFloor.domSize} in the DOM`,
      peerValue: over(liveFloor),
      target: '0',
      met: over(liveBig) === 0,
    });
    o.results.add({
      scenario: SCENARIO,
      metric: 'the same: the longest task',
      value: Math.max(0, ...liveBig.longTasks),
      unit: 'ms',
      peer: `${liveFloor.domSize} in the DOM`,
      peerValue: Math.max(0, ...liveFloor.longTasks),
      target: `≤ ${LONG_TASK_MS} ms`,
      met: Math.max(0, ...liveBig.longTasks) <= LONG_TASK_MS,
    });
    o.results.add({
      scenario: SCENARIO,
      metric: `the same: the page's own inserts (room:render, ${liveBig.renders.count} flushes), p99 (max ${liveBig.renders.max.toFixed(1)})`,
      value: liveBig.renders.p99,
      unit: 'ms',
      peer: `${liveFloor.domSize} in the DOM`,
      peerValue: liveFloor.renders.p99,
    });
    for (const p of ['p50', 'p99'] as const) {
      o.results.add({
        scenario: SCENARIO,
        metric: `the same: post start → the message in the page, ${p}`,
        value: liveBig[p],
        unit: 'ms',
        peer: `${liveFloor.domSize} in the DOM`,
        peerValue: liveFloor[p],
      });
    }
    o.results.add({
      scenario: SCENARIO,
      metric: 'live messages posted that never appeared (both phases)',
      value: liveBig.posted - liveBig.shown + liveFloor.posted - liveFloor.shown,
      unit: '',
    });

    // ---- the same live phases fed by a light source (the server idle): the page's own share -----
    const light = await measureLiveLight(browser, base, o.token, big, viewerToken, liveSeconds);
    detail.liveLight = light;
    const heap = light.big.heap!;
    o.results.add({
      scenario: SCENARIO,
      metric: `the page's heap after the light source's phase with ${light.big.domSize.toLocaleString('en-US')} in the DOM at its start, and a full collection: V8's + Blink's (DOM, styles, layout; ${(heap.embedderHeapUsedSize / 2 ** 20).toFixed(0)} MiB)`,
      value: Math.round((heap.usedSize + heap.embedderHeapUsedSize) / 2 ** 20),
      unit: 'MiB',
    });
    const lightDom = light.big.domSize.toLocaleString('en-US');
    o.results.add({
      scenario: SCENARIO,
      metric: `live ${LIVE_RATE} messages/s from a light source (the socket fed by the bench, the server idle) with ${lightDom} in the DOM at the start (${light.big.domAtEnd.toLocaleString('en-US')} at the end, ${light.big.drops.count} drops up to ${light.big.drops.max.toFixed(0)} ms): long tasks over ${LONG_TASK_MS} ms (of ${light.big.longTasks.length})`,
      value: over(light.big),
      unit: 'tasks',
      peer: `the same with the latest ${light.floor.domSize} in the DOM`,
      peerValue: over(light.floor),
      target: '0',
      met: over(light.big) === 0,
    });
    o.results.add({
      scenario: SCENARIO,
      metric: 'the same (light source): the longest task',
      value: Math.max(0, ...light.big.longTasks),
      unit: 'ms',
      peer: `${light.floor.domSize} in the DOM`,
      peerValue: Math.max(0, ...light.floor.longTasks),
      target: `≤ ${LONG_TASK_MS} ms`,
      met: Math.max(0, ...light.big.longTasks) <= LONG_TASK_MS,
    });
    const share = (f: LiveFigures) => (f.longTaskMs === 0 ? 0 : (100 * f.inFlushesMs) / f.longTaskMs);
    o.results.add({
      scenario: SCENARIO,
      metric: `long-task time inside the page's flushes (room:render), server-fed phase with ${dom} in the DOM (light source: ${share(light.big).toFixed(0)} %)`,
      value: share(liveBig),
      unit: '%',
      peer: `${liveFloor.domSize} in the DOM`,
      peerValue: share(liveFloor),
    });
    o.results.add({
      scenario: SCENARIO,
      metric: `the same (light source): the page's own inserts (room:render, ${light.big.renders.count} flushes), p99 (max ${light.big.renders.max.toFixed(1)})`,
      value: light.big.renders.p99,
      unit: 'ms',
      peer: `${light.floor.domSize} in the DOM`,
      peerValue: light.floor.renders.p99,
    });
    detail.errorLines = errorLines(dev.log()).slice(0, 50);
  } finally {
    await browser?.close().catch(() => undefined);
    await dev?.stop();
  }
}
