/**
 * Creates, or finds by name, the demo chat room "Demo" and a generic webhook posting to it, through
 * the HTTP API (runs in Node against `wrangler dev`). Safe to run on every start.
 */

const DEMO_ROOM = 'Demo';
const DEMO_WEBHOOK = 'Demo generic webhook';

interface Room {
  id: string;
  name: string;
}

interface Webhook {
  id: string;
  /** Null for a webhook that migration 0007 left without a URL (rotate it). */
  url: string | null;
  name: string;
  kind: string;
  roomId: string;
  active: boolean;
}

async function api<T>(baseUrl: string, adminToken: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** Single quotes for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export async function createChatDemo(
  baseUrl: string,
  adminToken: string,
): Promise<{ roomId: string; webhookUrl: string; pageUrl: string; curl: string }> {
  const base = baseUrl.replace(/\/+$/, '');
  const rooms = await api<{ entities: Room[] }>(base, adminToken, 'GET', '/api/v1/rooms');
  const room =
    rooms.entities.find((r) => r.name === DEMO_ROOM) ??
    (await api<Room>(base, adminToken, 'POST', '/api/v1/rooms', { name: DEMO_ROOM, topic: 'Messages posted to the demo webhook' }));

  const hooks = await api<{ entities: Webhook[] }>(base, adminToken, 'GET', '/api/v1/webhooks');
  let hook = hooks.entities.find((h) => h.roomId === room.id && h.kind === 'generic' && h.name === DEMO_WEBHOOK);
  if (!hook) {
    hook = await api<Webhook>(base, adminToken, 'POST', '/api/v1/webhooks', { name: DEMO_WEBHOOK, kind: 'generic', roomId: room.id });
  } else if (!hook.active) {
    hook = await api<Webhook>(base, adminToken, 'PATCH', `/api/v1/webhooks/${hook.id}`, { active: true });
  }
  // A local database from before migration 0007: the demo webhook's old URL was retired.
  if (hook.url === null) hook = await api<Webhook>(base, adminToken, 'POST', `/api/v1/webhooks/${hook.id}/rotate`);
  const url = hook.url;
  if (url === null) throw new Error('the rotated demo webhook has no URL');

  const example = JSON.stringify({
    message: '**Build #42 passed** on `main` :tada:\n\n- [details](https://example.com/builds/42)\n- took 3 min',
    metadata: 'ci',
  });
  const curl = `curl -s -X POST ${shellQuote(url)} -H 'Content-Type: application/json' -d ${shellQuote(example)}`;
  return { roomId: room.id, webhookUrl: url, pageUrl: `${base}/rooms/${room.id}`, curl };
}
