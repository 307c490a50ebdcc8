import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

describe('bearer authentication', () => {
  it('requires a token on /api routes', async () => {
    expectError(await send('GET', '/api/v1/tokens', { token: null }), 401, 'authentication.required');
  });

  it('treats a non-Bearer Authorization header as no token', async () => {
    const res = await send('GET', '/api/v1/tokens', { token: null, headers: { Authorization: 'Basic dXNlcjpwYXNz' } });
    expectError(res, 401, 'authentication.required');
  });

  it('rejects an unknown token with bad.credentials', async () => {
    expectError(await send('GET', '/api/v1/tokens', { token: 'sbt_unknown' }), 401, 'bad.credentials');
  });

  it('answers 403 missing.permissions naming the permission the token lacks', async () => {
    const { token } = await createToken(['analytics:conversationAggregate:view']);
    const res = await send('GET', '/api/v1/tokens', { token });
    expectError(res, 403, 'missing.permissions', 'tokens:manage');
    expect(res.body.message).toContain('tokens:manage');
  });
});

describe('token management', () => {
  it('returns the token once and stores only its SHA-256', async () => {
    const created = await createToken(['tokens:manage'], 'ops');
    expect(created).toMatchObject({ name: 'ops', permissions: ['tokens:manage'] });
    expect(created.token).toMatch(/^sbt_[A-Za-z0-9_-]{43}$/);
    const row = await env.DB.prepare('SELECT * FROM tokens WHERE id = ?').bind(created.id).first<Record<string, string>>();
    expect(row!.token_hash).toBe(await sha256Hex(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token);

    const list = await send('GET', '/api/v1/tokens');
    const listed = list.body.entities.find((t: { id: string }) => t.id === created.id);
    expect(listed).toMatchObject({ id: created.id, name: 'ops' });
    expect(listed.token).toBeUndefined();
  });

  it('lets a created token act within its permissions, and not after it is revoked', async () => {
    const { id, token } = await createToken(['tokens:manage']);
    expect((await send('GET', '/api/v1/tokens', { token })).status).toBe(200);
    expect((await send('DELETE', `/api/v1/tokens/${id}`)).status).toBe(204);
    expectError(await send('GET', '/api/v1/tokens', { token }), 401, 'bad.credentials');
  });

  it('shows one token by id as the list shows it, revoked too, never its secret; an unknown id is 404', async () => {
    const created = await send('POST', '/api/v1/tokens', { json: { name: 'wallboard', permissions: ['chat:read'] } });
    expect(created.status).toBe(201);
    const { token: secret, ...shown } = created.body;
    const one = await send('GET', `/api/v1/tokens/${shown.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...shown, lastUsedAt: null });
    expect(JSON.stringify(one.body)).not.toContain(secret);
    expect((await send('GET', '/api/v1/tokens')).body.entities).toContainEqual(one.body);

    expect((await send('DELETE', `/api/v1/tokens/${shown.id}`)).status).toBe(204);
    const revoked = await send('GET', `/api/v1/tokens/${shown.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ...shown, lastUsedAt: null, revokedAt: expect.any(String) });
    expectError(await send('GET', `/api/v1/tokens/${crypto.randomUUID()}`), 404, 'not.found');
  });

  it('lets a token manager grant only the permissions it holds (no escalation through tokens:manage)', async () => {
    const { token: manager } = await createToken(['tokens:manage', 'chat:read']);
    const escalate = await send('POST', '/api/v1/tokens', {
      token: manager,
      json: { name: 'x', permissions: ['chat:read', 'chat:admin'] },
    });
    expectError(escalate, 403, 'missing.permissions', 'chat:admin');
    expect(escalate.body.message).toContain('chat:admin');
    expect(escalate.body.message).not.toContain('chat:read');
    const before = await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE name = 'x'").first<{ n: number }>();
    expect(before!.n).toBe(0);

    const within = await send('POST', '/api/v1/tokens', { token: manager, json: { name: 'y', permissions: ['chat:read'] } });
    expect(within.status, JSON.stringify(within.body)).toBe(201);
    expect(within.body.permissions).toEqual(['chat:read']);
    // ADMIN_TOKEN holds every permission, so it grants any of them.
    expect((await send('POST', '/api/v1/tokens', { json: { name: 'z', permissions: ['chat:admin', 'tokens:manage'] } })).status).toBe(201);
  });

  it('grants chat:write (people posting) like any permission, and only from a holder', async () => {
    const res = await send('POST', '/api/v1/tokens', { json: { name: 'Alice', permissions: ['chat:write', 'chat:read'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.permissions).toEqual(['chat:write', 'chat:read']);
    const { token: manager } = await createToken(['tokens:manage', 'chat:read']);
    expectError(
      await send('POST', '/api/v1/tokens', { token: manager, json: { name: 'x', permissions: ['chat:write'] } }),
      403,
      'missing.permissions',
      'chat:write',
    );
  });

  it('answers 404 for revoking an unknown token', async () => {
    expectError(await send('DELETE', '/api/v1/tokens/00000000-0000-4000-8000-000000000000'), 404, 'not.found');
  });
});
