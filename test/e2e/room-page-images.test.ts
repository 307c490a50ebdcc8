/**
 * Images in messages and senders' icons in Chromium, against a real `wrangler dev` with an
 * IMAGE_PROXY_KEY: a webhook post's `![alt](https://…)` and its sender's https icon are shown, loaded
 * from the page's own origin through the image proxy (the browser never contacts the image's host);
 * an image or icon whose host fails shows its link or the letter avatar, never a broken icon.
 *
 * The image host: `wrangler dev` runs offline and the proxy fetches only public https names, so the
 * Worker gets IMAGE_PROXY_LOOPBACK_UPSTREAM, a plain http server started here on 127.0.0.1 that answers
 * for every image host. The Worker honours it only for requests that came to a loopback address (as
 * these do, and a deployed Worker's never do). Signing, rendering, the proxy's checks, headers and
 * cache, the page and its CSP are the real ones; only the TLS connection to a real host is not.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/chat/protocol';
import type { Api, Webhook } from './support/api';
import type { DevServer } from './support/dev-server';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';
import { attachProbe, waitFor } from './support/page-probe';
import { xssVectors } from './support/xss-vectors';

const HOST = 'https://grafana.example.com';

let server: DevServer;
let api: Api;
let browser: Browser;
let viewerToken: string;
let upstream: Server;
/** Paths the image host was asked for, in order (by the Worker: the browser never reaches it). */
const asked: string[] = [];

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A real PNG, width × height, a gradient (so a screenshot shows it). */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows: number[] = [];
  for (let y = 0; y < height; y++) {
    rows.push(0);
    for (let x = 0; x < width; x++) rows.push(Math.round((255 * x) / width), Math.round((180 * y) / height), 160);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const GRAPH = png(480, 160);
const ICON = png(32, 32);

async function startImageHost(): Promise<Server> {
  const host = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://image-host');
    asked.push(url.pathname);
    if (url.pathname === '/graph.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(GRAPH);
    else if (url.pathname === '/icon.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(ICON);
    else if (url.pathname === '/page.png') res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>not an image</p>');
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no such image');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  return host;
}

async function createWebhook(roomId: string, fields: Record<string, unknown>): Promise<Webhook> {
  return api.admin<Webhook>('POST', '/api/v1/webhooks', {
    name: 'Grafana',
    kind: 'generic',
    roomId,
    rateLimit: { burst: 1_000, perSecond: 1_000 },
    ...fields,
  });
}

async function post(hook: Webhook, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(api.webhookUrl(hook), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`webhook post answered ${res.status}: ${text}`);
}

async function openRoom(page: Page, roomId: string): Promise<void> {
  await page.goto(`${server.baseUrl}/rooms/${roomId}`);
  const tokenField = page.getByLabel('Access token with chat:read');
  await tokenField.waitFor({ state: 'visible' });
  await tokenField.fill(viewerToken);
  await page.getByRole('button', { name: 'Open room' }).click();
  await waitFor(
    'the page to go live',
    () => page.$eval('#state', (el) => el.className),
    (kind) => kind === 'live',
  );
}

interface Shown {
  seq: number;
  avatar: { tag: string; letter: boolean; src: string; loaded: boolean };
  images: { src: string; alt: string; complete: boolean; naturalWidth: number }[];
  links: { href: string; text: string }[];
}

/** What each message shows: its avatar, its images (loaded or not) and its links (in-page, plain JavaScript). */
const SHOWN = `[...document.querySelectorAll('#messages li.message')].map((item) => {
  const avatar = item.querySelector('.avatar');
  const img = avatar && avatar.tagName === 'IMG' ? avatar : null;
  return {
    seq: Number(item.getAttribute('data-seq')),
    avatar: {
      tag: avatar ? avatar.tagName.toLowerCase() : '',
      letter: avatar ? avatar.classList.contains('letter') : false,
      src: img ? img.src : '',
      loaded: img !== null && img.complete && img.naturalWidth > 0,
    },
    images: [...item.querySelectorAll('.body img')].map((i) => ({ src: i.src, alt: i.alt, complete: i.complete, naturalWidth: i.naturalWidth })),
    links: [...item.querySelectorAll('.body a')].map((a) => ({ href: a.href, text: a.textContent || '' })),
  };
})`;

const shown = (page: Page) => page.evaluate(SHOWN) as Promise<Shown[]>;

/** Every <img> on the page that has not loaded (a broken icon, or one still loading). */
const NOT_LOADED = `[...document.querySelectorAll('img')].filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.src)`;

beforeAll(async () => {
  upstream = await startImageHost();
  const { port } = upstream.address() as AddressInfo;
  ({ server, api, browser } = await openTestbed({
    vars: { IMAGE_PROXY_KEY: randomBytes(32).toString('base64url'), IMAGE_PROXY_LOOPBACK_UPSTREAM: `http://127.0.0.1:${port}` },
  }));
  viewerToken = await api.createToken(['chat:read']);
});

afterAll(async () => {
  await closeTestbed({ server, browser });
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('images and icons through the image proxy, in Chromium', () => {
  it('shows a message’s image and its sender’s icon from this origin, and a link and a letter avatar when their host fails', async () => {
    const room = await api.createRoom('Alerts', 'Grafana and CI');
    const grafana = await createWebhook(room.id, { name: 'Grafana', avatarUrl: `${HOST}/icon.png`, allowOverrides: true });
    await post(grafana, { message: `**CPU high** on web-1\n\n![CPU graph](${HOST}/graph.png)`, level: 'warning' });
    await post(grafana, {
      message: `Build: ![build passing](${HOST}/gone.png) and ![](${HOST}/page.png)`,
      username: 'CI',
      iconUrl: `${HOST}/gone-icon.png`,
    });
    await post(grafana, { message: `Plain http stays a link: ![old graph](http://grafana.example.com/graph.png)` });

    const stored = await api.history(room.id);
    expect(stored.map((m: ChatMessage) => m.sender.iconUrl?.startsWith('/image-proxy?u='))).toEqual([true, true, true]);

    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const probe = await attachProbe(page, server.baseUrl);
    await openRoom(page, room.id);

    // Every image has settled: loaded, or replaced by its text.
    const messages = await waitFor(
      'the images to load or be replaced',
      () => shown(page),
      (list) =>
        list.length === 3 &&
        list[0]!.images.length === 1 &&
        list[0]!.images.every((i) => i.complete && i.naturalWidth > 0) &&
        list[0]!.avatar.loaded &&
        list[1]!.images.length === 0 &&
        list[1]!.avatar.letter,
    );
    const [alert, build, plain] = messages as [Shown, Shown, Shown];

    // The graph: a real image of the host's size, loaded from this origin, inside a link to the original.
    expect(alert.images[0]!.naturalWidth).toBe(480);
    expect(new URL(alert.images[0]!.src).origin).toBe(server.baseUrl);
    expect(new URL(alert.images[0]!.src).pathname).toBe('/image-proxy');
    expect(new URL(alert.images[0]!.src).searchParams.get('u')).toBe(`${HOST}/graph.png`);
    expect(alert.links).toEqual([{ href: `${HOST}/graph.png`, text: '' }]);
    expect(alert.avatar).toMatchObject({ tag: 'img', loaded: true });
    expect(new URL(alert.avatar.src).origin).toBe(server.baseUrl);

    // The failed ones: their links with the alt text (else the URL), and the letter avatar. No <img> left.
    expect(build.links).toEqual([
      { href: `${HOST}/gone.png`, text: 'build passing' },
      { href: `${HOST}/page.png`, text: `${HOST}/page.png` },
    ]);
    expect(build.avatar).toMatchObject({ tag: 'span', letter: true });
    expect(plain.images).toEqual([]);
    expect(plain.links).toEqual([{ href: 'http://grafana.example.com/graph.png', text: 'old graph' }]);

    // Nothing broken anywhere on the page: every <img> left has loaded.
    expect(await page.evaluate(NOT_LOADED)).toEqual([]);

    // The browser contacted nothing but this origin, and the CSP blocked nothing; the Worker fetched the images.
    const report = await probe.report();
    expect(probe.foreign).toEqual([]);
    expect(report.csp).toEqual([]);
    expect(probe.pageErrors).toEqual([]);
    expect(asked).toEqual(expect.arrayContaining(['/graph.png', '/icon.png', '/gone.png', '/page.png', '/gone-icon.png']));

    await page.screenshot({ path: path.join(ARTIFACTS, 'room-images.png') });
    await page.close();
  });

  it('runs none of the hostile message vectors with the image proxy on; every <img> left is this origin’s proxy', async () => {
    const room = await api.createRoom('XSS with images');
    const hook = await createWebhook(room.id, { name: 'Hostile' });
    const vectors = xssVectors().filter((v) => v.field === 'message');
    for (const vector of vectors) await post(hook, { message: vector.payload });
    await post(hook, { message: `control: ![graph](${HOST}/graph.png)` });

    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const probe = await attachProbe(page, server.baseUrl);
    await openRoom(page, room.id);
    // Every message on the page: older ones come by "Load older messages" (or by scrolling to the top).
    const total = vectors.length + 1;
    const older = page.getByRole('button', { name: 'Load older messages' });
    await waitFor(
      'every message on the page',
      async () => {
        const count = await page.locator('#messages li.message').count();
        if (count < total) {
          await page.evaluate('window.scrollTo(0, 0)');
          if (await older.isVisible()) await older.click({ timeout: 2_000 }).catch(() => undefined);
        }
        return count;
      },
      (count) => count === total,
      60_000,
    );
    await page.waitForTimeout(1_500);
    // Before the events below (an `error` event swaps any image for its text): every image left is the
    // proxy's, on this origin (the hostile ones' hosts failed: already text); the control graph loads.
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await waitFor(
      'the control image to load',
      () =>
        page.evaluate(`[...document.querySelectorAll('#messages .body img[alt="graph"]')].some((i) => i.complete && i.naturalWidth > 0)`),
      (loaded) => loaded === true,
    );
    const sources = (await page.evaluate(
      `[...document.querySelectorAll('#messages .body img')].map((i) => i.getAttribute('src') || '')`,
    )) as string[];
    expect(sources.length).toBeGreaterThanOrEqual(1);
    for (const src of sources) expect(src).toMatch(/^\/image-proxy\?u=https%3A%2F%2F[^&]+&s=[A-Za-z0-9_-]{43}$/);
    await page.evaluate(`(() => {
      for (const el of document.querySelectorAll('#messages *')) {
        for (const type of ['mouseover', 'focus', 'load', 'error']) el.dispatchEvent(new Event(type));
      }
    })()`);
    await page.waitForTimeout(500);

    const report = await probe.report();
    const why = JSON.stringify({ hits: report.hits, dialogs: probe.dialogs, foreign: probe.foreign, csp: report.csp }, null, 1);
    expect(report.hits, why).toEqual([]);
    expect(probe.dialogs, why).toEqual([]);
    expect(probe.foreign, why).toEqual([]);
    expect(report.csp, why).toEqual([]);
    expect(probe.pageErrors).toEqual([]);
    await page.close();
  });

  it('answers the proxy’s refusals as ErrorBody JSON, never an image', async () => {
    const res = await fetch(`${server.baseUrl}/image-proxy?u=${encodeURIComponent(`${HOST}/graph.png`)}&s=${'A'.repeat(43)}`);
    expect(res.status).toBe(403);
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ code: 'bad.signature', status: 403 });
  });
});
