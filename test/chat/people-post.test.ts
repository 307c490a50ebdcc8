import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { PERSON_RATE_LIMIT } from '../../src/chat/limits';
import { ADMIN_TOKEN, createToken, expectError, send } from '../helpers';
import { createRoom, history, postOk, roomWithWebhook, unique, Viewer, waitUntil } from './helpers';

/**
 * A group chat (issue 25, item 9): a person with chat:write posts into a room as themselves (their
 * token's name), with the same rendering, order, durability and idempotency as a webhook's post, and
 * edits and deletes their own messages. Rate-limited per token.
 */

function say(roomId: string, token: string, json: unknown, headers: Record<string, string> = {}) {
  return send('POST', `/api/v1/rooms/${roomId}/messages`, { token, json, headers });
}

describe('people posting into a room (chat:write)', () => {
  it("posts as the token's name, rendered, in seq order with webhook posts, live and in history", async () => {
    const { roomId, hook } = await roomWithWebhook();
    const alice = await createToken(['chat:write', 'chat:read'], 'Alice');
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    await postOk(hook, 'from CI');
    const res = await say(roomId, alice.token, { message: 'on it, **looking** now', level: 'warning' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({ roomId, messageId: expect.any(String), seq: 2 });
    await viewer.untilSeq(2);
    expect(viewer.messages[1]).toMatchObject({
      seq: 2,
      webhookId: '',
      personId: alice.id,
      sender: { name: 'Alice', iconUrl: null },
      markdown: 'on it, **looking** now',
      html: '<p>on it, <strong>looking</strong> now</p>\n',
      level: 'warning',
    });
    const h = await history(roomId);
    expect(h.body.entities[1]).toMatchObject({ seq: 2, personId: alice.id, sender: { name: 'Alice', iconUrl: null }, webhookId: '' });
    expect(h.body.entities[0]).toMatchObject({ personId: null });
    const row = await env.DB.prepare('SELECT webhook_id, person_id, sender_name FROM messages WHERE id = ?')
      .bind(res.body.messageId)
      .first();
    expect(row).toEqual({ webhook_id: '', person_id: alice.id, sender_name: 'Alice' });
    viewer.close();
  });

  it('names the admin token "admin" and an OAuth client by its name', async () => {
    const room = await createRoom();
    const admin = await say(room.id, ADMIN_TOKEN, { message: 'hello' });
    expect(admin.status).toBe(201);
    const client = await send('POST', '/api/v2/oauth/clients', {
      json: { name: 'Wallboard bot', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['chat:write'] },
    });
    expect(client.status, JSON.stringify(client.body)).toBe(201);
    const grant = await send('POST', '/oauth/token', {
      token: null,
      body: 'grant_type=client_credentials',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${btoa(`${client.body.id}:${client.body.secret}`)}`,
      },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(200);
    expect((await say(room.id, grant.body.access_token, { message: 'beep' })).status).toBe(201);
    const h = await history(room.id);
    expect(h.body.entities.map((m: { sender: { name: string }; personId: string }) => [m.sender.name, m.personId])).toEqual([
      ['admin', 'admin'],
      ['Wallboard bot', client.body.id],
    ]);
  });

  it('needs chat:write (403 naming it), answers 404 for an unknown room and 400 for a bad body, storing nothing', async () => {
    const room = await createRoom();
    const reader = await createToken(['chat:read'], 'Reader');
    const writer = await createToken(['chat:write'], 'Writer');
    expectError(await say(room.id, reader.token, { message: 'x' }), 403, 'missing.permissions', 'chat:write');
    expectError(await say(crypto.randomUUID(), writer.token, { message: 'x' }), 404, 'not.found');
    expectError(await say(room.id, writer.token, { message: '  ' }), 400, 'invalid.value', 'message');
    expectError(await say(room.id, writer.token, { message: 'x', level: 'p1' }), 400, 'invalid.value', 'level');
    expectError(await say(room.id, writer.token, { message: 'x'.repeat(40_001) }), 413, 'payload.too.large', 'message');
    expectError(
      await send('POST', `/api/v1/rooms/${room.id}/messages`, {
        token: writer.token,
        body: 'x',
        headers: { 'Content-Type': 'text/plain' },
      }),
      415,
      'unsupported.media.type',
    );
    expect((await history(room.id)).body.entities).toEqual([]);
  });

  it('is idempotent with an Idempotency-Key', async () => {
    const room = await createRoom();
    const writer = await createToken(['chat:write'], 'Writer');
    const key = unique('say');
    const first = await say(room.id, writer.token, { message: 'once' }, { 'Idempotency-Key': key });
    const again = await say(room.id, writer.token, { message: 'once' }, { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expectError(await say(room.id, writer.token, { message: 'twice' }, { 'Idempotency-Key': key }), 409, 'conflict');
    expect((await history(room.id)).body.entities).toHaveLength(1);
  });

  it('is rate-limited per token (429 with Retry-After), other tokens unaffected', async () => {
    const room = await createRoom();
    const fast = await createToken(['chat:write'], 'Fast');
    const other = await createToken(['chat:write'], 'Other');
    // The bucket refills perSecond while the burst is sent, so on a slow machine a few more than `burst`
    // get through: count the accepted posts against the time they took, not a fixed number.
    const started = Date.now();
    let accepted = 0;
    let limited: Awaited<ReturnType<typeof say>> | undefined;
    while (!limited && accepted <= PERSON_RATE_LIMIT.burst * 4) {
      const answer = await say(room.id, fast.token, { message: `m${accepted}` });
      if (answer.status === 201) accepted++;
      else limited = answer;
    }
    const refilled = Math.ceil(((Date.now() - started) / 1000) * PERSON_RATE_LIMIT.perSecond);
    if (!limited) throw new Error(`no 429 after ${accepted} posts`);
    expectError(limited, 429, 'too.many.requests');
    expect(Number(limited.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    expect(accepted).toBeGreaterThanOrEqual(PERSON_RATE_LIMIT.burst);
    expect(accepted).toBeLessThanOrEqual(PERSON_RATE_LIMIT.burst + refilled);
    expect((await say(room.id, other.token, { message: 'me' })).status).toBe(201);
    expect((await history(room.id)).body.entities).toHaveLength(accepted + 1);
  });
});

describe('people editing and deleting their own messages', () => {
  it('edits and deletes in place with update frames; others (people, webhooks) get 404', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const alice = await createToken(['chat:write'], 'Alice');
    const bob = await createToken(['chat:write'], 'Bob');
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    const { messageId, seq } = (await say(roomId, alice.token, { message: 'typo' })).body;
    const path = `/api/v1/rooms/${roomId}/messages/${messageId}`;

    expectError(await send('PATCH', path, { token: bob.token, json: { message: 'mine now' } }), 404, 'not.found');
    expectError(await send('DELETE', path, { token: bob.token }), 404, 'not.found');
    expectError(await send('PATCH', path, { token: ADMIN_TOKEN, json: { message: 'admin' } }), 404, 'not.found');
    expectError(
      await send('PATCH', `/webhooks/api/v1/webhook/${new URL(hook.url).pathname.split('/').pop()}/messages/${messageId}`, {
        token: null,
        json: { message: 'hook' },
      }),
      404,
      'not.found',
    );

    const edited = await send('PATCH', path, { token: alice.token, json: { message: 'fixed' } });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.message).toMatchObject({ id: messageId, seq, markdown: 'fixed', editedAt: expect.any(String), personId: alice.id });
    const deleted = await send('DELETE', path, { token: alice.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body.message).toMatchObject({ seq, markdown: '', deletedAt: expect.any(String) });
    await waitUntil(() => viewer.updates.length === 2, 'two update frames');
    expect(viewer.updates.map((m) => [m.seq, m.markdown, m.deletedAt !== null])).toEqual([
      [seq, 'fixed', false],
      [seq, '', true],
    ]);
    expect(viewer.seqs()).toEqual([seq]);
    expect((await history(roomId)).body.entities).toEqual([expect.objectContaining({ seq, deletedAt: expect.any(String) })]);
    expectError(
      await send('PATCH', `/api/v1/rooms/${roomId}/messages/nope`, { token: alice.token, json: { message: 'x' } }),
      404,
      'not.found',
    );
    viewer.close();
  });
});
