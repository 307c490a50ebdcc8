import { env } from 'cloudflare:test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { CLIENTS, createClient, expectOAuthError, login, QUERY, sha256Hex, basic, tokenRequest } from './support';

const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';

describe('OAuth clients API', () => {
  it('creates a client, shows its secret once and stores only the secret’s SHA-256', async () => {
    const created = await createClient(['analytics:conversationAggregate:view'], { description: 'lobby wallboard' });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'wallboard',
      description: 'lobby wallboard',
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['analytics:conversationAggregate:view'],
      accessTokenValiditySeconds: 86_400,
      state: 'active',
      dateCreated: expect.any(String),
      lastUsedAt: null,
      secret: expect.stringMatching(/^sbc_[A-Za-z0-9_-]{43}$/),
    });
    const row = await env.DB.prepare('SELECT * FROM oauth_clients WHERE id = ?').bind(created.id).first<Record<string, unknown>>();
    expect(row!.secret_hash).toBe(await sha256Hex(created.secret));
    expect(JSON.stringify(row)).not.toContain(created.secret);

    const listed = await send('GET', CLIENTS);
    expect(listed.status).toBe(200);
    const mine = listed.body.entities.find((c: { id: string }) => c.id === created.id);
    const { secret: _secret, ...withoutSecret } = created;
    expect(mine).toEqual(withoutSecret);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);

    const one = await send('GET', `${CLIENTS}/${created.id}`);
    expect(one.body).toEqual(withoutSecret);
  });

  it('takes accessTokenValiditySeconds within Genesys’ 300..172800 and refuses one past each edge', async () => {
    expect((await createClient(['chat:read'], { accessTokenValiditySeconds: 300 })).accessTokenValiditySeconds).toBe(300);
    expect((await createClient(['chat:read'], { accessTokenValiditySeconds: 172_800 })).accessTokenValiditySeconds).toBe(172_800);
    for (const seconds of [299, 172_801, 3600.5, '3600']) {
      const res = await send('POST', CLIENTS, {
        json: { name: 'x', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['chat:read'], accessTokenValiditySeconds: seconds },
      });
      expectError(res, 400, 'invalid.value', 'accessTokenValiditySeconds');
    }
  });

  it('refuses other grant types, Genesys fields it does not honour and bad permissions, naming the field', async () => {
    const base = { name: 'x', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['chat:read'] };
    expectError(
      await send('POST', CLIENTS, { json: { ...base, authorizedGrantType: 'CODE' } }),
      400,
      'invalid.value',
      'authorizedGrantType',
    );
    expectError(
      await send('POST', CLIENTS, { json: { name: 'x', permissions: ['chat:read'] } }),
      400,
      'invalid.value',
      'authorizedGrantType',
    );
    expectError(await send('POST', CLIENTS, { json: { ...base, roleIds: ['r1'] } }), 400, 'invalid.value');
    const roles = await send('POST', CLIENTS, { json: { ...base, roleIds: ['r1'] } });
    expect(JSON.stringify(roles.body)).toContain('roleIds');
    expectError(await send('POST', CLIENTS, { json: { ...base, permissions: [] } }), 400, 'invalid.value', 'permissions');
    expectError(
      await send('POST', CLIENTS, { json: { ...base, permissions: ['chat:read', 'root'] } }),
      400,
      'invalid.value',
      'permissions[1]',
    );
    expectError(await send('POST', CLIENTS, { json: { ...base, name: '  ' } }), 400, 'invalid.value', 'name');
    expectError(await send('POST', CLIENTS, { json: { ...base, name: 'n'.repeat(101) } }), 400, 'invalid.value', 'name');
    expectError(await send('POST', CLIENTS, { json: { ...base, description: 'd'.repeat(501) } }), 400, 'invalid.value', 'description');
    expectError(
      await send('POST', CLIENTS, { body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported.media.type',
    );
    expectError(await send('POST', CLIENTS, { json: { ...base, name: 'x'.repeat(20_000) } }), 413, 'payload.too.large');
  });

  it('needs tokens:manage, and grants a client only permissions its creator holds', async () => {
    expectError(await send('GET', CLIENTS, { token: null }), 401, 'authentication.required');
    const viewer = await createToken(['analytics:conversationAggregate:view']);
    expectError(await send('GET', CLIENTS, { token: viewer.token }), 403, 'missing.permissions', 'tokens:manage');
    const manager = await createToken(['tokens:manage', 'chat:read']);
    const res = await send('POST', CLIENTS, {
      token: manager.token,
      json: { name: 'x', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['chat:read', 'chat:admin'] },
    });
    expectError(res, 403, 'missing.permissions', 'chat:admin');
    const ok = await send('POST', CLIENTS, {
      token: manager.token,
      json: { name: 'x', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['chat:read'] },
    });
    expect(ok.status).toBe(201);
  });

  it('answers 404 for an unknown client id on GET and DELETE', async () => {
    expectError(await send('GET', `${CLIENTS}/${crypto.randomUUID()}`), 404, 'not.found');
    expectError(await send('DELETE', `${CLIENTS}/${crypto.randomUUID()}`), 404, 'not.found');
  });

  it('revokes a client: its access tokens stop working at once, are deleted, and its secret gets no new one', async () => {
    const client = await createClient(['analytics:conversationAggregate:view']);
    const first = await login(client);
    const second = await login(client);
    const other = await createClient(['analytics:conversationAggregate:view']);
    const othersToken = await login(other);
    const query = (token: string) => send('POST', QUERY, { token, json: { interval: DAY, metrics: ['nOffered'] } });
    expect((await query(first)).status).toBe(200);

    const del = await send('DELETE', `${CLIENTS}/${client.id}`);
    expect(del.status).toBe(204);
    expectError(await query(first), 401, 'bad.credentials');
    expectError(await query(second), 401, 'bad.credentials');
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_access_tokens WHERE client_id = ?')
      .bind(client.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
    expectOAuthError(await tokenRequest({ authorization: basic(client.id, client.secret) }), 401, 'invalid_client');

    // Another client is untouched.
    expect((await query(othersToken)).status).toBe(200);

    const shown = await send('GET', `${CLIENTS}/${client.id}`);
    expect(shown.body).toMatchObject({ id: client.id, state: 'inactive', dateRevoked: expect.any(String) });
    // A repeat is harmless.
    expect((await send('DELETE', `${CLIENTS}/${client.id}`)).status).toBe(204);
  });

  it('answers any body with 201 or a 4xx ErrorBody, never a 500, and creates exactly what a 201 shows', async () => {
    // A valid body, then (two times in three) one field replaced by any JSON value or Genesys' roleIds added.
    const valid = fc.record({
      name: fc.string({ minLength: 1, maxLength: 100 }).filter((n) => n.trim().length > 0),
      description: fc.option(fc.string({ maxLength: 500 }), { nil: undefined }),
      authorizedGrantType: fc.constant('CLIENT-CREDENTIALS'),
      permissions: fc.array(fc.constantFrom('chat:read', 'chat:admin', 'tokens:manage', 'analytics:conversation:ingest'), {
        minLength: 1,
        maxLength: 12,
      }),
      accessTokenValiditySeconds: fc.option(fc.integer({ min: 300, max: 172_800 }), { nil: undefined }),
    });
    const key = fc.constantFrom('name', 'description', 'authorizedGrantType', 'permissions', 'accessTokenValiditySeconds', 'roleIds');
    const body = fc.oneof(
      { weight: 1, arbitrary: valid.map((json) => ({ json: json as unknown, valid: true })) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(valid, key, fc.jsonValue({ maxDepth: 2 }))
          .map(([b, k, v]) => ({ json: { ...b, [k]: v } as unknown, valid: false })),
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((json) => ({ json: json as unknown, valid: false })) },
    );
    let created = 0;
    await fc.assert(
      fc.asyncProperty(body, async ({ json, valid }) => {
        const res = await send('POST', CLIENTS, { json });
        expect([201, 400, 413], JSON.stringify(res.body)).toContain(res.status);
        if (valid) expect(res.status, JSON.stringify(res.body)).toBe(201);
        if (res.status !== 201) {
          expectError(res, res.status, res.body.code);
          return;
        }
        created++;
        const sent = json as Record<string, unknown>;
        expect(res.body.name).toBe((sent.name as string).trim());
        expect(res.body.permissions).toEqual([...new Set(sent.permissions as string[])]);
        expect(res.body.accessTokenValiditySeconds).toBe(sent.accessTokenValiditySeconds ?? 86_400);
        const shown = await send('GET', `${CLIENTS}/${res.body.id}`);
        const { secret: _secret, ...withoutSecret } = res.body;
        expect(shown.body).toEqual(withoutSecret);
      }),
      { seed: 23, numRuns: 200 },
    );
    // The property checked both sides.
    expect(created).toBeGreaterThan(20);
  });
});
