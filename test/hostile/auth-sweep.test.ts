/**
 * The auth sweep: one table with a row for every route the app serves, and one data-driven test that
 * sends each route every kind of credential (none, a malformed header, an unknown token, a revoked
 * token, a token with every permission but the one the route needs, a token with only that one) and
 * checks status and code. The table's keys must be exactly the app's routes (`createApp().routes`),
 * so a route added without a row fails this test. Public routes have rows too, saying they need no
 * token: every credential gets the same answer there.
 */
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app';
import { PERMISSIONS, type Permission } from '../../src/http/permissions';
import { STATUS_OF_CODE } from './support/fuzz';
import { call, callRaw } from './support/client';

interface Prepared {
  path: string;
  json?: unknown;
  headers?: Record<string, string>;
}

interface Row {
  /** `public`: no token needed (the row states it); otherwise the one permission the route needs. */
  needs: Permission | 'public';
  /** Builds the request (fixtures made fresh when the request would consume them). */
  prepare: () => Promise<Prepared>;
  /** Status with a token holding the permission (public routes: with any credential). */
  ok: number;
}

const ids = { room: '', hook: '', hookPath: '', hookRoom: '' };

async function admin<T = any>(method: string, path: string, json?: unknown): Promise<T> {
  const res = await call(method, path, json === undefined ? {} : { json });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body as T;
}
const freshRoom = async () => (await admin<{ id: string }>('POST', '/api/v1/rooms', { name: 'sweep room' })).id;
const createHook = () =>
  admin<{ id: string; url: string }>('POST', '/api/v1/webhooks', {
    name: 'sweep hook',
    kind: 'generic',
    roomId: ids.hookRoom,
    rateLimit: { burst: 100_000, perSecond: 100_000 },
  });
const freshHook = async () => (await createHook()).id;
const freshToken = async () =>
  (await admin<{ id: string }>('POST', '/api/v1/tokens', { name: 'sweep victim', permissions: ['chat:read'] })).id;
const ws = { Upgrade: 'websocket' };
/** A message the sweep's webhook posted (its edits and deletes answer 200). */
const hookMessage = async () =>
  (await admin<{ deliveries: { messageId: string }[] }>('POST', ids.hookPath, { message: 'to change' })).deliveries[0]!.messageId;
/** A message the admin token posted (once: its tokens are rate-limited): no other token may change it. */
let adminMessageId: string | undefined;
const adminMessage = async () =>
  (adminMessageId ??= (await admin<{ messageId: string }>('POST', `/api/v1/rooms/${ids.room}/messages`, { message: 'mine' })).messageId);

/** A viewer link's path (in a room of its own: a room holds a bounded number of links). */
const freshViewerLink = async () => {
  const room = await freshRoom();
  return `/api/v1/rooms/${room}/viewer-links/${(await admin<{ id: string }>('POST', `/api/v1/rooms/${room}/viewer-links`, { label: 'sweep' })).id}`;
};

/** Every route: `METHOD path` exactly as Hono lists it. */
const freshClient = async () =>
  (
    await admin<{ id: string }>('POST', '/api/v2/oauth/clients', {
      name: 'sweep victim',
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['chat:read'],
    })
  ).id;

/** A job's id: submitted through the API, or (`cancelled`) a cancelled one, whose results answer 409. */
const freshJob = async (cancelled = false): Promise<string> => {
  if (!cancelled) {
    return (
      await admin<{ jobId: string }>('POST', '/api/v2/analytics/conversations/aggregates/jobs', {
        interval: '2930-01-01T00:00:00Z/2930-01-02T00:00:00Z',
        metrics: ['nOffered'],
      })
    ).jobId;
  }
  const id = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO aggregate_jobs (id, query, state, pending, submitted_at, updated_at, expires_at) VALUES (?1, '{}', 'CANCELLED', '[]', ?2, ?2, ?3)`,
  )
    .bind(id, now, now + 86_400_000)
    .run();
  return id;
};

const TABLE: Record<string, Row> = {
  'POST /api/v1/tokens': {
    needs: 'tokens:manage',
    ok: 201,
    prepare: async () => ({
      path: '/api/v1/tokens',
      json: { name: 'sweep', permissions: ['tokens:manage'] /* what the sweep's token holds: a token grants only that */ },
    }),
  },
  'GET /api/v1/tokens': { needs: 'tokens:manage', ok: 200, prepare: async () => ({ path: '/api/v1/tokens' }) },
  'DELETE /api/v1/tokens/:id': { needs: 'tokens:manage', ok: 204, prepare: async () => ({ path: `/api/v1/tokens/${await freshToken()}` }) },
  'GET /api/v1/tokens/:id': { needs: 'tokens:manage', ok: 200, prepare: async () => ({ path: `/api/v1/tokens/${await freshToken()}` }) },
  'POST /api/v2/oauth/clients': {
    needs: 'tokens:manage',
    ok: 201,
    prepare: async () => ({
      path: '/api/v2/oauth/clients',
      json: { name: 'sweep', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['tokens:manage'] },
    }),
  },
  'GET /api/v2/oauth/clients': { needs: 'tokens:manage', ok: 200, prepare: async () => ({ path: '/api/v2/oauth/clients' }) },
  'GET /api/v2/oauth/clients/:id': {
    needs: 'tokens:manage',
    ok: 200,
    prepare: async () => ({ path: `/api/v2/oauth/clients/${await freshClient()}` }),
  },
  'DELETE /api/v2/oauth/clients/:id': {
    needs: 'tokens:manage',
    ok: 204,
    prepare: async () => ({ path: `/api/v2/oauth/clients/${await freshClient()}` }),
  },
  // Public: the client authenticates with its id and secret (Basic or form), never a bearer token; without a form every request is 400 invalid_request.
  'POST /oauth/token': { needs: 'public', ok: 400, prepare: async () => ({ path: '/oauth/token' }) },
  'POST /api/v2/analytics/conversations/details/ingest': {
    needs: 'analytics:conversation:ingest',
    ok: 200,
    prepare: async () => ({ path: '/api/v2/analytics/conversations/details/ingest', json: { conversations: [] } }),
  },
  'POST /api/v2/analytics/conversations/aggregates/query': {
    needs: 'analytics:conversationAggregate:view',
    ok: 200,
    prepare: async () => ({
      path: '/api/v2/analytics/conversations/aggregates/query',
      json: { interval: '2930-01-01T00:00:00Z/2930-01-02T00:00:00Z' },
    }),
  },
  'POST /api/v2/analytics/conversations/aggregates/jobs': {
    needs: 'analytics:conversationAggregate:view',
    ok: 202,
    prepare: async () => ({
      path: '/api/v2/analytics/conversations/aggregates/jobs',
      json: { interval: '2930-01-01T00:00:00Z/2930-01-02T00:00:00Z', metrics: ['nOffered'] },
    }),
  },
  'GET /api/v2/analytics/conversations/aggregates/jobs/:id': {
    needs: 'analytics:conversationAggregate:view',
    ok: 200,
    prepare: async () => ({ path: `/api/v2/analytics/conversations/aggregates/jobs/${await freshJob()}` }),
  },
  // A cancelled job has no results: 409 with the right permission (the point here is the 401/403s).
  'GET /api/v2/analytics/conversations/aggregates/jobs/:id/results': {
    needs: 'analytics:conversationAggregate:view',
    ok: 409,
    prepare: async () => ({ path: `/api/v2/analytics/conversations/aggregates/jobs/${await freshJob(true)}/results` }),
  },
  'DELETE /api/v2/analytics/conversations/aggregates/jobs/:id': {
    needs: 'analytics:conversationAggregate:view',
    ok: 204,
    prepare: async () => ({ path: `/api/v2/analytics/conversations/aggregates/jobs/${await freshJob()}` }),
  },
  'GET /api/v2/analytics/settings/servicelevel': {
    needs: 'analytics:conversationAggregate:view',
    ok: 200,
    prepare: async () => ({ path: '/api/v2/analytics/settings/servicelevel' }),
  },
  'PUT /api/v2/analytics/settings/servicelevel': {
    needs: 'analytics:settings:edit',
    ok: 200,
    // Writes back what is there, so no other test sees a change.
    prepare: async () => ({
      path: '/api/v2/analytics/settings/servicelevel',
      json: await admin('GET', '/api/v2/analytics/settings/servicelevel'),
    }),
  },
  'POST /api/v1/rooms': { needs: 'chat:admin', ok: 201, prepare: async () => ({ path: '/api/v1/rooms', json: { name: 'sweep' } }) },
  'GET /api/v1/rooms': { needs: 'chat:admin', ok: 200, prepare: async () => ({ path: '/api/v1/rooms' }) },
  'GET /api/v1/rooms/:id': { needs: 'chat:admin', ok: 200, prepare: async () => ({ path: `/api/v1/rooms/${ids.room}` }) },
  'PATCH /api/v1/rooms/:id': {
    needs: 'chat:admin',
    ok: 200,
    prepare: async () => ({ path: `/api/v1/rooms/${ids.room}`, json: { topic: 'swept' } }),
  },
  'DELETE /api/v1/rooms/:id': { needs: 'chat:admin', ok: 204, prepare: async () => ({ path: `/api/v1/rooms/${await freshRoom()}` }) },
  'POST /api/v1/rooms/:id/ws-ticket': {
    needs: 'chat:read',
    ok: 201,
    prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/ws-ticket` }),
  },
  'GET /api/v1/rooms/:id/ws': { needs: 'chat:read', ok: 101, prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/ws`, headers: ws }) },
  'GET /api/v1/rooms/:id/messages': { needs: 'chat:read', ok: 200, prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/messages` }) },
  'POST /api/v1/rooms/:id/viewer-links': {
    needs: 'chat:admin',
    ok: 201,
    // A fresh room each time: a room holds at most CHAT_LIMITS.viewerLinksPerRoom links.
    prepare: async () => ({ path: `/api/v1/rooms/${await freshRoom()}/viewer-links`, json: { label: 'sweep' } }),
  },
  'GET /api/v1/rooms/:id/viewer-links': {
    needs: 'chat:admin',
    ok: 200,
    prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/viewer-links` }),
  },
  'POST /api/v1/rooms/:id/viewer-links/:linkId/rotate': {
    needs: 'chat:admin',
    ok: 200,
    prepare: async () => ({ path: `${await freshViewerLink()}/rotate` }),
  },
  'DELETE /api/v1/rooms/:id/viewer-links/:linkId': {
    needs: 'chat:admin',
    ok: 204,
    prepare: async () => ({ path: await freshViewerLink() }),
  },
  'POST /api/v1/webhooks': {
    needs: 'chat:admin',
    ok: 201,
    prepare: async () => ({ path: '/api/v1/webhooks', json: { name: 'sweep', kind: 'generic', roomId: ids.hookRoom } }),
  },
  'GET /api/v1/webhooks': { needs: 'chat:admin', ok: 200, prepare: async () => ({ path: '/api/v1/webhooks' }) },
  'GET /api/v1/webhooks/:id': { needs: 'chat:admin', ok: 200, prepare: async () => ({ path: `/api/v1/webhooks/${ids.hook}` }) },
  'PATCH /api/v1/webhooks/:id': {
    needs: 'chat:admin',
    ok: 200,
    prepare: async () => ({ path: `/api/v1/webhooks/${ids.hook}`, json: { name: 'swept' } }),
  },
  'DELETE /api/v1/webhooks/:id': { needs: 'chat:admin', ok: 204, prepare: async () => ({ path: `/api/v1/webhooks/${await freshHook()}` }) },
  'POST /api/v1/webhooks/:id/rotate': {
    needs: 'chat:admin',
    ok: 200,
    prepare: async () => ({ path: `/api/v1/webhooks/${await freshHook()}/rotate` }),
  },
  // Public: the posting secret in the URL is the credential; any Authorization header is ignored.
  'POST /webhooks/api/v1/webhook/:secret': {
    needs: 'public',
    ok: 200,
    prepare: async () => ({ path: ids.hookPath, json: { message: 'swept' } }),
  },
  // Public, as the post: a webhook edits and deletes its own messages (a fresh one for each request).
  'PATCH /webhooks/api/v1/webhook/:secret/messages/:messageId': {
    needs: 'public',
    ok: 200,
    prepare: async () => ({ path: `${ids.hookPath}/messages/${await hookMessage()}`, json: { message: 'swept again' } }),
  },
  'DELETE /webhooks/api/v1/webhook/:secret/messages/:messageId': {
    needs: 'public',
    ok: 200,
    prepare: async () => ({ path: `${ids.hookPath}/messages/${await hookMessage()}` }),
  },
  'GET /api/v1/webhooks/:id/deliveries': {
    needs: 'chat:admin',
    ok: 200,
    prepare: async () => ({ path: `/api/v1/webhooks/${ids.hook}/deliveries` }),
  },
  'POST /api/v1/rooms/:id/messages': {
    needs: 'chat:write',
    ok: 201,
    prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/messages`, json: { message: 'said' } }),
  },
  // Only a message's author may change it: past authorization, the sweep's token meets the admin's message (404).
  'PATCH /api/v1/rooms/:id/messages/:messageId': {
    needs: 'chat:write',
    ok: 404,
    prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/messages/${await adminMessage()}`, json: { message: 'edited' } }),
  },
  'DELETE /api/v1/rooms/:id/messages/:messageId': {
    needs: 'chat:write',
    ok: 404,
    prepare: async () => ({ path: `/api/v1/rooms/${ids.room}/messages/${await adminMessage()}` }),
  },
  // Public: the page asks for a token itself and shows nothing without one.
  'GET /rooms/:id': { needs: 'public', ok: 200, prepare: async () => ({ path: `/rooms/${ids.room}` }) },
  // Public: the admin page asks for a chat:admin token itself; the HTML holds nothing.
  'GET /admin': { needs: 'public', ok: 200, prepare: async () => ({ path: '/admin' }) },
  // Public: the base URL redirects to the admin page.
  'GET /': { needs: 'public', ok: 302, prepare: async () => ({ path: '/' }) },
  // Public: the URL's signature is the credential; any Authorization header is ignored. This Worker has no
  // IMAGE_PROXY_KEY, so 404 (with one: test/chat/image-proxy.test.ts).
  'GET /image-proxy': {
    needs: 'public',
    ok: 404,
    prepare: async () => ({ path: `/image-proxy?u=${encodeURIComponent('https://img.example.com/a.png')}&s=${'A'.repeat(43)}` }),
  },
};

type Credential = 'none' | 'malformed header' | 'unknown token' | 'revoked token' | 'lacking the permission' | 'valid token';
const CREDENTIALS: Credential[] = ['none', 'malformed header', 'unknown token', 'revoked token', 'lacking the permission', 'valid token'];
/** Authorization headers that carry no bearer token (README: "Missing or non-Bearer header"). */
const MALFORMED = [
  'Basic dXNlcjpwYXNz',
  'Bearer',
  'Bearer ',
  'Token abc',
  'Bearer two words',
  'Bearertest-admin-token',
  'test-admin-token',
];

/** Unknown tokens, among them the admin token with one character more or less (no prefix match). */
const UNKNOWN = [`Bearer sbt_${crypto.randomUUID()}`, 'Bearer test-admin-tokenx', 'Bearer test-admin-toke', 'Bearer TEST-ADMIN-TOKEN'];

function appRoutes(): string[] {
  return [
    ...new Set(
      createApp()
        .routes.filter((r) => r.method !== 'ALL')
        .map((r) => `${r.method} ${r.path}`),
    ),
  ].sort();
}

describe('the auth sweep', () => {
  it('gives every route × credential the documented status and code, and has a row for every route', async () => {
    // A route added to the app without a row here fails first.
    expect(Object.keys(TABLE).sort()).toEqual(appRoutes());

    ids.room = await freshRoom();
    ids.hookRoom = await freshRoom();
    const hook = await createHook();
    ids.hook = hook.id;
    ids.hookPath = new URL(hook.url).pathname;
    const only = new Map<string, string>();
    const allBut = new Map<string, string>();
    for (const p of PERMISSIONS) {
      only.set(p, (await admin<{ token: string }>('POST', '/api/v1/tokens', { name: `only ${p}`, permissions: [p] })).token);
      allBut.set(
        p,
        (
          await admin<{ token: string }>('POST', '/api/v1/tokens', {
            name: `all but ${p}`,
            permissions: PERMISSIONS.filter((q) => q !== p),
          })
        ).token,
      );
    }
    const revoked = await admin<{ id: string; token: string }>('POST', '/api/v1/tokens', {
      name: 'revoked',
      permissions: [...PERMISSIONS],
    });
    await admin('DELETE', `/api/v1/tokens/${revoked.id}`);

    const failures: string[] = [];
    let checked = 0;
    for (const [route, row] of Object.entries(TABLE)) {
      const method = route.split(' ')[0]!;
      for (const credential of CREDENTIALS) {
        const holder = row.needs === 'public' ? 'chat:read' : row.needs;
        const authorizations: (string | undefined)[] = {
          none: [undefined],
          'malformed header': MALFORMED,
          'unknown token': UNKNOWN,
          'revoked token': [`Bearer ${revoked.token}`],
          'lacking the permission': [`Bearer ${allBut.get(holder)}`],
          'valid token': [`Bearer ${only.get(holder)}`],
        }[credential];
        const expected: { status: number; code?: string; field?: string } =
          row.needs === 'public' || credential === 'valid token'
            ? { status: row.ok }
            : credential === 'none' || credential === 'malformed header'
              ? { status: 401, code: 'authentication.required' }
              : credential === 'lacking the permission'
                ? { status: 403, code: 'missing.permissions', field: row.needs }
                : { status: 401, code: 'bad.credentials' };
        for (const authorization of authorizations) {
          const req = await row.prepare();
          const headers = { ...(req.headers ?? {}), ...(authorization === undefined ? {} : { Authorization: authorization }) };
          const res = await callRaw(method, req.path, { token: null, headers, ...(req.json === undefined ? {} : { json: req.json }) });
          checked++;
          const where = `${route} with ${credential}${authorization ? ` (${authorization.slice(0, 30)})` : ''}`;
          if (res.status === 101) {
            res.webSocket!.accept();
            res.webSocket!.close(1000, 'swept');
          }
          const body = res.status === 101 || res.status === 204 ? undefined : await res.text();
          if (res.status !== expected.status) {
            failures.push(`${where}: expected ${expected.status}, got ${res.status} ${body?.slice(0, 200)}`);
            continue;
          }
          if (expected.code === undefined) continue;
          const error = JSON.parse(body ?? '{}') as {
            code?: string;
            status?: number;
            contextId?: string;
            details?: { fieldName?: string }[];
            message?: string;
          };
          const problems = [
            error.code !== expected.code && `code ${error.code}`,
            STATUS_OF_CODE[error.code ?? ''] !== res.status && 'status does not match the code',
            error.contextId !== res.headers.get('ININ-Correlation-Id') && 'contextId differs from ININ-Correlation-Id',
            expected.field && !error.details?.some((d) => d.fieldName === expected.field) && `details lack ${expected.field}`,
            expected.field && !error.message?.includes(expected.field) && `message does not name ${expected.field}`,
          ].filter(Boolean);
          if (problems.length > 0) failures.push(`${where}: ${problems.join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBe(Object.keys(TABLE).length * (1 + MALFORMED.length + UNKNOWN.length + 3));
  }, 120_000);

  it("refuses a viewer link on every route but its own room's ticket, history and WebSocket", async () => {
    ids.room = await freshRoom();
    ids.hookRoom = await freshRoom();
    const hook = await createHook();
    ids.hook = hook.id;
    ids.hookPath = new URL(hook.url).pathname;
    const link = await admin<{ secret: string }>('POST', `/api/v1/rooms/${ids.room}/viewer-links`, { label: 'sweep' });
    // The routes it opens, for the sweep's room (`ids.room`); public routes answer every credential alike.
    const opens = new Set(['POST /api/v1/rooms/:id/ws-ticket', 'GET /api/v1/rooms/:id/ws', 'GET /api/v1/rooms/:id/messages']);
    const failures: string[] = [];
    for (const [route, row] of Object.entries(TABLE)) {
      const method = route.split(' ')[0]!;
      const req = await row.prepare();
      const headers = { ...(req.headers ?? {}), Authorization: `Bearer ${link.secret}` };
      const res = await callRaw(method, req.path, { token: null, headers, ...(req.json === undefined ? {} : { json: req.json }) });
      if (res.status === 101) {
        res.webSocket!.accept();
        res.webSocket!.close(1000, 'swept');
      }
      const expected = row.needs === 'public' || opens.has(route) ? row.ok : 401;
      const body = res.status === 101 || res.status === 204 ? '' : await res.text();
      if (res.status !== expected) failures.push(`${route}: expected ${expected}, got ${res.status} ${body.slice(0, 200)}`);
      else if (expected === 401 && (JSON.parse(body) as { code?: string }).code !== 'bad.credentials') failures.push(`${route}: ${body}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
