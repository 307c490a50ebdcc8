import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { expectError, send, type Sent } from '../../helpers';
import { createRoom, history, webhookPath } from '../helpers';
import { BITBUCKET, GITHUB, JIRA_CASES } from './fixtures';

const SECRET = "It's a Secret to Everybody";

/** HMAC-SHA256 hex, straight from WebCrypto (independent of the code under test). */
async function sign(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body));
  return `sha256=${[...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

async function createHook(fields: Record<string, unknown>): Promise<Sent> {
  const room = await createRoom();
  return send('POST', '/api/v1/webhooks', {
    json: { name: 'signed', roomId: room.id, rateLimit: { burst: 1_000, perSecond: 1_000 }, ...fields },
  });
}

function post(id: string, body: string, headers: Record<string, string>, contentType = 'application/json'): Promise<Sent> {
  return send('POST', webhookPath(id), { token: null, body, headers: { 'Content-Type': contentType, ...headers } });
}

async function count(roomId: string): Promise<number> {
  return (await history(roomId)).body.entities.length;
}

describe('webhook secrets (chat:admin)', () => {
  it('takes a secret on a github webhook, answers hasSecret, and never returns the secret', async () => {
    const created = await createHook({ kind: 'github', secret: SECRET });
    expect(created.status).toBe(201);
    expect(created.body.hasSecret).toBe(true);
    expect(created.body).not.toHaveProperty('secret');
    const answers = [created, await send('GET', `/api/v1/webhooks/${created.body.id}`), await send('GET', '/api/v1/webhooks')];
    for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain('Secret to Everybody');
    expect(answers[1]!.body).toEqual(created.body);
    const row = await env.DB.prepare('SELECT secret FROM webhooks WHERE id = ?').bind(created.body.id).first<{ secret: string }>();
    expect(row!.secret).toBe(SECRET);
  });

  it('shows hasSecret only on kinds whose deliveries are signed', async () => {
    expect((await createHook({ kind: 'github' })).body.hasSecret).toBe(false);
    expect((await createHook({ kind: 'bitbucket', secret: 's' })).body.hasSecret).toBe(true);
    expect((await createHook({ kind: 'jira', secret: null })).body.hasSecret).toBe(false);
    for (const kind of ['generic', 'jenkins', 'salesforce']) expect((await createHook({ kind })).body).not.toHaveProperty('hasSecret');
  });

  it.each([
    ['on a kind whose deliveries are not signed', { kind: 'jenkins', secret: 's' }, 'body'],
    ['that is empty', { kind: 'github', secret: '' }, 'secret'],
    ['over 256 characters', { kind: 'github', secret: 's'.repeat(257) }, 'secret'],
    ['with a control character', { kind: 'github', secret: 'a\nb' }, 'secret'],
    ['that is not a string', { kind: 'github', secret: 42 }, 'secret'],
  ])('refuses a secret %s with 400 naming %s', async (_, fields, field) => {
    expectError(await createHook(fields), 400, 'invalid.value', field);
  });

  it('sets, clears and guards the secret by PATCH', async () => {
    const hook = (await createHook({ kind: 'github' })).body;
    const set = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { secret: 'new-secret' } });
    expect(set.body).toMatchObject({ hasSecret: true });
    expect(set.body).not.toHaveProperty('secret');
    expectError(await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { kind: 'jenkins' } }), 400, 'invalid.value', 'kind');
    const moved = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { kind: 'jenkins', secret: null } });
    expect(moved.status).toBe(200);
    expect(moved.body.kind).toBe('jenkins');
    expect(moved.body).not.toHaveProperty('hasSecret');
    expectError(await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { secret: 'x' } }), 400, 'invalid.value', 'secret');
    const back = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { kind: 'bitbucket' } });
    expect(back.body.hasSecret).toBe(false);
  });
});

describe('signed deliveries', () => {
  const push = GITHUB['push of two commits to a branch']!;
  const pushBody = JSON.stringify(push.body);

  it('accepts a GitHub delivery whose X-Hub-Signature-256 is the HMAC of its exact body', async () => {
    const hook = (await createHook({ kind: 'github', secret: SECRET })).body;
    const res = await post(hook.url, pushBody, { ...push.headers, 'X-Hub-Signature-256': await sign(SECRET, pushBody) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await history(hook.roomId)).body.entities[0].markdown).toBe(push.markdown);
  });

  it('answers a wrong or missing signature with 401 bad.signature, before reading the payload, and stores nothing', async () => {
    const hook = (await createHook({ kind: 'github', secret: SECRET })).body;
    const wrong = await post(hook.url, pushBody, { ...push.headers, 'X-Hub-Signature-256': await sign('another secret', pushBody) });
    expectError(wrong, 401, 'bad.signature', 'X-Hub-Signature-256');
    expect(wrong.body.message).toBe("X-Hub-Signature-256 does not match the body and this webhook's secret.");
    const missing = await post(hook.url, pushBody, push.headers);
    expectError(missing, 401, 'bad.signature', 'X-Hub-Signature-256');
    expect(missing.body.message).toBe('This webhook has a secret: send X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>.');
    // Signed over other bytes (the same JSON, re-serialised): refused.
    const reserialised = JSON.stringify(push.body, null, 1);
    expectError(
      await post(hook.url, reserialised, { ...push.headers, 'X-Hub-Signature-256': await sign(SECRET, pushBody) }),
      401,
      'bad.signature',
    );
    // GitHub's SHA-1 header alone does not do.
    expectError(await post(hook.url, pushBody, { ...push.headers, 'X-Hub-Signature': 'sha1=0123' }), 401, 'bad.signature');
    // A payload it would not recognise still gets 401 first.
    expectError(await post(hook.url, '{"x":1}', { 'X-Hub-Signature-256': await sign('nope', '{"x":1}') }), 401, 'bad.signature');
    expect(await count(hook.roomId)).toBe(0);
  });

  it('requires the signature for the generic body and for form-encoded deliveries too', async () => {
    const hook = (await createHook({ kind: 'github', secret: SECRET })).body;
    const generic = JSON.stringify({ message: 'hello' });
    expectError(await post(hook.url, generic, {}), 401, 'bad.signature');
    expect((await post(hook.url, generic, { 'X-Hub-Signature-256': await sign(SECRET, generic) })).status).toBe(200);
    const form = new URLSearchParams({ payload: pushBody }).toString();
    const type = 'application/x-www-form-urlencoded';
    expectError(
      await post(hook.url, form, { ...push.headers, 'X-Hub-Signature-256': await sign(SECRET, pushBody) }, type),
      401,
      'bad.signature',
    );
    expect((await post(hook.url, form, { ...push.headers, 'X-Hub-Signature-256': await sign(SECRET, form) }, type)).status).toBe(200);
    expect(await count(hook.roomId)).toBe(2);
  });

  it('accepts unsigned deliveries, and ignores any signature header, when no secret is set', async () => {
    const hook = (await createHook({ kind: 'github' })).body;
    expect((await post(hook.url, pushBody, push.headers)).status).toBe(200);
    expect((await post(hook.url, pushBody, { ...push.headers, 'X-Hub-Signature-256': 'sha256=00' })).status).toBe(200);
  });

  it('checks X-Hub-Signature for Bitbucket Cloud and Jira webhooks with a secret', async () => {
    for (const [kind, c] of [
      ['bitbucket', BITBUCKET['pull request merged']!],
      ['jira', JIRA_CASES['issue deleted']!],
    ] as const) {
      const hook = (await createHook({ kind, secret: 'bb-and-jira' })).body;
      const body = JSON.stringify(c.body);
      expectError(await post(hook.url, body, c.headers), 401, 'bad.signature', 'X-Hub-Signature');
      expectError(
        await post(hook.url, body, { ...c.headers, 'X-Hub-Signature-256': await sign('bb-and-jira', body) }),
        401,
        'bad.signature',
      );
      const ok = await post(hook.url, body, { ...c.headers, 'X-Hub-Signature': await sign('bb-and-jira', body) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect((await history(hook.roomId)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual([c.markdown]);
    }
  });
});
