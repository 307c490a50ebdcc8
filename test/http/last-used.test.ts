/**
 * `lastUsedAt` of API tokens and OAuth clients (src/http/last-used.ts): recorded after the answer
 * (waitUntil), at most once an hour per credential, and never at the cost of the request.
 */
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDb } from '../../src/db/client';
import { recordClientUse, recordTokenUse } from '../../src/http/last-used';
import worker from '../../src/index';
import { createRoom } from '../chat/helpers';
import { CHAT_LIMITS } from '../../src/chat/limits';
import { BASE, createToken, expectError, type Sent, send } from '../helpers';
import { basic, CLIENTS, createClient } from '../oauth/support';

const HOUR = 60 * 60_000;

/**
 * A request through the Worker's fetch handler, answered, and its work after the answer (waitUntil)
 * done: what it recorded can be read at once. Throws if that work failed (it never should: a failed
 * write is logged, not thrown).
 */
async function settled(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Sent> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(BASE + path, { method, headers, body }), env, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return {
    status: res.status,
    headers: res.headers,
    body: text && (res.headers.get('Content-Type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The client-credentials grant, as Genesys' SDK sends it. */
function grant(client: { id: string; secret: string }): Promise<Sent> {
  return settled(
    'POST',
    '/oauth/token',
    { Authorization: basic(client.id, client.secret), 'Content-Type': 'application/x-www-form-urlencoded' },
    'grant_type=client_credentials',
  );
}

/** A token's `lastUsedAt` as the API lists it (read with ADMIN_TOKEN, which has no row to record). */
async function tokenLastUsed(id: string): Promise<string | null> {
  const listed = await send('GET', '/api/v1/tokens');
  expect(listed.status).toBe(200);
  const token = (listed.body.entities as { id: string; lastUsedAt: string | null }[]).find((t) => t.id === id);
  expect(token, `token ${id} listed`).toBeDefined();
  return token!.lastUsedAt;
}

/** A client's `lastUsedAt` as the API shows it, one and listed (the two must agree). */
async function clientLastUsed(id: string): Promise<string | null> {
  const one = await send('GET', `${CLIENTS}/${id}`);
  expect(one.status).toBe(200);
  const listed = (await send('GET', CLIENTS)).body.entities.find((c: { id: string }) => c.id === id);
  expect(listed.lastUsedAt).toBe(one.body.lastUsedAt);
  return one.body.lastUsedAt;
}

/** Sets a stored last use directly in D1, as if written `agoMs` ago. */
async function storeLastUse(table: 'tokens' | 'oauth_clients' | 'viewer_links', id: string, agoMs: number): Promise<string> {
  const at = new Date(Date.now() - agoMs).toISOString();
  const updated = await env.DB.prepare(`UPDATE ${table} SET last_used_at = ?1 WHERE id = ?2`).bind(at, id).run();
  expect(updated.meta.changes).toBe(1);
  return at;
}

/** Runs `request` and expects it to record `lastUsedAt` at a time between just before and just after it. */
async function expectRecordedDuring(request: () => Promise<unknown>, read: () => Promise<string | null>): Promise<string> {
  const before = Date.now();
  await request();
  const after = Date.now();
  const recorded = await read();
  expect(recorded).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(Date.parse(recorded!)).toBeGreaterThanOrEqual(before);
  expect(Date.parse(recorded!)).toBeLessThanOrEqual(after);
  return recorded!;
}

/** Lets the clock move on, so a write made now would store another value than one made just before. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('an API token’s lastUsedAt', () => {
  it('is null until the token authenticates a request, then that request’s time; a second within the hour writes nothing', async () => {
    const created = await send('POST', '/api/v1/tokens', { json: { name: 'daily', permissions: ['tokens:manage'] } });
    expect(created.status).toBe(201);
    expect(created.body.lastUsedAt).toBeNull();
    const { id, token } = created.body as { id: string; token: string };
    expect(await tokenLastUsed(id)).toBeNull();

    const first = await expectRecordedDuring(
      async () => expect((await settled('GET', '/api/v1/tokens', bearer(token))).status).toBe(200),
      () => tokenLastUsed(id),
    );

    await tick();
    expect((await settled('GET', '/api/v1/tokens', bearer(token))).status).toBe(200);
    expect(await tokenLastUsed(id)).toBe(first);
  });

  it('keeps a last use younger than the hour and moves one older than the hour forward', async () => {
    const { id, token } = await createToken(['chat:read']);
    const recent = await storeLastUse('tokens', id, HOUR - 60_000);
    expect((await settled('GET', '/api/v1/rooms', bearer(token))).status).toBe(403);
    // A 403 is still a request the token authenticated: the lookup found it; this one was recent.
    expect(await tokenLastUsed(id)).toBe(recent);

    await storeLastUse('tokens', id, HOUR + 60_000);
    await expectRecordedDuring(
      async () => expect((await settled('GET', '/api/v1/rooms', bearer(token))).status).toBe(403),
      () => tokenLastUsed(id),
    );
  });

  it('is not recorded for a revoked token, which is refused as before', async () => {
    const { id, token } = await createToken(['tokens:manage']);
    expect((await send('DELETE', `/api/v1/tokens/${id}`)).status).toBe(204);
    const stale = await storeLastUse('tokens', id, 2 * HOUR);
    const refused = await settled('GET', '/api/v1/tokens', bearer(token));
    expectError(refused, 401, 'bad.credentials');
    expect(await tokenLastUsed(id)).toBe(stale);
  });
});

describe('an OAuth client’s lastUsedAt', () => {
  it('is null at creation, set when it gets an access token, and moved forward by a request with that token once older than the hour', async () => {
    const client = await createClient(['tokens:manage']);
    expect(client.lastUsedAt).toBeNull();
    expect(await clientLastUsed(client.id)).toBeNull();

    let accessToken = '';
    const granted = await expectRecordedDuring(
      async () => {
        const answer = await grant(client);
        expect(answer.status).toBe(200);
        accessToken = answer.body.access_token;
      },
      () => clientLastUsed(client.id),
    );

    // Within the hour: neither a request with its token nor another grant writes.
    await tick();
    expect((await settled('GET', '/api/v1/tokens', bearer(accessToken))).status).toBe(200);
    expect((await grant(client)).status).toBe(200);
    expect(await clientLastUsed(client.id)).toBe(granted);

    await storeLastUse('oauth_clients', client.id, HOUR + 60_000);
    await expectRecordedDuring(
      async () => expect((await settled('GET', '/api/v1/tokens', bearer(accessToken))).status).toBe(200),
      () => clientLastUsed(client.id),
    );
  });
});

describe('the guarded write', () => {
  it('changes a stored last use only when it is stale, so requests that read the same stale value together write it once', async () => {
    const db = createDb(env.DB);
    const { id } = await createToken(['chat:read']);
    const client = await createClient(['chat:read']);
    const now = Date.now();
    // Two requests that both read null: the first write wins, the second finds it fresh.
    await recordTokenUse(db, id, now);
    await recordTokenUse(db, id, now + 1000);
    await recordClientUse(db, client.id, now);
    await recordClientUse(db, client.id, now + 1000);
    expect(await tokenLastUsed(id)).toBe(new Date(now).toISOString());
    expect(await clientLastUsed(client.id)).toBe(new Date(now).toISOString());
    // An hour and a moment later it is stale, and the next write moves it.
    await recordTokenUse(db, id, now + HOUR + 1);
    await recordClientUse(db, client.id, now + HOUR + 1);
    expect(await tokenLastUsed(id)).toBe(new Date(now + HOUR + 1).toISOString());
    expect(await clientLastUsed(client.id)).toBe(new Date(now + HOUR + 1).toISOString());
  });
});

describe('a last use that cannot be written', () => {
  it('fails no request: the answer is as ever, the failure is logged, and the next use after the fault is recorded', async () => {
    const { id, token } = await createToken(['tokens:manage']);
    const client = await createClient(['tokens:manage']);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const triggers = [`fail_token_use_${id.slice(0, 8)}`, `fail_client_use_${client.id.slice(0, 8)}`];
    await env.DB.batch([
      env.DB.prepare(
        `CREATE TRIGGER ${triggers[0]} BEFORE UPDATE OF last_used_at ON tokens WHEN NEW.id = '${id}' BEGIN SELECT RAISE(ABORT, 'injected D1 failure'); END;`,
      ),
      env.DB.prepare(
        `CREATE TRIGGER ${triggers[1]} BEFORE UPDATE OF last_used_at ON oauth_clients WHEN NEW.id = '${client.id}' BEGIN SELECT RAISE(ABORT, 'injected D1 failure'); END;`,
      ),
    ]);
    let accessToken: string;
    try {
      // settled() waits for the work after the answer, and throws if it failed unhandled.
      const listed = await settled('GET', '/api/v1/tokens', bearer(token));
      expect(listed.status).toBe(200);
      expect(listed.body.entities.map((t: { id: string }) => t.id)).toContain(id);
      const granted = await grant(client);
      expect(granted.status).toBe(200);
      accessToken = granted.body.access_token;
      expect((await settled('GET', '/api/v1/tokens', bearer(accessToken))).status).toBe(200);

      expect(await tokenLastUsed(id)).toBeNull();
      expect(await clientLastUsed(client.id)).toBeNull();
      const messages = logged.mock.calls.map((call) => String(call[0]));
      expect(messages).toContain(`last use of API token ${id} not recorded`);
      expect(messages.filter((m) => m === `last use of OAuth client ${client.id} not recorded`)).toHaveLength(2);
    } finally {
      await env.DB.batch(triggers.map((t) => env.DB.prepare(`DROP TRIGGER IF EXISTS ${t}`)));
    }

    // Nothing was stored, so the next use is written.
    await expectRecordedDuring(
      () => settled('GET', '/api/v1/tokens', bearer(token)),
      () => tokenLastUsed(id),
    );
    await expectRecordedDuring(
      () => settled('GET', '/api/v1/tokens', bearer(accessToken)),
      () => clientLastUsed(client.id),
    );
  });
});

describe('a viewer link’s lastUsedAt', () => {
  /** The link's `lastUsedAt` as the room's list of links shows it. */
  async function linkLastUsed(roomId: string, id: string): Promise<string | null> {
    const listed = await send('GET', `/api/v1/rooms/${roomId}/viewer-links`);
    expect(listed.status).toBe(200);
    return (listed.body.entities as { id: string; lastUsedAt: string | null }[]).find((l) => l.id === id)!.lastUsedAt;
  }

  it('is written after the answer, at most once within its minute, and moved forward once older', async () => {
    const room = await createRoom();
    const created = await send('POST', `/api/v1/rooms/${room.id}/viewer-links`, { json: { label: 'Lobby TV' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };
    expect(await linkLastUsed(room.id, id)).toBeNull();

    const ticket = () => settled('POST', `/api/v1/rooms/${room.id}/ws-ticket`, bearer(secret));
    const first = await expectRecordedDuring(
      async () => expect((await ticket()).status).toBe(201),
      () => linkLastUsed(room.id, id),
    );
    await tick();
    expect((await ticket()).status).toBe(201);
    expect(await linkLastUsed(room.id, id)).toBe(first);

    await storeLastUse('viewer_links', id, CHAT_LIMITS.viewerLinkLastUsedMs + 1_000);
    await expectRecordedDuring(
      async () => expect((await ticket()).status).toBe(201),
      () => linkLastUsed(room.id, id),
    );

    // A write that fails does not fail the wall's ticket (it did when the write was awaited in the request).
    const trigger = `fail_link_use_${id.slice(0, 8)}`;
    await storeLastUse('viewer_links', id, CHAT_LIMITS.viewerLinkLastUsedMs + 1_000);
    await env.DB.prepare(
      `CREATE TRIGGER ${trigger} BEFORE UPDATE OF last_used_at ON viewer_links WHEN NEW.id = '${id}' BEGIN SELECT RAISE(ABORT, 'injected D1 failure'); END;`,
    ).run();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect((await ticket()).status).toBe(201);
      expect(logged.mock.calls.map((call) => call[0])).toContain(`last use of viewer link ${id} not recorded`);
    } finally {
      logged.mockRestore();
      await env.DB.prepare(`DROP TRIGGER IF EXISTS ${trigger}`).run();
    }
  });
});
