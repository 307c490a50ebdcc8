import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { CHAT_LIMITS } from '../../src/chat/limits';
import { PROTOCOL } from '../../src/chat/protocol';
import type { RoomObject } from '../../src/chat/room/room-object';
import { createToken, expectError, send } from '../helpers';
import { createRoom, Viewer, waitUntil } from './helpers';

function roomStub(roomId: string): DurableObjectStub<RoomObject> {
  return env.ROOMS.get(env.ROOMS.idFromName(roomId));
}

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

async function ticketFor(roomId: string, token: string): Promise<string> {
  const res = await send('POST', `/api/v1/rooms/${roomId}/ws-ticket`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.ticket;
}

const upgradeWithTicket = (roomId: string, ticket: string) =>
  send('GET', `/api/v1/rooms/${roomId}/ws?ticket=${ticket}`, { token: null, headers: { Upgrade: 'websocket' } });

const draft = (text: string) => ({
  id: crypto.randomUUID(),
  webhookId: crypto.randomUUID(),
  markdown: text,
  html: `<p>${text}</p>`,
  metadata: null,
  dedupe: false,
});

describe('revoking a token', () => {
  it('closes its open WebSockets in every room with 4401 and voids its unused tickets; other tokens keep watching', async () => {
    const [a, b] = await Promise.all([createRoom(), createRoom()]);
    const revoked = await createToken(['chat:read']);
    const other = await createToken(['chat:read']);
    const unused = await ticketFor(a.id, revoked.token);
    const byBearer = await Viewer.open(a.id, { token: revoked.token });
    const byTicket = await Viewer.open(b.id, { token: null, query: `?ticket=${await ticketFor(b.id, revoked.token)}` });
    const bystander = await Viewer.open(a.id, { token: other.token });
    await Promise.all([byBearer.ready(), byTicket.ready(), bystander.ready()]);

    expect((await send('DELETE', `/api/v1/tokens/${revoked.id}`)).status).toBe(204);
    await waitUntil(() => byBearer.closed !== undefined && byTicket.closed !== undefined, 'both sockets closed');
    expect(byBearer.closed!.code).toBe(PROTOCOL.close.revoked);
    expect(byTicket.closed!.code).toBe(PROTOCOL.close.revoked);
    expectError(await upgradeWithTicket(a.id, unused), 401, 'bad.credentials');

    await roomStub(a.id).append(a.id, draft('after the revocation'));
    await bystander.untilSeq(1);
    expect(bystander.closed).toBeUndefined();
    expect(byBearer.seqs()).toEqual([]);
    bystander.close();
  });

  it('refuses a ticket of a revoked token even if its row is still there', async () => {
    const room = await createRoom();
    const { id, token } = await createToken(['chat:read']);
    expect((await send('DELETE', `/api/v1/tokens/${id}`)).status).toBe(204);
    expectError(await send('POST', `/api/v1/rooms/${room.id}/ws-ticket`, { token }), 401, 'bad.credentials');
    // A row the revocation did not see (minted while it ran): redeeming checks the token itself.
    const ticket = `swt_${crypto.randomUUID()}`;
    await env.DB.prepare('INSERT INTO ws_tickets (ticket_hash, room_id, token_id, expires_at) VALUES (?, ?, ?, ?)')
      .bind(await sha256Hex(ticket), room.id, id, Date.now() + 60_000)
      .run();
    expectError(await upgradeWithTicket(room.id, ticket), 401, 'bad.credentials');
  });
});

describe('WebSocket tickets per token', () => {
  it(`answers 429 with Retry-After to ticket ${CHAT_LIMITS.wsTicketsPerToken + 1} within ${CHAT_LIMITS.wsTicketTtlMs / 1000} s, used ones counted; other tokens are not affected`, async () => {
    const room = await createRoom();
    const { token } = await createToken(['chat:read']);
    const tickets: string[] = [];
    for (let i = 0; i < CHAT_LIMITS.wsTicketsPerToken; i++) tickets.push(await ticketFor(room.id, token));
    // A used ticket still counts: using one frees no place.
    const viewer = await Viewer.open(room.id, { token: null, query: `?ticket=${tickets[0]}` });
    await viewer.ready();

    const refused = await send('POST', `/api/v1/rooms/${room.id}/ws-ticket`, { token });
    expectError(refused, 429, 'too.many.requests');
    expect(refused.body.message).toContain(`${CHAT_LIMITS.wsTicketsPerToken} WebSocket tickets`);
    const retryAfter = Number(refused.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(CHAT_LIMITS.wsTicketTtlMs / 1000);
    const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM ws_tickets WHERE room_id = ?').bind(room.id).first<{ n: number }>();
    expect(count!.n).toBe(CHAT_LIMITS.wsTicketsPerToken);

    const { token: another } = await createToken(['chat:read']);
    await ticketFor(room.id, another);
    viewer.close();
  });
});

describe('the maximum socket lifetime', () => {
  it('closes a socket past it with 4440 by the room alarm, which is set for it; a younger socket stays', async () => {
    const room = await createRoom();
    const before = Date.now();
    const old = await Viewer.open(room.id);
    await old.ready();
    const stub = roomStub(room.id);
    // The room's clock cannot be moved: the old socket's record says it opened a lifetime ago instead.
    const alarm = await runInDurableObject(stub, async (_, state) => {
      const at = await state.storage.getAlarm();
      for (const ws of state.getWebSockets()) {
        const a = ws.deserializeAttachment() as { openedAt: number };
        ws.serializeAttachment({ ...a, openedAt: a.openedAt - CHAT_LIMITS.socketLifetimeMs });
      }
      return at;
    });
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeGreaterThanOrEqual(before + CHAT_LIMITS.socketLifetimeMs);
    expect(alarm!).toBeLessThanOrEqual(Date.now() + CHAT_LIMITS.socketLifetimeMs);

    const young = await Viewer.open(room.id);
    await young.ready();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await waitUntil(() => old.closed !== undefined, 'the old socket closed');
    expect(old.closed!.code).toBe(PROTOCOL.close.expired);
    expect(old.closed!.reason).toMatch(/fresh ticket/);
    expect(young.closed).toBeUndefined();
    // The alarm is set again, for the young socket.
    const next = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    expect(next).not.toBeNull();
    expect(next!).toBeGreaterThan(Date.now() + CHAT_LIMITS.socketLifetimeMs - 60_000);
    young.close();
  });
});
