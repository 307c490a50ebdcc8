import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import { ADMIN_TOKEN, BASE, send, type Sent } from '../helpers';
import { decodeServerFrame, type ChatMessage } from '../../src/chat/protocol';

export function unique(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

export async function createRoom(
  name = unique('room'),
  topic?: string,
): Promise<{ id: string; name: string; topic: string | null; createdAt: string }> {
  const res = await send('POST', '/api/v1/rooms', { json: topic === undefined ? { name } : { name, topic } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export interface WebhookBody {
  id: string;
  url: string;
  name: string;
  kind: string;
  roomId: string;
  active: boolean;
  mappings: unknown[];
  rateLimit: { burst: number; perSecond: number };
}

export async function createWebhook(fields: Record<string, unknown>): Promise<WebhookBody> {
  const res = await send('POST', '/api/v1/webhooks', { json: { name: unique('hook'), kind: 'generic', ...fields } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A room with a generic webhook whose rate limit does not get in the way. */
export async function roomWithWebhook(fields: Record<string, unknown> = {}): Promise<{ roomId: string; hook: WebhookBody }> {
  const room = await createRoom();
  const hook = await createWebhook({ roomId: room.id, rateLimit: { burst: 10_000, perSecond: 10_000 }, ...fields });
  return { roomId: room.id, hook };
}

export function webhookPath(id: string): string {
  return `/webhooks/api/v1/webhook/${id}`;
}

export async function post(id: string, json: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  return send('POST', webhookPath(id), { token: null, json, headers });
}

export async function postOk(
  id: string,
  message: string,
  metadata?: string,
): Promise<{ roomId: string; messageId: string; seq: number }[]> {
  const res = await post(id, metadata === undefined ? { message } : { message, metadata });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.deliveries;
}

export async function history(roomId: string, query = ''): Promise<Sent> {
  return send('GET', `/api/v1/rooms/${roomId}/messages${query}`);
}

export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A viewer on a room's WebSocket through the Worker's real fetch, recording every frame. */
export class Viewer {
  readonly messages: ChatMessage[] = [];
  /** Index in `messages` at which `ready` arrived (replayed ones come before it). */
  readyAt: number | undefined;
  readyLastSeq: number | undefined;
  closed: { code: number; reason: string } | undefined;
  readonly raw: string[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.addEventListener('message', (event) => {
      const data = typeof event.data === 'string' ? event.data : '';
      this.raw.push(data);
      const frame = decodeServerFrame(data);
      if (frame?.type === 'messages') this.messages.push(...frame.messages);
      else if (frame?.type === 'ready') {
        this.readyAt = this.messages.length;
        this.readyLastSeq = frame.lastSeq;
      }
    });
    ws.addEventListener('close', (event) => {
      this.closed = { code: event.code, reason: event.reason };
    });
  }

  static async open(roomId: string, opts: { query?: string; token?: string | null } = {}): Promise<Viewer> {
    const res = await Viewer.request(roomId, opts);
    if (res.status !== 101) throw new Error(`expected 101, got ${res.status}: ${await res.text()}`);
    const ws = res.webSocket!;
    ws.accept();
    return new Viewer(ws);
  }

  static async request(roomId: string, opts: { query?: string; token?: string | null; upgrade?: boolean } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (opts.upgrade !== false) headers.Upgrade = 'websocket';
    const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    return exports.default.fetch(new Request(`${BASE}/api/v1/rooms/${roomId}/ws${opts.query ?? ''}`, { headers }));
  }

  seqs(): number[] {
    return this.messages.map((m) => m.seq);
  }

  async ready(timeoutMs = 10_000): Promise<void> {
    await waitUntil(() => this.readyAt !== undefined || this.closed !== undefined, 'ready frame', timeoutMs);
    if (this.readyAt === undefined) throw new Error(`closed before ready: ${JSON.stringify(this.closed)}`);
  }

  async untilSeq(seq: number, timeoutMs = 15_000): Promise<void> {
    await waitUntil(() => this.messages.some((m) => m.seq >= seq), `seq ${seq} (have ${this.seqs().slice(-3).join(',')})`, timeoutMs);
  }

  close(): void {
    try {
      this.ws.close(1000, 'done');
    } catch {
      // already closed
    }
  }
}

/** 1..n, the expected seq run. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
