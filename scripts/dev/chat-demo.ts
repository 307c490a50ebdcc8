/**
 * Creates, or finds by name, the demo chat room "Demo" and a generic webhook posting to it, through
 * the HTTP API (runs in Node against `wrangler dev`). A room with no message yet gets a few, posted as
 * tools post them (below), so the room page shows what it renders from the first start. Safe to run
 * on every start.
 */

const DEMO_ROOM = 'Demo';
const DEMO_WEBHOOK = 'Demo generic webhook';

/**
 * The first messages of an empty demo room, in order, each through a webhook of its kind (created in
 * the room if missing): a generic post with markdown, a CI server's native payload, a monitoring
 * alert in Slack's format.
 */
export const DEMO_POSTS: readonly { webhook: string; kind: string; body: unknown }[] = [
  {
    webhook: DEMO_WEBHOOK,
    kind: 'generic',
    body: {
      message:
        'Deploy of `api` to **production** finished in 3 min :rocket:\n\n```diff\n- replicas: 2\n+ replicas: 4\n```\n\n[Release notes](https://example.com/releases/2.4.0)',
      metadata: 'deploy',
      level: 'success',
    },
  },
  {
    webhook: 'Demo Jenkins',
    kind: 'jenkins',
    // The Notification plugin's JSON, as Jenkins sends it when a build ends.
    body: {
      name: 'switchboard-main',
      url: 'job/switchboard-main/',
      build: {
        full_url: 'https://ci.example.com/job/switchboard-main/42/',
        number: 42,
        phase: 'FINALIZED',
        status: 'FAILURE',
        url: 'job/switchboard-main/42/',
        scm: { branch: 'main', commit: '1f28dc4c2e9a7b3d5f60812a4b9c0d1e2f3a4b5c' },
      },
    },
  },
  {
    webhook: 'Demo alerts (Slack format)',
    kind: 'slack',
    // What Alertmanager's slack_configs send, shortened.
    body: {
      username: 'Alertmanager',
      attachments: [
        {
          color: 'warning',
          title: '[FIRING:1] HighLatency checkout',
          title_link: 'https://alerts.example.com/#/alerts?receiver=ops',
          text: '*Summary:* p99 latency above 800 ms for 10 minutes\n*Severity:* warning',
          fields: [{ title: 'service', value: 'checkout', short: true }],
        },
      ],
    },
  },
];

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
    (await api<Room>(base, adminToken, 'POST', '/api/v1/rooms', { name: DEMO_ROOM, topic: 'Messages posted to the demo webhooks' }));

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

  const latest = await api<{ entities: unknown[] }>(base, adminToken, 'GET', `/api/v1/rooms/${room.id}/messages?limit=1`);
  if (latest.entities.length === 0) await postDemoMessages(base, adminToken, room.id, [...hooks.entities, hook]);

  const example = JSON.stringify({
    message: '**Build #42 passed** on `main` :tada:\n\n- [details](https://example.com/builds/42)\n- took 3 min',
    metadata: 'ci',
  });
  const curl = `curl -s -X POST ${shellQuote(url)} -H 'Content-Type: application/json' -d ${shellQuote(example)}`;
  return { roomId: room.id, webhookUrl: url, pageUrl: `${base}/rooms/${room.id}`, curl };
}

/** Posts DEMO_POSTS into the room, one after another, each through its (found or created) webhook. */
async function postDemoMessages(base: string, adminToken: string, roomId: string, known: Webhook[]): Promise<void> {
  for (const demo of DEMO_POSTS) {
    let hook = known.find((h) => h.roomId === roomId && h.kind === demo.kind && h.name === demo.webhook && h.url !== null);
    hook ??= await api<Webhook>(base, adminToken, 'POST', '/api/v1/webhooks', { name: demo.webhook, kind: demo.kind, roomId });
    const res = await fetch(hook.url!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(demo.body),
    });
    if (!res.ok) throw new Error(`the demo ${demo.kind} post answered ${res.status}: ${await res.text()}`);
  }
}
