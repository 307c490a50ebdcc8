import { env, exports } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChatDemo } from '../../scripts/dev/chat-demo';
import { ROOM_PAGE_ASSET } from '../../src/chat/page/room-page';
import { PROTOCOL } from '../../src/chat/protocol';
import { ADMIN_TOKEN, BASE, expectError, send } from '../helpers';
import { createRoom, history, post } from './helpers';

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self' ws://switchboard.test",
  "img-src 'self'",
  "style-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
];

/** A static asset as the asset server answers it (exports.default.fetch reaches only the Worker). */
const asset = (path: string) => env.ASSETS.fetch(`${BASE}${path}`);

describe('the room page', () => {
  it('is HTML with a strict CSP, one external module script, no inline script or style, and nothing about the room', async () => {
    const room = await createRoom();
    const res = await send('GET', `/rooms/${room.id}`, { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    expect(res.headers.get('Content-Security-Policy')!.split('; ')).toEqual(CSP);
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('Referrer-Policy')).toBe('no-referrer');
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    const html: string = res.body;
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toContain('type="module"');
    expect(scripts[0]![1]).toContain('src="/assets/chat/room.js"');
    expect(scripts[0]![2]).toBe('');
    expect(html).toContain('<link rel="stylesheet" href="/assets/chat/room.css">');
    expect(html).not.toMatch(/<style|style=|\son[a-z]+=/i);
    // The room's name is not in the page: it comes with a ticket, which needs chat:read. The script
    // reads the id from the URL, so every room gets the same document.
    expect(html).not.toContain(room.name);
    expect(html).not.toContain(room.id);
    const other = await createRoom();
    expect((await send('GET', `/rooms/${other.id}`, { token: null })).body).toBe(html);
  });

  it('answers 404 for a malformed room id, and for the page asset asked for by its own name', async () => {
    expectError(await send('GET', '/rooms/not-a-room', { token: null }), 404, 'not.found');
    expectError(await send('GET', ROOM_PAGE_ASSET, { token: null }), 404, 'not.found');
  });

  it('has its script as a static asset: the client bundled with the shared protocol, nothing CSP would block', async () => {
    const res = await asset('/assets/chat/room.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    // Fixed name, revalidated on each load: a new deploy is picked up at once.
    expect(res.headers.get('Cache-Control')).toBe('no-cache');
    expect(res.headers.get('ETag')).toMatch(/^"[^"]+"$/);
    const script = await res.text();
    for (const fromProtocol of [PROTOCOL.ping, String(PROTOCOL.close.roomDeleted)]) {
      expect(script).toContain(fromProtocol);
    }
    expect(script).toContain('/ws-ticket');
    expect(script).toContain('sessionStorage');
    expect(script).not.toMatch(/\beval\(|new Function|import\(/);
    const again = await env.ASSETS.fetch(`${BASE}/assets/chat/room.js`, { headers: { 'If-None-Match': res.headers.get('ETag')! } });
    expect(again.status).toBe(304);
  });

  it('has its stylesheet and HTML as static assets', async () => {
    const style = await asset('/assets/chat/room.css');
    expect(style.status).toBe(200);
    expect(style.headers.get('Content-Type')).toBe('text/css; charset=utf-8');
    expect(style.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(await style.text()).toContain('#state.live');
    const page = await asset(ROOM_PAGE_ASSET);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<ol id="messages">');
  });
});

describe('the dev chat demo', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('creates the Demo room and a generic webhook once, then finds them again', async () => {
    vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => exports.default.fetch(new Request(input as RequestInfo, init)));
    const first = await createChatDemo(BASE, ADMIN_TOKEN);
    const again = await createChatDemo(`${BASE}/`, ADMIN_TOKEN);
    expect(again).toEqual(first);
    expect(first.pageUrl).toBe(`${BASE}/rooms/${first.roomId}`);
    expect(first.webhookUrl).toMatch(new RegExp(`^${BASE}/webhooks/api/v1/webhook/[0-9a-f-]{36}$`));
    expect(first.curl).toContain(first.webhookUrl);
    expect(first.curl).toContain("-H 'Content-Type: application/json'");

    const payload = JSON.parse(/-d '(.*)'$/.exec(first.curl)![1]!.replace(/'\\''/g, "'"));
    const id = first.webhookUrl.split('/').pop()!;
    expect((await post(id, payload)).status).toBe(200);
    expect((await history(first.roomId, '?limit=500')).body.entities.at(-1).markdown).toBe(payload.message);
  });
});
