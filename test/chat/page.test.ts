import { exports } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChatDemo } from '../../scripts/dev/chat-demo';
import { PROTOCOL } from '../../src/chat/protocol';
import { ADMIN_TOKEN, BASE, expectError, send } from '../helpers';
import { createRoom, history, post } from './helpers';

describe('the room page', () => {
  it('is HTML with a strict CSP, no inline script or style, and the room id for its script', async () => {
    const room = await createRoom();
    const res = await send('GET', `/rooms/${room.id}`, { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    const csp = res.headers.get('Content-Security-Policy')!;
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      "script-src 'self'",
      "connect-src 'self' ws://switchboard.test",
      'img-src https:',
      "style-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    const html: string = res.body;
    expect(html).toContain(`data-room-id="${room.id}"`);
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toContain('src="/assets/chat/room.js"');
    expect(scripts[0]![2]).toBe('');
    expect(html).not.toMatch(/<style|style=|\son[a-z]+=/i);
    // The room's name is not in the page: it comes with a ticket, which needs chat:read.
    expect(html).not.toContain(room.name);
  });

  it('answers 404 for a malformed room id', async () => {
    expectError(await send('GET', '/rooms/not-a-room', { token: null }), 404, 'not.found');
  });

  it('serves its script with the shared protocol inlined, and its stylesheet', async () => {
    const script = await send('GET', '/assets/chat/room.js', { token: null });
    expect(script.status).toBe(200);
    expect(script.headers.get('Content-Type')).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain(`const P = ${JSON.stringify(PROTOCOL)};`);
    expect(script.body).toContain('sessionStorage');
    expect(script.body).toContain('/ws-ticket');
    expect(script.body).toContain('P.query.after');
    const style = await send('GET', '/assets/chat/room.css', { token: null });
    expect(style.status).toBe(200);
    expect(style.headers.get('Content-Type')).toBe('text/css; charset=utf-8');
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
