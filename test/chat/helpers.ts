import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import { ADMIN_TOKEN, BASE, send, type Sent } from '../helpers';
import { AckCounter, decodeServerFrame, type ChatMessage } from '../../src/chat/protocol';

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
  /** Public (every message carries it); it does not post. */
  id: string;
  /** Where to post: its last segment is the posting secret (null only for a webhook migration 0007 retired). */
  url: string;
  name: string;
  kind: string;
  roomId: string;
  active: boolean;
  mappings: unknown[];
  rateLimit: { burst: number; perSecond: number };
  createdAt: string;
  updatedAt: string;
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

/**
 * Where to post: a webhook as the admin API answered it, or its `url`, or that URL's path; else a
 * string taken as the URL's last segment (a posting secret, or a made-up one: the public id posts
 * nowhere).
 */
export type PostTarget = { url: string | null } | string;

export function webhookPath(target: PostTarget): string {
  const url = typeof target === 'string' ? target : target.url;
  if (url === null) throw new Error('this webhook has no URL (rotate it)');
  if (/^https?:/.test(url)) return new URL(url).pathname;
  if (url.startsWith('/')) return url;
  return `/webhooks/api/v1/webhook/${url}`;
}

export async function post(target: PostTarget, json: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  return send('POST', webhookPath(target), { token: null, json, headers });
}

export async function postOk(
  target: PostTarget,
  message: string,
  metadata?: string,
): Promise<{ roomId: string; messageId: string; seq: number }[]> {
  const res = await post(target, metadata === undefined ? { message } : { message, metadata });
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
  /** Messages of `update` frames (edits, deletes), in the order they came. */
  readonly updates: ChatMessage[] = [];
  /** Index in `messages` at which `ready` arrived (replayed ones come before it). */
  readyAt: number | undefined;
  readyLastSeq: number | undefined;
  closed: { code: number; reason: string } | undefined;
  readonly raw: string[] = [];
  /** Counts the bytes received and acks them as the protocol asks (flow control), unless opened with `ack: false`. */
  readonly acks = new AckCounter();

  private constructor(
    readonly ws: WebSocket,
    private readonly acking = true,
  ) {
    ws.addEventListener('message', (event) => {
      const data = typeof event.data === 'string' ? event.data : '';
      this.raw.push(data);
      const ack = this.acks.frame(data);
      if (ack !== undefined && this.acking) ws.send(ack);
      const frame = decodeServerFrame(data);
      if (frame?.type === 'messages') this.messages.push(...frame.messages);
      else if (frame?.type === 'update') this.updates.push(...frame.messages);
      else if (frame?.type === 'ready') {
        this.readyAt = this.messages.length;
        this.readyLastSeq = frame.lastSeq;
      }
    });
    ws.addEventListener('close', (event) => {
      this.closed = { code: event.code, reason: event.reason };
    });
  }

  static async open(roomId: string, opts: { query?: string; token?: string | null; ack?: boolean } = {}): Promise<Viewer> {
    const res = await Viewer.request(roomId, opts);
    if (res.status !== 101) throw new Error(`expected 101, got ${res.status}: ${await res.text()}`);
    const ws = res.webSocket!;
    ws.accept();
    return new Viewer(ws, opts.ack !== false);
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
