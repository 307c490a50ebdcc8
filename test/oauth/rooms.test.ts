/**
 * An OAuth client's access token in live rooms: it opens a room's WebSocket (by bearer and by ticket)
 * like an API token with chat:read, and revoking the client closes those sockets (4401) and voids
 * its tickets, as revoking a token does (test/chat/revocation.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { PROTOCOL } from '../../src/chat/protocol';
import { createRoom, Viewer, waitUntil } from '../chat/helpers';
import { expectError, send } from '../helpers';
import { CLIENTS, createClient, login } from './support';

async function ticketFor(roomId: string, token: string): Promise<string> {
  const res = await send('POST', `/api/v1/rooms/${roomId}/ws-ticket`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.ticket;
}

describe('an OAuth access token in live rooms', () => {
  it('watches a room by bearer and by ticket; revoking the client closes both sockets with 4401 and voids its tickets', async () => {
    const [a, b] = await Promise.all([createRoom(), createRoom()]);
    const client = await createClient(['chat:read']);
    const token = await login(client);
    const byBearer = await Viewer.open(a.id, { token });
    const byTicket = await Viewer.open(b.id, { token: null, query: `?ticket=${await ticketFor(b.id, token)}` });
    await Promise.all([byBearer.ready(), byTicket.ready()]);
    const unused = await ticketFor(a.id, token);

    expect((await send('DELETE', `${CLIENTS}/${client.id}`)).status).toBe(204);
    await waitUntil(() => byBearer.closed !== undefined && byTicket.closed !== undefined, 'both sockets closed');
    expect(byBearer.closed!.code).toBe(PROTOCOL.close.revoked);
    expect(byTicket.closed!.code).toBe(PROTOCOL.close.revoked);
    expectError(
      await send('GET', `/api/v1/rooms/${a.id}/ws?ticket=${unused}`, { token: null, headers: { Upgrade: 'websocket' } }),
      401,
      'bad.credentials',
    );
  });

  it('needs chat:read like any token', async () => {
    const room = await createRoom();
    const token = await login(await createClient(['analytics:conversationAggregate:view']));
    expectError(await send('POST', `/api/v1/rooms/${room.id}/ws-ticket`, { token }), 403, 'missing.permissions');
  });
});
