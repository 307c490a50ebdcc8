import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { parseCorsOrigins } from '../../src/http/cors';
import { ADMIN_TOKEN, BASE, send } from '../helpers';

const WALL = 'https://wall.example.com';
const DEV = 'http://localhost:5173';
const QUERY = '/api/v2/analytics/conversations/aggregates/query';
const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';

/** The Worker's own fetch with CORS_ORIGINS set as a deployment would set it. */
async function fetchWith(corsOrigins: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(BASE + path, { method, headers, body }), { ...env, CORS_ORIGINS: corsOrigins } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const preflight = (corsOrigins: string, origin: string, path = QUERY, requestHeaders = 'authorization,content-type') =>
  fetchWith(corsOrigins, 'OPTIONS', path, {
    Origin: origin,
    'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': requestHeaders,
  });

/** Every header a browser reads to allow a cross-origin call. */
const ALLOW_HEADERS = [
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Methods',
  'Access-Control-Allow-Headers',
  'Access-Control-Allow-Credentials',
  'Access-Control-Expose-Headers',
  'Access-Control-Max-Age',
];
const noAllowHeaders = (res: { headers: Headers }) => ALLOW_HEADERS.filter((h) => res.headers.get(h) !== null);
const list = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase());

describe('CORS_ORIGINS, the allow-list', () => {
  it('keeps exact http(s) origins and refuses *, null, paths, trailing slashes and other schemes', () => {
    const parsed = parseCorsOrigins(
      ` ${WALL} ,${DEV},*,null,https://a.example/,https://a.example/path,HTTPS://Upper.example,ftp://f.example,,https://*.example.com, https://b.example:8443`,
    );
    expect([...parsed.allowed]).toEqual([WALL, DEV, 'https://b.example:8443']);
    expect(parsed.refused).toEqual([
      '*',
      'null',
      'https://a.example/',
      'https://a.example/path',
      'HTTPS://Upper.example',
      'ftp://f.example',
      'https://*.example.com',
    ]);
    expect([...parseCorsOrigins('').allowed]).toEqual([]);
    expect([...parseCorsOrigins(undefined).allowed]).toEqual([]);
  });

  it('is empty in wrangler.toml: no origin is allowed by default', async () => {
    expect(env.CORS_ORIGINS).toBe('');
    const res = await send('OPTIONS', QUERY, {
      token: null,
      headers: { Origin: WALL, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(noAllowHeaders(res)).toEqual([]);
    const get = await send('GET', '/api/v1/tokens', { headers: { Origin: WALL } });
    expect(get.status).toBe(200);
    expect(get.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });
});

describe('CORS preflight', () => {
  it('answers an allowed origin’s preflight with methods, headers and max-age, before and without authentication', async () => {
    const res = await preflight(`${DEV},${WALL}`, WALL);
    expect(res.status).toBe(204);
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe(WALL);
    expect(list(res.headers.get('Access-Control-Allow-Methods'))).toEqual(
      expect.arrayContaining(['get', 'post', 'put', 'patch', 'delete']),
    );
    expect(list(res.headers.get('Access-Control-Allow-Headers'))).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'inin-correlation-id']),
    );
    expect(res.headers.get('Access-Control-Max-Age')).toBe('600');
    expect(list(res.headers.get('Vary'))).toContain('origin');
    // Never credentials: the API authenticates with the Authorization header, not cookies.
    expect(res.headers.get('Access-Control-Allow-Credentials')).toBeNull();
    expect(await res.text()).toBe('');
  });

  it('gives a preflight from an origin not on the list no allow header, and does not authenticate it', async () => {
    for (const origin of [
      'https://evil.example',
      'http://wall.example.com',
      'https://wall.example.com.evil.example',
      'https://wall.example.com:443x',
      'null',
    ]) {
      const res = await preflight(WALL, origin);
      expect(res.status, origin).toBe(204);
      expect(noAllowHeaders(res), origin).toEqual([]);
      expect(list(res.headers.get('Vary'))).toContain('origin');
    }
  });

  it('never allows every origin, even when the setting says *', async () => {
    const res = await preflight('*', 'https://any.example');
    expect(noAllowHeaders(res)).toEqual([]);
    const mixed = await preflight(`*,${WALL}`, WALL);
    expect(mixed.headers.get('Access-Control-Allow-Origin')).toBe(WALL);
    expect((await preflight(`*,${WALL}`, 'https://any.example')).headers.get('Access-Control-Allow-Origin')).toBeNull();
  });
});

describe('CORS on answers', () => {
  it('lets an allowed origin read a success, with ININ-Correlation-Id and Retry-After exposed', async () => {
    const res = await fetchWith(
      WALL,
      'POST',
      QUERY,
      { Origin: WALL, Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      JSON.stringify({ interval: DAY, metrics: ['nOffered'] }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ results: [] });
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe(WALL);
    expect(list(res.headers.get('Access-Control-Expose-Headers'))).toEqual(expect.arrayContaining(['inin-correlation-id', 'retry-after']));
    expect(list(res.headers.get('Vary'))).toContain('origin');
    expect(res.headers.get('ININ-Correlation-Id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('Access-Control-Allow-Credentials')).toBeNull();
  });

  it('puts the CORS headers on error answers too: 401, 403, 400 and an unknown /api path', async () => {
    const viewer = await send('POST', '/api/v1/tokens', { json: { name: 'v', permissions: ['chat:read'] } });
    const cases: [number, string, Record<string, string>, string | undefined, string][] = [
      [401, 'GET', {}, undefined, '/api/v1/tokens'],
      [403, 'GET', { Authorization: `Bearer ${viewer.body.token}` }, undefined, '/api/v1/tokens'],
      [
        400,
        'POST',
        { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        JSON.stringify({ interval: DAY, granularity: 'PT7H', metrics: ['nOffered'] }),
        QUERY,
      ],
      [404, 'GET', { Authorization: `Bearer ${ADMIN_TOKEN}` }, undefined, '/api/v2/no/such/thing'],
    ];
    for (const [status, method, headers, body, path] of cases) {
      const res = await fetchWith(WALL, method, path, { Origin: WALL, ...headers }, body);
      expect(res.status, path).toBe(status);
      const error = (await res.json()) as { status: number; contextId: string };
      expect(error.status).toBe(status);
      expect(res.headers.get('Access-Control-Allow-Origin'), `${status}`).toBe(WALL);
      expect(list(res.headers.get('Access-Control-Expose-Headers'))).toContain('inin-correlation-id');
      expect(res.headers.get('ININ-Correlation-Id')).toBe(error.contextId);
    }
  });

  it('serves an origin not on the list as before, with no CORS header (the browser withholds the answer)', async () => {
    const res = await fetchWith(WALL, 'GET', '/api/v1/tokens', { Origin: 'https://evil.example', Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(res.status).toBe(200);
    expect(noAllowHeaders(res)).toEqual([]);
    expect(list(res.headers.get('Vary'))).toContain('origin');
  });

  it('leaves the webhook post path, the room page and the token endpoint without CORS', async () => {
    for (const path of ['/webhooks/api/v1/webhook/whatever', `/rooms/${crypto.randomUUID()}`, '/oauth/token']) {
      const res = await preflight(WALL, WALL, path);
      expect(res.headers.get('Access-Control-Allow-Origin'), path).toBeNull();
      expect(noAllowHeaders(res), path).toEqual([]);
      const post = await fetchWith(WALL, 'POST', path, { Origin: WALL, 'Content-Type': 'application/json' }, '{}');
      expect(post.headers.get('Access-Control-Allow-Origin'), path).toBeNull();
    }
  });
});
