import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { createRoom, createWebhook, postOk, roomWithWebhook, unique } from './helpers';

describe('rooms (chat:admin)', () => {
  it('creates a room with 201 {id, name, topic, createdAt}, trimming the name and defaulting the topic to null', async () => {
    const name = unique('ops');
    const res = await send('POST', '/api/v1/rooms', { json: { name: `  ${name}  ` } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name, topic: null, createdAt: expect.any(String) });
    expect(Date.parse(res.body.createdAt)).not.toBeNaN();
    const withTopic = await createRoom(unique('dev'), 'Deploys and builds');
    expect(withTopic.topic).toBe('Deploys and builds');
  });

  it.each([
    ['an empty name', { name: '  ' }, 'name'],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, 'name'],
    ['a topic that is not a string', { name: 'ok', topic: 5 }, 'topic'],
    ['a topic over 500 characters', { name: 'ok', topic: 't'.repeat(501) }, 'topic'],
  ])('answers 400 naming the field for %s', async (_, json, field) => {
    expectError(await send('POST', '/api/v1/rooms', { json }), 400, 'invalid.value', field);
  });

  it('refuses unknown fields, non-JSON bodies and malformed JSON', async () => {
    expectError(await send('POST', '/api/v1/rooms', { json: { name: 'ok', colour: 'red' } }), 400, 'invalid.value');
    expectError(
      await send('POST', '/api/v1/rooms', { body: 'name=ok', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported.media.type',
    );
    expectError(
      await send('POST', '/api/v1/rooms', { body: '{"name":', headers: { 'Content-Type': 'application/json' } }),
      400,
      'bad.request',
    );
  });

  it('needs a token with chat:admin on every room route', async () => {
    const room = await createRoom();
    const { token: reader } = await createToken(['chat:read']);
    const routes: [string, string, unknown?][] = [
      ['POST', '/api/v1/rooms', { name: 'x' }],
      ['GET', '/api/v1/rooms'],
      ['GET', `/api/v1/rooms/${room.id}`],
      ['PATCH', `/api/v1/rooms/${room.id}`, { name: 'y' }],
      ['DELETE', `/api/v1/rooms/${room.id}`],
    ];
    for (const [method, path, json] of routes) {
      expectError(await send(method, path, { token: null, json }), 401, 'authentication.required');
      expectError(await send(method, path, { token: 'sbt_wrong', json }), 401, 'bad.credentials');
      expectError(await send(method, path, { token: reader, json }), 403, 'missing.permissions', 'chat:admin');
    }
  });

  it('lists, reads and updates rooms', async () => {
    const room = await createRoom(unique('list'), 'first topic');
    const list = await send('GET', '/api/v1/rooms');
    expect(list.status).toBe(200);
    expect(list.body.entities).toContainEqual(room);
    expect((await send('GET', `/api/v1/rooms/${room.id}`)).body).toEqual(room);

    const renamed = await send('PATCH', `/api/v1/rooms/${room.id}`, { json: { name: 'renamed' } });
    expect(renamed.body).toEqual({ ...room, name: 'renamed' });
    const cleared = await send('PATCH', `/api/v1/rooms/${room.id}`, { json: { topic: null } });
    expect(cleared.body).toEqual({ ...room, name: 'renamed', topic: null });
    expectError(await send('PATCH', `/api/v1/rooms/${room.id}`, { json: {} }), 400, 'invalid.value');
  });

  it('answers 404 for unknown and malformed room ids', async () => {
    for (const id of [crypto.randomUUID(), 'not-a-room']) {
      expectError(await send('GET', `/api/v1/rooms/${id}`), 404, 'not.found');
      expectError(await send('PATCH', `/api/v1/rooms/${id}`, { json: { name: 'x' } }), 404, 'not.found');
      expectError(await send('DELETE', `/api/v1/rooms/${id}`), 404, 'not.found');
    }
  });

  it('refuses with 409 to delete a room a webhook posts to, directly or through a mapping', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const mapped = await createRoom();
    const other = await createRoom();
    const mapper = await createWebhook({
      roomId: other.id,
      mappings: [{ field: 'message', match: 'contains', value: 'x', roomIds: [mapped.id] }],
    });

    const direct = await send('DELETE', `/api/v1/rooms/${roomId}`);
    expectError(direct, 409, 'conflict', hook.id);
    expectError(await send('DELETE', `/api/v1/rooms/${mapped.id}`), 409, 'conflict', mapper.id);

    expect((await send('DELETE', `/api/v1/webhooks/${mapper.id}`)).status).toBe(204);
    expect((await send('DELETE', `/api/v1/rooms/${mapped.id}`)).status).toBe(204);
  });

  it('deletes a room with its messages', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'one');
    await postOk(hook, 'two');
    expect((await send('GET', `/api/v1/rooms/${roomId}/messages`)).body.entities).toHaveLength(2);
    expect((await send('DELETE', `/api/v1/webhooks/${hook.id}`)).status).toBe(204);
    expect((await send('DELETE', `/api/v1/rooms/${roomId}`)).status).toBe(204);
    expectError(await send('GET', `/api/v1/rooms/${roomId}`), 404, 'not.found');
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM messages WHERE room_id = ?').bind(roomId).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
