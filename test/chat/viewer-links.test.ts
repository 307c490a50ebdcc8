import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { CHAT_LIMITS } from '../../src/chat/limits';
import { PROTOCOL } from '../../src/chat/protocol';
import { VIEWER_LINK_GONE } from '../../src/chat/viewer-links/viewer-link-auth';
import { createToken, expectError, send, type Sent } from '../helpers';
import { createRoom, postOk, roomWithWebhook, Viewer, waitUntil } from './helpers';

interface CreatedLink {
  id: string;
  roomId: string;
  label: string;
  createdAt: string;
  rotatedAt: string | null;
  lastUsedAt: string | null;
  secret: string;
  url: string;
}

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const linksPath = (roomId: string) => `/api/v1/rooms/${roomId}/viewer-links`;

async function createLink(roomId: string, label = 'Lobby TV'): Promise<CreatedLink> {
  const res = await send('POST', linksPath(roomId), { json: { label } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const ticket = (roomId: string, secret: string) => send('POST', `/api/v1/rooms/${roomId}/ws-ticket`, { token: secret });
const history = (roomId: string, secret: string, query = '') => send('GET', `/api/v1/rooms/${roomId}/messages${query}`, { token: secret });
const upgradeWithTicket = (roomId: string, t: string) =>
  send('GET', `/api/v1/rooms/${roomId}/ws?ticket=${t}`, { token: null, headers: { Upgrade: 'websocket' } });

async function ticketOk(roomId: string, secret: string): Promise<string> {
  const res = await ticket(roomId, secret);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.ticket;
}

async function linkCount(roomId: string): Promise<number> {
  const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM viewer_links WHERE room_id = ?').bind(roomId).first<{ n: number }>();
  return row!.n;
}

function expectGone(res: Sent): void {
  expectError(res, 401, 'bad.credentials');
  expect(res.body.message).toBe(VIEWER_LINK_GONE);
}

describe('creating and listing viewer links', () => {
  it('answers the secret and the page URL once; the list and the database never hold the secret', async () => {
    const room = await createRoom();
    const link = await createLink(room.id, '  Lobby TV  ');
    expect(link).toMatchObject({ roomId: room.id, label: 'Lobby TV', rotatedAt: null, lastUsedAt: null });
    expect(link.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(link.secret).toMatch(/^sbv_[A-Za-z0-9_-]{43}$/);
    expect(link.url).toBe(`http://switchboard.test/rooms/${room.id}#view=${link.secret}`);

    const list = await send('GET', linksPath(room.id));
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      entities: [{ id: link.id, roomId: room.id, label: 'Lobby TV', createdAt: link.createdAt, rotatedAt: null, lastUsedAt: null }],
    });
    expect(JSON.stringify(list.body)).not.toContain(link.secret);

    const row = await env.DB.prepare('SELECT * FROM viewer_links WHERE id = ?').bind(link.id).first<Record<string, unknown>>();
    expect(row!.secret_hash).toBe(await sha256Hex(link.secret));
    expect(Object.values(row!).map(String)).not.toContain(link.secret);
  });

  it('lists only the room’s own links, oldest first', async () => {
    const [a, b] = await Promise.all([createRoom(), createRoom()]);
    const first = await createLink(a.id, 'first');
    const second = await createLink(a.id, 'second');
    await createLink(b.id, 'elsewhere');
    const list = await send('GET', linksPath(a.id));
    expect(list.body.entities.map((l: { id: string }) => l.id)).toEqual([first.id, second.id]);
  });
});

describe('what a viewer link opens', () => {
  it('opens its room’s ticket, history and WebSocket (ticket or bearer), read-only, and records its use', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'before the viewer');
    const link = await createLink(roomId);

    const t = await ticket(roomId, link.secret);
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    expect(t.body.room).toMatchObject({ id: roomId });
    const byTicket = await Viewer.open(roomId, { token: null, query: `?ticket=${t.body.ticket}&tail=10` });
    const byBearer = await Viewer.open(roomId, { token: link.secret, query: '?tail=10' });
    await Promise.all([byTicket.ready(), byBearer.ready()]);
    expect(byTicket.seqs()).toEqual([1]);

    await postOk(hook, 'live to the wall');
    await Promise.all([byTicket.untilSeq(2), byBearer.untilSeq(2)]);
    expect(byTicket.messages.at(-1)!.markdown).toBe('live to the wall');

    const read = await history(roomId, link.secret, '?q=wall');
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.entities.map((m: { seq: number }) => m.seq)).toEqual([2]);

    const listed = await send('GET', linksPath(roomId));
    expect(Date.parse(listed.body.entities[0].lastUsedAt)).toBeGreaterThan(Date.parse(link.createdAt) - 1);
    byTicket.close();
    byBearer.close();
  });

  it('is refused for other rooms (403), for posting and on every other endpoint (401), with ErrorBody', async () => {
    const [room, other] = await Promise.all([createRoom(), createRoom()]);
    const link = await createLink(room.id);
    const s = link.secret;

    expectError(await ticket(other.id, s), 403, 'missing.permissions');
    expectError(await history(other.id, s), 403, 'missing.permissions');
    const otherWs = await Viewer.request(other.id, { token: s });
    expect(otherWs.status).toBe(403);
    // Its ticket names its room: another room's socket does not take it.
    expectError(await upgradeWithTicket(other.id, await ticketOk(room.id, s)), 401, 'bad.credentials');

    const elsewhere: [string, string, unknown?][] = [
      ['POST', `/api/v1/rooms/${room.id}/messages`, { message: 'from the wall' }],
      ['GET', `/api/v1/rooms/${room.id}`],
      ['GET', '/api/v1/rooms'],
      ['PATCH', `/api/v1/rooms/${room.id}`, { name: 'renamed' }],
      ['DELETE', `/api/v1/rooms/${room.id}`],
      ['GET', linksPath(room.id)],
      ['POST', linksPath(room.id), { label: 'another' }],
      ['POST', `${linksPath(room.id)}/${link.id}/rotate`],
      ['DELETE', `${linksPath(room.id)}/${link.id}`],
      ['GET', '/api/v1/webhooks'],
      ['GET', '/api/v1/tokens'],
      ['POST', '/api/v1/tokens', { name: 'escalate', permissions: ['chat:admin'] }],
      ['GET', '/api/v2/analytics/settings/servicelevel'],
    ];
    for (const [method, path, json] of elsewhere) {
      const res = await send(method, path, { token: s, json });
      expectError(res, 401, 'bad.credentials');
      expect(res.body.message, `${method} ${path}`).toMatch(/viewer link/);
    }
    expect((await send('GET', `/api/v1/rooms/${room.id}`)).body.name).toBe(room.name);
    expect(await linkCount(room.id)).toBe(1);
    expect((await history(room.id, s)).body.entities).toEqual([]);
  });

  it('a made-up viewer secret gets the revoked-or-replaced answer', async () => {
    const room = await createRoom();
    expectGone(await ticket(room.id, `sbv_${crypto.randomUUID()}`));
  });
});

describe('rotating a viewer link', () => {
  it('gives a new secret and URL; the old one is refused at once, its tickets void and its sockets closed (4401)', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const link = await createLink(roomId);
    const unused = await ticketOk(roomId, link.secret);
    const watching = await Viewer.open(roomId, { token: null, query: `?ticket=${await ticketOk(roomId, link.secret)}` });
    await watching.ready();

    const res = await send('POST', `${linksPath(roomId)}/${link.id}/rotate`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: link.id, roomId, label: link.label, createdAt: link.createdAt });
    expect(res.body.secret).toMatch(/^sbv_/);
    expect(res.body.secret).not.toBe(link.secret);
    expect(res.body.url).toBe(`http://switchboard.test/rooms/${roomId}#view=${res.body.secret}`);
    expect(Date.parse(res.body.rotatedAt)).not.toBeNaN();

    await waitUntil(() => watching.closed !== undefined, 'the old secret’s socket closed');
    expect(watching.closed!.code).toBe(PROTOCOL.close.revoked);
    expectGone(await ticket(roomId, link.secret));
    expectGone(await history(roomId, link.secret));
    expect((await Viewer.request(roomId, { token: link.secret })).status).toBe(401);
    expectError(await upgradeWithTicket(roomId, unused), 401, 'bad.credentials');

    const fresh = await Viewer.open(roomId, { token: null, query: `?ticket=${await ticketOk(roomId, res.body.secret)}` });
    await fresh.ready();
    await postOk(hook, 'after the rotation');
    await fresh.untilSeq(1);
    fresh.close();
  });

  it('answers 404 for an unknown link, another room’s link and a malformed id; nothing changes', async () => {
    const [room, other] = await Promise.all([createRoom(), createRoom()]);
    const link = await createLink(room.id);
    expectError(await send('POST', `${linksPath(room.id)}/${crypto.randomUUID()}/rotate`), 404, 'not.found');
    expectError(await send('POST', `${linksPath(other.id)}/${link.id}/rotate`), 404, 'not.found');
    expectError(await send('POST', `${linksPath(room.id)}/not-a-uuid/rotate`), 404, 'not.found');
    expect((await ticket(room.id, link.secret)).status).toBe(201);
  });
});

describe('revoking a viewer link', () => {
  it('deletes it: refused at once with the revoked answer, sockets closed (4401), gone from the list; again: 404', async () => {
    const room = await createRoom();
    const link = await createLink(room.id);
    const kept = await createLink(room.id, 'kept');
    const watching = await Viewer.open(room.id, { token: link.secret });
    const bystander = await Viewer.open(room.id, { token: kept.secret });
    await Promise.all([watching.ready(), bystander.ready()]);

    const res = await send('DELETE', `${linksPath(room.id)}/${link.id}`);
    expect(res.status).toBe(204);
    await waitUntil(() => watching.closed !== undefined, 'the revoked link’s socket closed');
    expect(watching.closed!.code).toBe(PROTOCOL.close.revoked);
    expect(bystander.closed).toBeUndefined();
    expectGone(await ticket(room.id, link.secret));
    expectGone(await history(room.id, link.secret));
    expect((await send('GET', linksPath(room.id))).body.entities.map((l: { id: string }) => l.id)).toEqual([kept.id]);
    expectError(await send('DELETE', `${linksPath(room.id)}/${link.id}`), 404, 'not.found');
    bystander.close();
  });

  it('deleting the room deletes its links', async () => {
    const room = await createRoom();
    const link = await createLink(room.id);
    expect((await send('DELETE', `/api/v1/rooms/${room.id}`)).status).toBe(204);
    expect(await linkCount(room.id)).toBe(0);
    expectGone(await ticket(room.id, link.secret));
    expectError(await send('GET', linksPath(room.id)), 404, 'not.found');
  });
});

describe('bad requests store nothing', () => {
  it('answers 400 naming the field for a missing, blank, too long or unknown field, 415 for another body type', async () => {
    const room = await createRoom();
    expectError(await send('POST', linksPath(room.id), { json: {} }), 400, 'invalid.value', 'label');
    expectError(await send('POST', linksPath(room.id), { json: { label: '   ' } }), 400, 'invalid.value', 'label');
    expectError(
      await send('POST', linksPath(room.id), { json: { label: 'x'.repeat(CHAT_LIMITS.viewerLinkLabelChars + 1) } }),
      400,
      'invalid.value',
      'label',
    );
    expectError(
      await send('POST', linksPath(room.id), { json: { label: 'ok', permissions: ['chat:admin'] } }),
      400,
      'invalid.value',
      'permissions',
    );
    expectError(await send('POST', linksPath(room.id), { json: { label: 42 } }), 400, 'invalid.value', 'label');
    expectError(
      await send('POST', linksPath(room.id), { body: 'label=x', headers: { 'Content-Type': 'text/plain' } }),
      415,
      'unsupported.media.type',
    );
    expectError(
      await send('POST', linksPath(room.id), { body: '{"label":', headers: { 'Content-Type': 'application/json' } }),
      400,
      'bad.request',
    );
    expect(await linkCount(room.id)).toBe(0);
  });

  it('answers 404 for an unknown or malformed room, 401 without a token and 403 without chat:admin', async () => {
    const room = await createRoom();
    expectError(await send('POST', linksPath(crypto.randomUUID()), { json: { label: 'x' } }), 404, 'not.found');
    expectError(await send('GET', linksPath(crypto.randomUUID())), 404, 'not.found');
    expectError(await send('POST', linksPath('nope'), { json: { label: 'x' } }), 404, 'not.found');
    expectError(await send('POST', linksPath(room.id), { token: null, json: { label: 'x' } }), 401, 'authentication.required');
    const reader = await createToken(['chat:read']);
    expectError(await send('POST', linksPath(room.id), { token: reader.token, json: { label: 'x' } }), 403, 'missing.permissions');
    expectError(await send('GET', linksPath(room.id), { token: reader.token }), 403, 'missing.permissions');
    const link = await createLink(room.id);
    expectError(await send('DELETE', `${linksPath(room.id)}/${link.id}`, { token: reader.token }), 403, 'missing.permissions');
    expect(await linkCount(room.id)).toBe(1);
  });

  it(`answers 409 to link ${CHAT_LIMITS.viewerLinksPerRoom + 1} of a room, also when asked all at once`, async () => {
    const room = await createRoom();
    const answers = await Promise.all(
      Array.from({ length: CHAT_LIMITS.viewerLinksPerRoom + 5 }, (_, i) =>
        send('POST', linksPath(room.id), { json: { label: `screen ${i}` } }),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(CHAT_LIMITS.viewerLinksPerRoom);
    for (const refused of answers.filter((r) => r.status !== 201)) expectError(refused, 409, 'conflict');
    expect(await linkCount(room.id)).toBe(CHAT_LIMITS.viewerLinksPerRoom);
    const other = await createRoom();
    await createLink(other.id);
  });
});
