import { env, exports } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChatDemo, DEMO_POSTS } from '../../scripts/dev/chat-demo';
import { WEBHOOK_KINDS } from '../../src/chat/limits';
import { avatarHue, initialOf, levelOf, loadableIcon, senderOf, withIdentity } from '../../src/chat/page/client/sender';
import { ago, dayKey, dayLabel, messageTime, timeStillMoves } from '../../src/chat/page/client/time-format';
import { ROOM_PAGE_ASSET } from '../../src/chat/page/room-page';
import { type ChatMessage, isChatMessage, PROTOCOL } from '../../src/chat/protocol';
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
    const css = await style.text();
    for (const rule of ['#state.live', '.level-critical', '.wall', 'prefers-color-scheme:dark', '#offline', '.avatar.letter']) {
      expect(css).toContain(rule);
    }
    const page = await asset(ROOM_PAGE_ASSET);
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const part of [
      '<ol id="messages">',
      'id="offline"',
      'Reconnect now',
      'id="new-marker"',
      'id="wall-toggle"',
      'Load older messages',
    ]) {
      expect(html).toContain(part);
    }
  });

  it('has a default sender icon for every webhook kind, an SVG image with nothing active in it', async () => {
    for (const kind of WEBHOOK_KINDS) {
      const res = await asset(`/assets/chat/icons/${kind}.svg`);
      expect(res.status, kind).toBe(200);
      expect(res.headers.get('Content-Type'), kind).toBe('image/svg+xml');
      expect(res.headers.get('X-Content-Type-Options'), kind).toBe('nosniff');
      const svg = await res.text();
      expect(svg, kind).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(svg, kind).not.toMatch(/<script|\son[a-z]+=|href=|<foreignObject|<image|url\(/i);
    }
  });
});

describe("the room page's client, its pure parts", () => {
  const message = (fields: Record<string, unknown> = {}) =>
    ({
      id: 'm',
      roomId: 'r',
      seq: 1,
      webhookId: '0d6f1a2b-0000-4000-8000-000000000000',
      markdown: 'hi',
      html: '<p>hi</p>',
      metadata: null,
      createdAt: '2026-11-26T10:00:00.000Z',
      ...fields,
    }) as unknown as ChatMessage;

  it('reads the sender and level, with defaults for a message that has neither', () => {
    const full = message({ sender: { name: 'Jenkins', iconUrl: '/assets/chat/icons/jenkins.svg' }, level: 'critical' });
    expect(senderOf(full)).toEqual({ name: 'Jenkins', iconUrl: '/assets/chat/icons/jenkins.svg' });
    expect(levelOf(full)).toBe('critical');
    const bare = message();
    expect(isChatMessage(bare)).toBe(false);
    expect(senderOf(bare)).toEqual({ name: 'Webhook 0d6f1a2b', iconUrl: null });
    expect(levelOf(bare)).toBe('info');
    expect(levelOf(message({ level: 'apocalyptic' }))).toBe('info');
    expect(senderOf(message({ sender: { name: '  ', iconUrl: '' } }))).toEqual({ name: 'Webhook 0d6f1a2b', iconUrl: null });
    // History and frames from a server without sender and level still show.
    const filled = withIdentity(bare);
    expect(isChatMessage(filled)).toBe(true);
    expect(filled).toMatchObject({ sender: { name: 'Webhook 0d6f1a2b', iconUrl: null }, level: 'info' });
    expect(withIdentity(full)).toBe(full);
  });

  it('gives a name the same avatar colour and initial every time, and tries only http(s) icons', () => {
    expect(avatarHue('Prod alerts')).toBe(avatarHue('Prod alerts'));
    const hues = new Set(['GitHub', 'Jenkins', 'Jira', 'Prod alerts', 'Salesforce', 'CI', 'Nightly', 'Deploys'].map(avatarHue));
    expect(hues.size).toBeGreaterThan(3);
    for (const hue of hues) expect(hue).toBeGreaterThanOrEqual(0);
    expect(initialOf('élodie')).toBe('É');
    expect(initialOf('🚀 deploys')).toBe('🚀');
    expect(initialOf('')).toBe('?');
    const base = 'https://switchboard.example/rooms/r';
    expect(loadableIcon('/assets/chat/icons/jira.svg', base)).toBe('https://switchboard.example/assets/chat/icons/jira.svg');
    // Another host (even https) is blocked by the page's img-src 'self': the letter avatar instead.
    expect(loadableIcon('https://cdn.example/a.png', base)).toBeNull();
    expect(loadableIcon('http://cdn.example/a.png', base)).toBeNull();
    expect(loadableIcon('javascript:alert(1)', base)).toBeNull();
    expect(loadableIcon('data:image/svg+xml,<svg/>', base)).toBeNull();
    expect(loadableIcon(null, base)).toBeNull();
  });

  it('words times: relative within the hour, then the clock; days as Today, Yesterday or a date', () => {
    const now = new Date(2026, 10, 26, 15, 30);
    expect(messageTime(new Date(2026, 10, 26, 15, 29, 30), now)).toBe('just now');
    expect(messageTime(new Date(2026, 10, 26, 15, 27), now)).toBe('3 min ago');
    expect(messageTime(new Date(2026, 10, 26, 9, 5), now)).toMatch(/09.05|9.05/);
    expect(timeStillMoves(new Date(2026, 10, 26, 15, 0), now)).toBe(true);
    expect(timeStillMoves(new Date(2026, 10, 26, 14, 0), now)).toBe(false);
    expect(dayLabel(new Date(2026, 10, 26, 0, 1), now)).toBe('Today');
    expect(dayLabel(new Date(2026, 10, 25, 23, 59), now)).toBe('Yesterday');
    expect(dayLabel(new Date(2026, 10, 23, 12), now)).toContain('23');
    expect(dayLabel(new Date(2025, 10, 23, 12), now)).toContain('2025');
    expect(dayKey(new Date(2026, 0, 5, 23, 59))).toBe('2026-01-05');
    expect(ago(new Date(2026, 10, 26, 15, 26), now)).toBe('4 min ago');
    expect(ago(new Date(2026, 10, 26, 13, 0), now)).toBe('2 h ago');
    expect(ago(new Date(2026, 10, 23, 15, 0), now)).toBe('3 days ago');
  });
});

describe('the dev chat demo', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('creates the Demo room and a generic webhook once, then finds them again', async () => {
    vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => exports.default.fetch(new Request(input as RequestInfo, init)));
    const first = await createChatDemo(BASE, ADMIN_TOKEN);
    // The empty room got its first messages, each from a webhook of its own kind, in order.
    const seeded = (await history(first.roomId, '?limit=500')).body.entities as {
      seq: number;
      markdown: string;
      level: string;
      sender: { name: string };
    }[];
    expect(seeded.map((m) => [m.seq, m.sender.name, m.level])).toEqual([
      [1, 'Demo generic webhook', 'success'],
      [2, 'Demo Jenkins', 'critical'],
      [3, 'Demo alerts (Slack format)', 'warning'],
    ]);
    expect(seeded[0]!.markdown).toBe((DEMO_POSTS[0]!.body as { message: string }).message);
    expect(seeded[1]!.markdown).toMatch(/switchboard-main.*#42[\s\S]*FAILURE/);
    expect(seeded[2]!.markdown).toContain('HighLatency checkout');
    expect(seeded[2]!.markdown).toContain('p99 latency above 800 ms for 10 minutes');
    const again = await createChatDemo(`${BASE}/`, ADMIN_TOKEN);
    expect(again).toEqual(first);
    // Not seeded again: the room has messages.
    expect((await history(first.roomId, '?limit=500')).body.entities).toHaveLength(3);
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
