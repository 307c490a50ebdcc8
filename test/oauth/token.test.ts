import { env } from 'cloudflare:test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectError, send } from '../helpers';
import { basic, createClient, expectOAuthError, login, QUERY, sha256Hex, tokenRequest } from './support';

const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';
const query = (token: string) => send('POST', QUERY, { token, json: { interval: DAY, metrics: ['nOffered'] } });

describe('POST /oauth/token, client-credentials grant', () => {
  it('answers what Genesys’ SDK sends (Basic id:secret, grant_type=client_credentials) with a bearer token for 86399 s', async () => {
    const client = await createClient(['analytics:conversationAggregate:view']);
    const before = Date.now();
    const res = await tokenRequest({ authorization: basic(client.id, client.secret) });
    const after = Date.now();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ access_token: expect.stringMatching(/^sba_[A-Za-z0-9_-]{43}$/), token_type: 'bearer', expires_in: 86_399 });
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    expect(res.headers.get('Pragma')).toBe('no-cache');

    // Only its SHA-256 is stored, with an expiry 86,400 s after its issue.
    const row = await env.DB.prepare('SELECT * FROM oauth_access_tokens WHERE client_id = ?')
      .bind(client.id)
      .first<{ token_hash: string; issued_at: number; expires_at: number }>();
    expect(row!.token_hash).toBe(await sha256Hex(res.body.access_token));
    expect(row!.issued_at).toBeGreaterThanOrEqual(before);
    expect(row!.issued_at).toBeLessThanOrEqual(after);
    expect(row!.expires_at - row!.issued_at).toBe(86_400_000);
  });

  it('takes the client id and secret from the form too, and a charset on the content type', async () => {
    const client = await createClient(['chat:read']);
    const res = await tokenRequest({
      body: `grant_type=client_credentials&client_id=${client.id}&client_secret=${client.secret}`,
      contentType: 'application/x-www-form-urlencoded; charset=UTF-8',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.token_type).toBe('bearer');
  });

  it('answers expires_in one second under the client’s accessTokenValiditySeconds', async () => {
    const client = await createClient(['chat:read'], { accessTokenValiditySeconds: 300 });
    const res = await tokenRequest({ authorization: basic(client.id, client.secret) });
    expect(res.body.expires_in).toBe(299);
  });

  it('issues a token that works as a bearer token with the client’s permissions and no others', async () => {
    const client = await createClient(['analytics:conversationAggregate:view']);
    const token = await login(client);
    const res = await query(token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ results: [] });
    expectError(await send('GET', '/api/v1/tokens', { token }), 403, 'missing.permissions', 'tokens:manage');
    // Not a prefix match: one character off is an unknown token.
    expectError(await query(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`), 401, 'bad.credentials');
    expectError(await query(`sba_${token.slice(4).split('').reverse().join('')}`), 401, 'bad.credentials');
  });

  it('stops accepting a token once it has expired', async () => {
    const client = await createClient(['analytics:conversationAggregate:view']);
    const token = await login(client);
    expect((await query(token)).status).toBe(200);
    await env.DB.prepare('UPDATE oauth_access_tokens SET expires_at = ? WHERE token_hash = ?')
      .bind(Date.now() - 1, await sha256Hex(token))
      .run();
    expectError(await query(token), 401, 'bad.credentials');
  });

  it('prunes a client’s expired tokens when it asks for another', async () => {
    const client = await createClient(['chat:read']);
    const old = await login(client);
    await env.DB.prepare('UPDATE oauth_access_tokens SET expires_at = ? WHERE token_hash = ?')
      .bind(Date.now() - 1, await sha256Hex(old))
      .run();
    const fresh = await login(client);
    const rows = await env.DB.prepare('SELECT token_hash FROM oauth_access_tokens WHERE client_id = ?')
      .bind(client.id)
      .all<{ token_hash: string }>();
    expect(rows.results.map((r) => r.token_hash)).toEqual([await sha256Hex(fresh)]);
  });

  it('keeps at most 50 live tokens per client: the 51st and later replace the oldest', async () => {
    const client = await createClient(['analytics:conversationAggregate:view']);
    const other = await createClient(['analytics:conversationAggregate:view']);
    const othersToken = await login(other);
    const issued: string[] = [];
    for (let i = 0; i < 53; i++) issued.push(await login(client));
    const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_access_tokens WHERE client_id = ?')
      .bind(client.id)
      .first<{ n: number }>();
    expect(count!.n).toBe(50);
    for (const token of issued.slice(0, 3)) expectError(await query(token), 401, 'bad.credentials');
    for (const token of [issued[3]!, issued[30]!, issued[52]!]) expect((await query(token)).status).toBe(200);
    // Another client's tokens do not count against this one.
    expect((await query(othersToken)).status).toBe(200);
  });
});

describe('POST /oauth/token errors, as RFC 6749 §5.2', () => {
  it('answers 401 invalid_client with WWW-Authenticate for a wrong secret, an unknown id or no credentials', async () => {
    const client = await createClient(['chat:read']);
    expectOAuthError(await tokenRequest({ authorization: basic(client.id, `${client.secret}x`) }), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({ authorization: basic(client.id, client.secret.slice(0, -1)) }), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({ authorization: basic(crypto.randomUUID(), client.secret) }), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({ authorization: basic(client.id, '') }), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({ authorization: basic('', '') }), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({}), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({ body: `grant_type=client_credentials&client_id=${client.id}` }), 401, 'invalid_client');
    // Malformed Basic credentials and other schemes.
    for (const authorization of ['Basic', 'Basic !!!', `Basic ${btoa('no-colon')}`, 'Basic /w==', `Bearer ${client.secret}`, 'Digest x']) {
      expectOAuthError(await tokenRequest({ authorization }), 401, 'invalid_client');
    }
    // Nothing was issued along the way.
    const n = await env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_access_tokens WHERE client_id = ?')
      .bind(client.id)
      .first<{ n: number }>();
    expect(n!.n).toBe(0);
  });

  it('answers 400 unsupported_grant_type for any other grant and invalid_request for a missing one', async () => {
    const client = await createClient(['chat:read']);
    const authorization = basic(client.id, client.secret);
    for (const grant of ['password', 'authorization_code', 'refresh_token', 'CLIENT_CREDENTIALS', 'client_credentials ']) {
      expectOAuthError(
        await tokenRequest({ authorization, body: `grant_type=${encodeURIComponent(grant)}` }),
        400,
        'unsupported_grant_type',
      );
    }
    expectOAuthError(await tokenRequest({ authorization, body: '' }), 400, 'invalid_request');
    expectOAuthError(await tokenRequest({ authorization, body: 'scope=x' }), 400, 'invalid_request');
  });

  it('answers 400 invalid_request for a repeated parameter, two authentications, a body that is not a form, or too large', async () => {
    const client = await createClient(['chat:read']);
    const authorization = basic(client.id, client.secret);
    expectOAuthError(
      await tokenRequest({ authorization, body: 'grant_type=client_credentials&grant_type=client_credentials' }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await tokenRequest({ authorization, body: `grant_type=client_credentials&client_id=${client.id}&client_secret=${client.secret}` }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await tokenRequest({ authorization, body: JSON.stringify({ grant_type: 'client_credentials' }), contentType: 'application/json' }),
      400,
      'invalid_request',
    );
    expectOAuthError(await tokenRequest({ authorization, contentType: null }), 400, 'invalid_request');
    expectOAuthError(
      await tokenRequest({ authorization, body: `grant_type=client_credentials&pad=${'x'.repeat(5000)}` }),
      400,
      'invalid_request',
    );
  });

  it('never answers anything but 200, 400 or 401 with an OAuth body, whatever the header and form', async () => {
    const client = await createClient(['chat:read']);
    const text = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.constantFrom(client.id, client.secret, 'client_credentials', '%', '%zz', '&', '=', ':'),
    );
    const form = fc
      .array(fc.tuple(fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'x'), text), { maxLength: 4 })
      .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    const authorization = fc.option(
      fc.oneof(
        fc.tuple(text, text).map(([id, secret]) => basic(id, secret)),
        text.map((t) => `Basic ${t}`),
        text,
      ),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(authorization, form, async (auth, body) => {
        const res = await tokenRequest({ authorization: auth, body });
        expect([200, 400, 401]).toContain(res.status);
        if (res.status === 200) expect(res.body.token_type).toBe('bearer');
        else expect(['invalid_request', 'invalid_client', 'unsupported_grant_type']).toContain(res.body.error);
      }),
      { seed: 23, numRuns: 150 },
    );
  });

  it('is a POST only: another method finds no route', async () => {
    const res = await send('GET', '/oauth/token', { token: null });
    expectError(res, 404, 'not.found');
  });
});
