import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { createRoom, createWebhook, unique } from './helpers';

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('webhooks (chat:admin)', () => {
  it('creates a webhook with 201, a fresh UUIDv4 id, its full URL (another secret UUIDv4) and the documented defaults', async () => {
    const room = await createRoom();
    const name = unique('ci');
    const res = await send('POST', '/api/v1/webhooks', { json: { name, kind: 'jenkins', roomId: room.id } });
    expect(res.status).toBe(201);
    const secret = String(res.body.url).split('/').pop()!;
    expect(secret).toMatch(UUID_V4);
    expect(secret).not.toBe(res.body.id);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID_V4),
      url: `http://switchboard.test/webhooks/api/v1/webhook/${secret}`,
      name,
      kind: 'jenkins',
      roomId: room.id,
      active: true,
      mappings: [],
      rateLimit: { burst: 100, perSecond: 10 },
      avatarUrl: null,
      allowOverrides: false,
      lastDeliveryAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // Posts look the URL's secret up by its SHA-256.
    const row = await env.DB.prepare('SELECT post_secret_hash FROM webhooks WHERE id = ?')
      .bind(res.body.id)
      .first<{ post_secret_hash: string }>();
    expect(row!.post_secret_hash).toBe(await sha256Hex(secret));
  });

  it('makes a generic webhook from a name and a room alone, as Slack and Mattermost do, and a later PATCH without kind keeps its kind', async () => {
    const room = await createRoom();
    const res = await send('POST', '/api/v1/webhooks', { json: { name: 'CI', roomId: room.id } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.kind).toBe('generic');
    const posted = await send('POST', new URL(res.body.url).pathname, { token: null, json: { message: '**deployed**' } });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);

    const jenkins = await send('POST', '/api/v1/webhooks', { json: { name: 'Jenkins', kind: 'jenkins', roomId: room.id } });
    const renamed = await send('PATCH', `/api/v1/webhooks/${jenkins.body.id}`, { json: { name: 'Jenkins CI' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Jenkins CI', kind: 'jenkins' });
    // A secret still needs a kind whose deliveries are signed: the default is not one.
    expectError(
      await send('POST', '/api/v1/webhooks', { json: { name: 'x', roomId: room.id, secret: 's'.repeat(32) } }),
      400,
      'invalid.value',
    );
  });

  it('shows a webhook that migration 0007 left without a URL as url null and needsRotation; rotating gives it a URL', async () => {
    const room = await createRoom();
    const hook = await createWebhook({ roomId: room.id });
    // What 0007 leaves an existing webhook with.
    await env.DB.prepare('UPDATE webhooks SET post_secret = NULL, post_secret_hash = NULL WHERE id = ?').bind(hook.id).run();
    const retired = (await send('GET', `/api/v1/webhooks/${hook.id}`)).body;
    expect(retired).toEqual({ ...hook, url: null, needsRotation: true });
    expect((await send('GET', '/api/v1/webhooks')).body.entities).toContainEqual(retired);
    expectError(await send('POST', new URL(hook.url).pathname, { token: null, json: { message: 'old URL' } }), 404, 'not.found');
    const rotated = await send('POST', `/api/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({
      id: hook.id,
      url: expect.stringMatching(/^http:\/\/switchboard\.test\/webhooks\/api\/v1\/webhook\//),
    });
    expect(rotated.body).not.toHaveProperty('needsRotation');
    expect((await send('POST', new URL(rotated.body.url).pathname, { token: null, json: { message: 'new URL' } })).status).toBe(200);
  });

  it('accepts every kind, paused creation, mappings and a partial rate limit', async () => {
    const [room, other] = await Promise.all([createRoom(), createRoom()]);
    for (const kind of ['generic', 'jenkins', 'jira', 'github', 'bitbucket', 'salesforce', 'slack', 'discord']) {
      expect((await createWebhook({ roomId: room.id, kind })).kind).toBe(kind);
    }
    const mappings = [{ field: 'metadata', match: 'prefix', value: 'prod', roomIds: [other.id] }];
    const hook = await createWebhook({ roomId: room.id, active: false, mappings, rateLimit: { burst: 5 } });
    expect(hook).toMatchObject({ active: false, mappings, rateLimit: { burst: 5, perSecond: 10 } });
  });

  it.each([
    ['an unknown kind', { kind: 'teams' }, 'kind'],
    ['an empty name', { name: '' }, 'name'],
    ['a malformed roomId', { roomId: 'room-1' }, 'roomId'],
    ['a mapping with an unknown match', { mappings: [{ field: 'message', match: 'regex', value: 'x', roomIds: [] }] }, 'mappings[0].match'],
    ['a mapping without rooms', { mappings: [{ field: 'message', match: 'exact', value: 'x', roomIds: [] }] }, 'mappings[0].roomIds'],
    [
      'a mapping with an empty value',
      { mappings: [{ field: 'metadata', match: 'exact', value: '', roomIds: [crypto.randomUUID()] }] },
      'mappings[0].value',
    ],
    ['a burst of 0', { rateLimit: { burst: 0 } }, 'rateLimit.burst'],
    ['a fractional burst', { rateLimit: { burst: 1.5 } }, 'rateLimit.burst'],
    ['a rate of 0 per second', { rateLimit: { perSecond: 0 } }, 'rateLimit.perSecond'],
    ['a rate over 100,000 per second', { rateLimit: { perSecond: 100_001 } }, 'rateLimit.perSecond'],
    ['an unknown field', { secret: 'x' }, 'body'],
  ])('answers 400 naming the field for %s', async (_, fields, field) => {
    const room = await createRoom();
    const res = await send('POST', '/api/v1/webhooks', { json: { name: 'hook', kind: 'generic', roomId: room.id, ...fields } });
    expectError(res, 400, 'invalid.value', field);
  });

  it('answers 400 naming each room id that is no room', async () => {
    const room = await createRoom();
    const ghost = crypto.randomUUID();
    expectError(
      await send('POST', '/api/v1/webhooks', { json: { name: 'h', kind: 'generic', roomId: ghost } }),
      400,
      'invalid.value',
      'roomId',
    );
    const res = await send('POST', '/api/v1/webhooks', {
      json: {
        name: 'h',
        kind: 'generic',
        roomId: room.id,
        mappings: [{ field: 'message', match: 'exact', value: 'x', roomIds: [room.id, ghost] }],
      },
    });
    expectError(res, 400, 'invalid.value', 'mappings[0].roomIds[1]');
  });

  it('takes the most rooms a webhook may name (its own and 20 mappings of 10, all distinct), on create and on PATCH', async () => {
    const rooms = await Promise.all(Array.from({ length: 201 }, () => createRoom()));
    const mappings = Array.from({ length: 20 }, (_, m) => ({
      field: 'message',
      match: 'prefix',
      value: `m${m}:`,
      roomIds: rooms.slice(1 + m * 10, 11 + m * 10).map((r) => r.id),
    }));
    const hook = await createWebhook({ roomId: rooms[0]!.id, mappings });
    expect((hook.mappings as { roomIds: string[] }[]).flatMap((m) => m.roomIds)).toHaveLength(200);

    // One of the 200 is no room: named by its place, whatever the count.
    const ghost = crypto.randomUUID();
    const withGhost = mappings.map((m, i) => (i === 19 ? { ...m, roomIds: [...m.roomIds.slice(0, 9), ghost] } : m));
    expectError(
      await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { mappings: withGhost } }),
      400,
      'invalid.value',
      'mappings[19].roomIds[9]',
    );
    const reversed = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { mappings: [...mappings].reverse() } });
    expect(reversed.status, JSON.stringify(reversed.body)).toBe(200);
  });

  it('lists, reads, updates and deletes webhooks', async () => {
    const [room, other] = await Promise.all([createRoom(), createRoom()]);
    const hook = await createWebhook({ roomId: room.id, rateLimit: { burst: 3, perSecond: 2 } });
    expect((await send('GET', '/api/v1/webhooks')).body.entities).toContainEqual(hook);
    expect((await send('GET', `/api/v1/webhooks/${hook.id}`)).body).toEqual(hook);

    const patched = await send('PATCH', `/api/v1/webhooks/${hook.id}`, {
      json: { name: 'renamed', kind: 'github', roomId: other.id, rateLimit: { perSecond: 0.5 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: hook.id,
      url: hook.url,
      name: 'renamed',
      kind: 'github',
      roomId: other.id,
      rateLimit: { burst: 3, perSecond: 0.5 },
    });
    expectError(await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: {} }), 400, 'invalid.value');
    expectError(
      await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { roomId: crypto.randomUUID() } }),
      400,
      'invalid.value',
      'roomId',
    );

    expect((await send('DELETE', `/api/v1/webhooks/${hook.id}`)).status).toBe(204);
    expectError(await send('GET', `/api/v1/webhooks/${hook.id}`), 404, 'not.found');
    expectError(await send('DELETE', `/api/v1/webhooks/${hook.id}`), 404, 'not.found');
  });

  it('answers 404 for unknown and malformed webhook ids', async () => {
    for (const id of [crypto.randomUUID(), 'nope']) {
      expectError(await send('GET', `/api/v1/webhooks/${id}`), 404, 'not.found');
      expectError(await send('PATCH', `/api/v1/webhooks/${id}`, { json: { active: false } }), 404, 'not.found');
      expectError(await send('DELETE', `/api/v1/webhooks/${id}`), 404, 'not.found');
      expectError(await send('POST', `/api/v1/webhooks/${id}/rotate`), 404, 'not.found');
    }
  });

  it('needs a token with chat:admin on every webhook route', async () => {
    const room = await createRoom();
    const hook = await createWebhook({ roomId: room.id });
    const { token: reader } = await createToken(['chat:read']);
    const routes: [string, string, unknown?][] = [
      ['POST', '/api/v1/webhooks', { name: 'x', kind: 'generic', roomId: room.id }],
      ['GET', '/api/v1/webhooks'],
      ['GET', `/api/v1/webhooks/${hook.id}`],
      ['PATCH', `/api/v1/webhooks/${hook.id}`, { active: false }],
      ['DELETE', `/api/v1/webhooks/${hook.id}`],
      ['POST', `/api/v1/webhooks/${hook.id}/rotate`],
    ];
    for (const [method, path, json] of routes) {
      expectError(await send(method, path, { token: null, json }), 401, 'authentication.required');
      expectError(await send(method, path, { token: reader, json }), 403, 'missing.permissions', 'chat:admin');
    }
    expect((await send('GET', `/api/v1/webhooks/${hook.id}`)).body.active).toBe(true);
  });
});
