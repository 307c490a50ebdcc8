/**
 * Ids and secrets: webhook ids and webhook posting secrets (the last segment of a webhook's URL) are
 * UUIDv4s taken from crypto.randomUUID(), unrelated to each other; and no path that compares a token,
 * a ticket or a posting secret can answer differently for a near miss (a prefix, one character more,
 * less or changed). Timing cannot be measured meaningfully inside workerd, so what is tested is
 * the code path: secrets are hashed before any comparison, so the comparison always runs over two
 * 32-byte digests with crypto.subtle.timingSafeEqual, and lookups go by SHA-256, never by the secret.
 */
import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { secretsEqual } from '../../src/http/secrets';
import { ADMIN_TOKEN } from '../helpers';
import { call, callRaw } from './support/client';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.restoreAllMocks();
});

async function room(): Promise<string> {
  return (await call('POST', '/api/v1/rooms', { json: { name: 'secrets' } })).body.id;
}

/** Near misses of a secret: every proper prefix length class, one more, one changed at each end, case. */
function nearMisses(secret: string): string[] {
  const flip = (c: string) => (c === 'a' ? 'b' : 'a');
  return [
    secret.slice(0, 1),
    secret.slice(0, Math.floor(secret.length / 2)),
    secret.slice(0, -1),
    `${secret}a`,
    `${secret.slice(0, -1)}${flip(secret.at(-1)!)}`,
    `${flip(secret[0]!)}${secret.slice(1)}`,
    secret.toUpperCase() === secret ? secret.toLowerCase() : secret.toUpperCase(),
    `${secret} `,
  ].filter((s) => s !== secret);
}

/** The posting secret: the last segment of the webhook's URL. */
function secretOf(hook: { url: string }): string {
  return hook.url.split('/').pop()!;
}

describe('webhook ids and posting secrets', () => {
  it('are fresh UUIDv4s from crypto.randomUUID(): id and secret on create, a new secret on rotate', async () => {
    const roomId = await room();
    const spy = vi.spyOn(crypto, 'randomUUID');
    const created = await call('POST', '/api/v1/webhooks', { json: { name: 'uuid', kind: 'generic', roomId } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(UUID_V4);
    expect(secretOf(created.body)).toMatch(UUID_V4);
    expect(secretOf(created.body)).not.toBe(created.body.id);
    expect(spy.mock.results.map((r) => r.value)).toContain(created.body.id);
    expect(spy.mock.results.map((r) => r.value)).toContain(secretOf(created.body));

    spy.mockClear();
    const rotated = await call('POST', `/api/v1/webhooks/${created.body.id}/rotate`);
    expect(rotated.body.id).toBe(created.body.id);
    expect(secretOf(rotated.body)).toMatch(UUID_V4);
    expect(secretOf(rotated.body)).not.toBe(secretOf(created.body));
    expect(spy.mock.results.map((r) => r.value)).toContain(secretOf(rotated.body));
  });

  it('never repeat and vary in every random position over 64 webhooks', async () => {
    const roomId = await room();
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) {
      const hook = (await call('POST', '/api/v1/webhooks', { json: { name: `u${i}`, kind: 'generic', roomId } })).body;
      ids.push(hook.id, secretOf(hook));
    }
    expect(new Set(ids).size).toBe(64);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    // Each of the 30 fully random hex positions (not the version nibble, not the variant) takes several values.
    const hex = ids.map((id) => id.replace(/-/g, ''));
    for (let pos = 0; pos < 32; pos++) {
      if (pos === 12 || pos === 16) continue;
      expect(new Set(hex.map((h) => h[pos])).size, `hex position ${pos}`).toBeGreaterThan(4);
    }
  });

  it('answer the same 404 for every near miss of a live secret, and for the id itself; the secret keeps working', async () => {
    const roomId = await room();
    const hook = (
      await call('POST', '/api/v1/webhooks', {
        json: { name: 'near', kind: 'generic', roomId, rateLimit: { burst: 1000, perSecond: 1000 } },
      })
    ).body;
    const answers = [];
    for (const miss of [...nearMisses(secretOf(hook)), hook.id]) {
      const res = await call('POST', `/webhooks/api/v1/webhook/${encodeURIComponent(miss)}`, {
        token: null,
        json: { message: 'near miss' },
      });
      expect(res.status, miss).toBe(404);
      answers.push({ ...res.body, contextId: undefined });
    }
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect((await call('POST', `/webhooks/api/v1/webhook/${secretOf(hook)}`, { token: null, json: { message: 'hit' } })).status).toBe(200);
    const stored = (await call('GET', `/api/v1/rooms/${roomId}/messages`)).body.entities.map((m: { markdown: string }) => m.markdown);
    expect(stored).toEqual(['hit']);
  });

  it('are looked up by the SHA-256 of the secret, never by the secret itself, on the public post', async () => {
    const roomId = await room();
    const hook = (await call('POST', '/api/v1/webhooks', { json: { name: 'hashed', kind: 'generic', roomId } })).body;
    const digest = vi.spyOn(crypto.subtle, 'digest');
    const prepare = vi.spyOn(env.DB, 'prepare');
    expect((await call('POST', `/webhooks/api/v1/webhook/${secretOf(hook)}`, { token: null, json: { message: 'x' } })).status).toBe(200);
    const hashed = await Promise.all(digest.mock.calls.map(async ([, data]) => new TextDecoder().decode(data as ArrayBuffer)));
    expect(hashed).toContain(secretOf(hook));
    // No statement the post prepares compares the raw secret (the gate loads the row by its public id).
    const sql = prepare.mock.calls.map(([text]) => text);
    expect(sql.some((s) => /post_secret_hash/.test(s))).toBe(true);
    expect(sql.filter((s) => /"webhooks"\."post_secret" =/.test(s))).toEqual([]);
  });
});

describe('token, ticket and admin-token comparisons', () => {
  it('compare two 32-byte SHA-256 digests with timingSafeEqual, whatever the lengths', async () => {
    const safe = vi.spyOn(crypto.subtle, 'timingSafeEqual');
    for (const [a, b] of [
      ['short', 'a much longer secret than the other one'],
      ['same-length-1', 'same-length-2'],
      ['', 'x'],
      ['identical', 'identical'],
    ] as const) {
      await secretsEqual(a, b);
    }
    expect(safe).toHaveBeenCalledTimes(4);
    for (const [x, y] of safe.mock.calls) {
      expect((x as ArrayBuffer).byteLength).toBe(32);
      expect((y as ArrayBuffer).byteLength).toBe(32);
    }
    expect(await secretsEqual('identical', 'identical')).toBe(true);
    for (const miss of nearMisses('identical')) expect(await secretsEqual(miss, 'identical')).toBe(false);
  });

  it('checks the admin token through that comparison on every request, and refuses every near miss of it', async () => {
    const safe = vi.spyOn(crypto.subtle, 'timingSafeEqual');
    for (const miss of nearMisses(ADMIN_TOKEN)) {
      const res = await call('GET', '/api/v1/tokens', { token: null, headers: { Authorization: `Bearer ${miss}` } });
      expect(res.status, miss).toBe(miss.trim() === ADMIN_TOKEN ? 200 : 401);
    }
    expect(safe.mock.calls.length).toBeGreaterThanOrEqual(nearMisses(ADMIN_TOKEN).length);
  });

  it('refuses every near miss of an issued token with bad.credentials and finds tokens only by their hash', async () => {
    const { token } = (await call('POST', '/api/v1/tokens', { json: { name: 'near', permissions: ['tokens:manage'] } })).body;
    const prepare = vi.spyOn(env.DB, 'prepare');
    for (const miss of nearMisses(token)) {
      const res = await call('GET', '/api/v1/tokens', { token: null, headers: { Authorization: `Bearer ${miss}` } });
      // A trailing blank is not part of the token (the header is trimmed), so that one is the token itself.
      if (miss.trim() === token) expect(res.status).toBe(200);
      else expect([res.status, res.body.code], miss).toEqual([401, 'bad.credentials']);
    }
    expect((await call('GET', '/api/v1/tokens', { token })).status).toBe(200);
    const lookups = prepare.mock.calls.map(([sql]) => sql).filter((sql) => /from "tokens"/i.test(sql) && /where/i.test(sql));
    expect(lookups.length).toBeGreaterThan(0);
    for (const sql of lookups.filter((s) => !/order by/i.test(s))) expect(sql).toMatch(/"token_hash" = \?/);
    for (const [sql] of prepare.mock.calls) expect(sql).not.toContain(token);
  });

  it('refuses every near miss of a WebSocket ticket without using the ticket up', async () => {
    const roomId = await room();
    const { ticket } = (await call('POST', `/api/v1/rooms/${roomId}/ws-ticket`)).body;
    for (const miss of nearMisses(ticket)) {
      const res = await call('GET', `/api/v1/rooms/${roomId}/ws?ticket=${encodeURIComponent(miss)}`, {
        token: null,
        headers: { Upgrade: 'websocket' },
      });
      // Query strings are not trimmed: a trailing blank is a different ticket.
      expect([res.status, res.body.code], miss).toEqual([401, 'bad.credentials']);
    }
    const res = await callRaw('GET', `/api/v1/rooms/${roomId}/ws?ticket=${encodeURIComponent(ticket)}`, {
      token: null,
      headers: { Upgrade: 'websocket' },
    });
    expect(res.status).toBe(101);
    res.webSocket!.accept();
    res.webSocket!.close(1000, 'done');
  });
});
