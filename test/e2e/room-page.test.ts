/**
 * The room page in a real browser (Debian's Chromium) against a real `wrangler dev`: hostile messages
 * posted through a webhook do nothing, legitimate markdown renders, new messages arrive live, and
 * after the server restarts the page shows its offline banner, reconnects by itself and fills the gap
 * in order; a live frame lost in transit is read back from the history without reconnecting. What
 * people see (senders, levels, wall mode, history) is in room-page-display.test.ts, offline in
 * room-page-offline.test.ts.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Webhook } from './support/api';
import type { DevServer } from './support/dev-server';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';
import { attachProbe, type Probe } from './support/page-probe';
import { xssVectors } from './support/xss-vectors';

const LEGIT_IMAGE = 'https://img.example.com/badge.png';
const LEGIT_LINK = 'https://example.com/deploys/42';
const LEGIT_MESSAGE = [
  '**Deploy finished** for [switchboard](https://example.com/deploys/42)',
  '',
  `![status badge](${LEGIT_IMAGE})`,
  '',
  '| env | result |',
  '|-----|--------|',
  '| prod | green |',
  '',
  'Run `npm test` or:',
  '',
  '```sh',
  'npx wrangler deploy',
  '```',
].join('\n');

let server: DevServer;
let api: Api;
let browser: Browser;
let viewerToken: string;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

const seqsOnPage = (page: Page) =>
  page.$$eval('#messages li.message', (items) => items.map((item) => Number(item.getAttribute('data-seq')))) as Promise<number[]>;
const stateOf = (page: Page) => page.$eval('#state', (el) => ({ kind: el.className, text: el.textContent ?? '' }));

/** Opens the room page and answers its token question the way a person would. */
async function openRoom(
  roomId: string,
  probeAllowed: readonly string[] = [],
  prepare?: (page: Page) => Promise<void>,
): Promise<{ page: Page; probe: Probe }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const probe = await attachProbe(page, server.baseUrl, probeAllowed);
  await prepare?.(page);
  await page.goto(`${server.baseUrl}/rooms/${roomId}`);
  const tokenField = page.getByLabel('Access token with chat:read');
  await tokenField.waitFor({ state: 'visible' });
  await tokenField.fill(viewerToken);
  await page.getByRole('button', { name: 'Open room' }).click();
  await waitFor(
    'the page to go live',
    () => stateOf(page),
    (s) => s.kind === 'live',
  );
  return { page, probe };
}

beforeAll(async () => {
  ({ server, api, browser } = await openTestbed());
  viewerToken = await api.createToken(['chat:read']);
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

describe('the room page in Chromium', () => {
  it('is served by the Worker with its CSP, has its script and stylesheet as static assets, and its HTML file is never served as it is', async () => {
    const room = await api.createRoom('assets');
    const page = await fetch(`${server.baseUrl}/rooms/${room.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Type')).toContain('text/html');
    const csp = page.headers.get('Content-Security-Policy') ?? '';
    expect(csp).toContain("script-src 'self'; ");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port}; `);
    const html = await page.text();
    for (const [file, type] of [
      ['/assets/chat/room.js', 'text/javascript'],
      ['/assets/chat/room.css', 'text/css'],
    ] as const) {
      expect(html).toContain(`"${file}"`);
      const res = await fetch(server.baseUrl + file);
      await res.arrayBuffer();
      expect(res.status, file).toBe(200);
      expect(res.headers.get('Content-Type'), file).toBe(`${type}; charset=utf-8`);
      expect(res.headers.get('X-Content-Type-Options'), file).toBe('nosniff');
      expect(res.headers.get('Cache-Control'), file).toBe('no-cache');
      const again = await fetch(server.baseUrl + file, { headers: { 'If-None-Match': res.headers.get('ETag') ?? '' } });
      await again.arrayBuffer();
      expect(again.status, file).toBe(304);
    }
    // The asset the Worker reads the page from, and the paths around it: all the Worker's 404.
    for (const file of ['/rooms/index.html', '/rooms/', '/rooms']) {
      const res = await fetch(server.baseUrl + file, { redirect: 'manual' });
      await res.arrayBuffer();
      expect(res.status, file).toBe(404);
    }
  });

  it('has a probe that does catch a script that runs, a dialog, a foreign request and a CSP violation (control)', async () => {
    // Without this, an empty report could mean a deaf probe. A page with no CSP (served by the route,
    // never by the server) runs its inline handlers: the trap must see them.
    const page = await browser.newPage();
    const probe = await attachProbe(page, server.baseUrl);
    await page.route(`${server.baseUrl}/control`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><p id="state" class="live">Live</p>
          <img src="x" onerror="__xss('call')"><img src="y" onerror="window.__xss = 'set'">
          <img src="https://evil.example/beacon.png"><script>alert('dialog')</script>`,
      }),
    );
    await page.goto(`${server.baseUrl}/control`);
    await waitFor(
      'the control page to fire',
      () => probe.report(),
      (r) => r.hits.length >= 2,
    );
    const control = await probe.report();
    expect(control.hits.map((h) => `${h.how}:${h.value}`).sort()).toEqual(['call:call', 'set:set']);
    expect(probe.dialogs).toEqual(['alert: dialog']);
    expect(probe.foreign).toEqual(['image https://evil.example/beacon.png']);

    // The real room page: an inline handler slipped into the DOM is blocked by CSP, and the probe reports it.
    const room = await api.createRoom('control');
    const roomPage = await openRoom(room.id);
    await roomPage.page.evaluate(`document.getElementById('messages').innerHTML = '<li><img src="x" onerror="__xss(1)"></li>'`);
    await waitFor(
      'a CSP report',
      () => roomPage.probe.report(),
      (r) => r.csp.length > 0,
    );
    const report = await roomPage.probe.report();
    expect(report.hits).toEqual([]);
    expect(report.csp.map((c) => c.directive)).toContain('script-src-attr');
    await page.close();
    await roomPage.page.close();
  });

  it(`runs none of ${xssVectors().length} hostile messages and renders a legitimate one with bold, a link, an image as a link, a table and code`, async () => {
    const vectors = xssVectors();
    expect(vectors.length).toBeGreaterThanOrEqual(100);
    expect(new Set(vectors.map((v) => v.family)).size).toBeGreaterThanOrEqual(12);

    // The room's own name and topic are hostile too (shown as text by the page).
    const hostileName = '<img src=x onerror=__xss(0)>';
    const hostileTopic = '<script>__xss(0)</script><a href="javascript:__xss(0)">t</a>';
    const room = await api.createRoom(hostileName, hostileTopic);
    const hook = await api.createWebhook(room.id);
    for (const vector of vectors) {
      const delivery =
        vector.field === 'message'
          ? await api.postOk(hook, vector.payload)
          : await api.postOk(hook, `metadata vector ${vector.id}`, vector.payload);
      expect(delivery.seq).toBe(vector.id);
    }
    const legit = await api.postOk(hook, LEGIT_MESSAGE, 'deploys');
    const total = vectors.length + 1;
    expect(legit.seq).toBe(total);

    const { page, probe } = await openRoom(room.id, [LEGIT_IMAGE]);
    // The page shows the latest 100; the rest come with "Load older messages", as a person would click.
    const older = page.getByRole('button', { name: 'Load older messages' });
    for (let i = 0; i < 10 && (await older.isVisible()); i++) {
      const before = (await seqsOnPage(page)).length;
      await older.click();
      await waitFor(
        'older messages',
        () => seqsOnPage(page),
        (s) => s.length > before,
      );
    }
    expect(await seqsOnPage(page)).toEqual(Array.from({ length: total }, (_, i) => i + 1));

    // Give late handlers (image errors, animations, autofocus, meta refresh) their chance, then poke
    // every rendered element with the events inline handlers listen for, and move a real mouse over it all.
    await sleep(1_500);
    await page.evaluate(`(() => {
      for (const el of document.querySelectorAll('#messages *')) {
        for (const type of ['mouseover', 'mouseenter', 'focus', 'animationstart', 'animationend', 'toggle', 'load', 'error']) {
          el.dispatchEvent(new Event(type));
        }
      }
    })()`);
    for (let y = 0; y < 900; y += 60) await page.mouse.move(550, y);
    await page.keyboard.press('Tab');
    await sleep(500);

    const report = await probe.report();
    const why = JSON.stringify({ hits: report.hits, dialogs: probe.dialogs, foreign: probe.foreign, csp: report.csp }, null, 1);
    expect(report.hits, why).toEqual([]);
    expect(probe.dialogs, why).toEqual([]);
    expect(probe.foreign, why).toEqual([]);
    // CSP is the second line of defence: the sanitiser should leave it nothing to block.
    if (report.csp.length > 0) console.warn('CSP violations on the XSS page:', report.csp);
    expect(report.csp, why).toEqual([]);
    expect(probe.pageErrors).toEqual([]);
    expect(page.url()).toBe(`${server.baseUrl}/rooms/${room.id}`); // no meta refresh, no navigation
    expect(await page.evaluate('document.baseURI')).toBe(`${server.baseUrl}/rooms/${room.id}`); // no <base> took effect
    expect(probe.webSockets).toHaveLength(1);

    // What the browser built from the stored HTML: no active content anywhere in the messages.
    const audit = (await page.evaluate(`(() => {
      const problems = [];
      const active = new Set(['SCRIPT', 'IFRAME', 'FRAME', 'FRAMESET', 'OBJECT', 'EMBED', 'APPLET', 'BASE', 'META', 'LINK',
        'STYLE', 'FORM', 'INPUT', 'BUTTON', 'TEXTAREA', 'SELECT', 'TEMPLATE', 'SVG', 'svg', 'MATH', 'math', 'VIDEO', 'AUDIO',
        'SOURCE', 'DETAILS', 'MARQUEE', 'NOSCRIPT', 'XMP', 'PLAINTEXT', 'IMAGE', 'ISINDEX']);
      const scheme = (url) => { try { return new URL(url, location.href).protocol; } catch { return 'unparseable:'; } };
      for (const el of document.querySelectorAll('#messages *')) {
        if (active.has(el.tagName) || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') problems.push('element ' + el.tagName);
        for (const attr of el.attributes) {
          const name = attr.name.toLowerCase();
          if (name.startsWith('on') || ['style', 'srcdoc', 'formaction', 'action', 'xlink:href', 'data', 'srcset', 'background'].includes(name)) {
            problems.push(el.tagName + ' @' + name + '=' + attr.value.slice(0, 80));
          }
        }
        if (el.tagName === 'A' && el.hasAttribute('href') && !['http:', 'https:', 'mailto:'].includes(scheme(el.getAttribute('href')))) {
          problems.push('A href ' + el.getAttribute('href').slice(0, 80));
        }
        if (el.tagName === 'IMG' && !['http:', 'https:'].includes(scheme(el.getAttribute('src') || ''))) {
          problems.push('IMG src ' + String(el.getAttribute('src')).slice(0, 80));
        }
      }
      return { problems, scripts: document.scripts.length, frames: window.frames.length };
    })()`)) as { problems: string[]; scripts: number; frames: number };
    expect(audit.problems).toEqual([]);
    expect(audit.scripts).toBe(1); // the page's own /assets/chat/room.js
    expect(audit.frames).toBe(0);

    // Hostile room name and topic are shown as the text they are.
    expect(await page.textContent('#room-name')).toBe(hostileName);
    expect(await page.textContent('#room-topic')).toBe(hostileTopic);
    // A metadata vector is shown as its literal text.
    const metadataVector = vectors.find((v) => v.field === 'metadata')!;
    expect(await page.textContent(`#messages li[data-seq="${metadataVector.id}"] .tag`)).toBe(metadataVector.payload);
    // An escaped script tag is visible as text rather than dropped.
    expect(await page.textContent('#messages li[data-seq="1"] .body')).toContain('<script>__xss(1)</script>');

    // The legitimate message, as a reader sees it.
    const legitItem = page.locator(`#messages li[data-seq="${total}"]`);
    await legitItem.scrollIntoViewIfNeeded();
    const bold = legitItem.locator('strong', { hasText: 'Deploy finished' });
    expect(await bold.isVisible()).toBe(true);
    const link = legitItem.getByRole('link', { name: 'switchboard' });
    expect(await link.isVisible()).toBe(true);
    expect(await link.getAttribute('href')).toBe(LEGIT_LINK);
    expect((await link.getAttribute('rel'))?.split(' ').sort()).toEqual(['nofollow', 'noopener', 'noreferrer']);
    // Images are shown as links (one policy, docs/api.md): no <img>, and the browser never fetches it.
    expect(await legitItem.locator('img').count()).toBe(0);
    const badge = legitItem.getByRole('link', { name: 'status badge' });
    expect(await badge.getAttribute('href')).toBe(LEGIT_IMAGE);
    expect(probe.allowedForeign).not.toContain(LEGIT_IMAGE);
    const table = legitItem.locator('table');
    expect(await table.isVisible()).toBe(true);
    expect(await table.locator('th').allTextContents()).toEqual(['env', 'result']);
    expect(await table.locator('td').allTextContents()).toEqual(['prod', 'green']);
    expect(await legitItem.locator('p code').textContent()).toBe('npm test');
    const block = legitItem.locator('pre code');
    expect(await block.isVisible()).toBe(true);
    expect(await block.textContent()).toBe('npx wrangler deploy\n');
    expect(await legitItem.locator('.tag').textContent()).toBe('deploys');

    // Artifacts: the end of the room (the legitimate message under the last vectors), its top (the
    // hostile name and topic, the first vectors) and the whole page.
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-xss.png') });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-xss-top.png') });
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-xss-full.png'), fullPage: true });
    await page.close();
  });

  it('shows a new message without reload, and after a server restart reconnects by itself and fills the gap in order', async () => {
    const room = await api.createRoom('Live room', 'restart test');
    const hook: Webhook = await api.createWebhook(room.id);
    for (let i = 1; i <= 3; i++) expect((await api.postOk(hook, `before ${i}`)).seq).toBe(i);

    const { page, probe } = await openRoom(room.id);
    expect(await seqsOnPage(page)).toEqual([1, 2, 3]);
    const loadId = (await probe.report()).loadId;

    // Live: a message posted now appears on the open page.
    expect((await api.postOk(hook, 'live 4')).seq).toBe(4);
    await waitFor(
      'seq 4 on the page',
      () => seqsOnPage(page),
      (s) => s.length === 4,
    );
    expect(await page.textContent('#messages li[data-seq="4"] .body')).toBe('live 4\n');

    // Hold the page's next ticket request until the gap has been posted, so the messages are
    // certainly posted while the page is disconnected (the page still makes the request by itself).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let ticketRequests = 0;
    await page.route('**/ws-ticket', async (route) => {
      ticketRequests++;
      await released;
      await route.fallback();
    });

    await server.stop();
    // The indicator's history, not a poll: the offline moment may be over before stop() returns.
    await waitFor(
      'the page to notice',
      () => probe.report(),
      (r) => r.states.some((s, i) => i > 0 && s.kind === 'offline' && /reconnecting/i.test(s.text)),
    );
    // And not only the indicator: the page-wide banner, with the last message's time and a way to retry.
    const noticed = await probe.report();
    const banner = noticed.banners.find((b) => b.shown);
    expect(banner?.reason, JSON.stringify(noticed.banners)).toMatch(/^Offline/);
    expect(banner?.text).toContain('Last message');
    expect(banner?.text).toContain('Reconnect now');
    await server.start();

    const gap: number[] = [];
    for (let i = 1; i <= 5; i++) gap.push((await api.postOk(hook, `gap ${i}`)).seq!);
    expect(gap).toEqual([5, 6, 7, 8, 9]);
    expect(await seqsOnPage(page)).toEqual([1, 2, 3, 4]);
    expect((await stateOf(page)).kind).not.toBe('live');

    await waitFor(
      'the page to try again by itself',
      async () => ticketRequests,
      (n) => n >= 1,
      40_000,
    );
    release();
    await waitFor(
      'the page to be live again',
      () => stateOf(page),
      (s) => s.kind === 'live',
      40_000,
    );
    await waitFor(
      'the gap filled',
      () => seqsOnPage(page),
      (s) => s.length >= 9,
    );
    expect(await seqsOnPage(page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const texts = await page.$$eval('#messages li.message .body', (items) => items.map((item) => item.textContent ?? ''));
    expect(texts.map((t) => t.trim())).toEqual(['before 1', 'before 2', 'before 3', 'live 4', 'gap 1', 'gap 2', 'gap 3', 'gap 4', 'gap 5']);

    // It reconnected with after=4 (the last seq it had), not from scratch.
    expect(probe.webSockets).toHaveLength(2);
    expect(new URL(probe.webSockets[1]!).searchParams.get('after')).toBe('4');

    // The indicator went live → offline (reconnecting) → connecting → live.
    const report = await probe.report();
    const kinds = report.states.map((s) => s.kind);
    const offlineAt = kinds.indexOf('offline', kinds.indexOf('live'));
    expect(offlineAt, JSON.stringify(report.states)).toBeGreaterThan(0);
    expect(report.states[offlineAt]!.text).toMatch(/reconnecting/i);
    expect(kinds.slice(offlineAt)).toContain('connecting');
    expect(kinds[kinds.length - 1]).toBe('live');
    expect(report.loadId).toBe(loadId); // never reloaded

    // And it is live again.
    expect((await api.postOk(hook, 'after 10')).seq).toBe(10);
    await waitFor(
      'seq 10 on the page',
      () => seqsOnPage(page),
      (s) => s.length === 10,
    );
    expect(await seqsOnPage(page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(probe.foreign).toEqual([]);
    expect(probe.dialogs).toEqual([]);
    await page.close();
  });

  it('reads back live messages whose frame never arrived (a seq gap) from the history, in order, without reconnecting, trying again after a 503', async () => {
    const room = await api.createRoom('Gap room', 'lost frame test');
    const hook: Webhook = await api.createWebhook(room.id);
    for (let i = 1; i <= 2; i++) expect((await api.postOk(hook, `before ${i}`)).seq).toBe(i);

    // The real socket to the real room, with every frame that carries seq 4 or 5 dropped on its way
    // to the page: what a viewer sees when the room restarts between storing messages and sending them.
    const dropped: number[] = [];
    const history: string[] = [];
    const { page, probe } = await openRoom(room.id, [], async (p) => {
      // The first history read fails as when the room cannot flush (503): the page must try again.
      await p.route('**/api/v1/rooms/*/messages?*', async (route) => {
        history.push(route.request().url());
        if (history.length === 1) await route.fulfill({ status: 503, contentType: 'application/json', body: '{"message":"unavailable"}' });
        else await route.fallback();
      });
      await p.routeWebSocket(/\/api\/v1\/rooms\/[^/]+\/ws\?/, (ws) => {
        const upstream = ws.connectToServer();
        upstream.onMessage((message) => {
          const frame = JSON.parse(String(message)) as { type: string; messages?: { seq: number }[] };
          const seqs = frame.messages?.map((m) => m.seq) ?? [];
          if (seqs.some((seq) => seq === 4 || seq === 5)) {
            dropped.push(...seqs);
            return;
          }
          ws.send(message);
        });
        ws.onMessage((message) => upstream.send(message));
      });
    });
    expect(await seqsOnPage(page)).toEqual([1, 2]);

    expect((await api.postOk(hook, 'live 3')).seq).toBe(3);
    await waitFor(
      'seq 3 on the page',
      () => seqsOnPage(page),
      (s) => s.length === 3,
    );
    for (const i of [4, 5]) expect((await api.postOk(hook, `lost ${i}`)).seq).toBe(i);
    await waitFor(
      'the frames of seq 4 and 5 to be dropped',
      async () => [...dropped],
      (d) => d.includes(4) && d.includes(5),
    );
    expect(await seqsOnPage(page)).toEqual([1, 2, 3]); // nothing says they exist yet

    // The next live message shows the jump: the page reads 4 and 5 back and shows all in order.
    expect((await api.postOk(hook, 'live 6')).seq).toBe(6);
    await waitFor(
      'the gap read back',
      () => seqsOnPage(page),
      (s) => s.length >= 6,
    );
    expect(await seqsOnPage(page)).toEqual([1, 2, 3, 4, 5, 6]);
    const texts = await page.$$eval('#messages li.message .body', (items) => items.map((item) => (item.textContent ?? '').trim()));
    expect(texts).toEqual(['before 1', 'before 2', 'live 3', 'lost 4', 'lost 5', 'live 6']);

    // Read from the history, just the missing range, once more after the 503, on the same socket
    // (no reconnect, still live).
    expect(history).toHaveLength(2);
    for (const url of history) {
      const asked = new URL(url).searchParams;
      expect([asked.get('after'), asked.get('before')]).toEqual(['3', '6']);
    }
    expect(probe.webSockets).toHaveLength(1);
    expect((await stateOf(page)).kind).toBe('live');
    expect(probe.foreign).toEqual([]);
    await page.close();
  });
});
