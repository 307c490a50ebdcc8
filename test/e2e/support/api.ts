/** A small HTTP client for the e2e suite: the public API over real sockets, nothing else. */
import type { ChatMessage } from '../../../src/chat/protocol';
import type { DevServer } from './dev-server';

export interface Room {
  id: string;
  name: string;
  topic: string | null;
}

export interface Webhook {
  id: string;
  url: string;
  roomId: string;
  rateLimit: { burst: number; perSecond: number };
}

export interface Delivery {
  roomId: string;
  messageId: string;
  seq: number | null;
}

/**
 * How long one request may take. A request that never finishes would otherwise hold its test until the
 * hook's or test's timeout, which says nothing of where it stood (a CI run's set-up of 170 posts did).
 */
const REQUEST_TIMEOUT_MS = 30_000;

export class Api {
  constructor(private readonly server: DevServer) {}

  /** fetch with a deadline; a request past it fails naming itself, with what wrangler dev printed last. */
  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      const what = `${init.method ?? 'GET'} ${url}`;
      throw new Error(`${what} failed: ${String(error)}\nwrangler dev said:\n${this.server.logTail(30)}`);
    }
  }

  async admin<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.send(this.server.baseUrl + path, {
      method,
      headers: {
        Authorization: `Bearer ${this.server.adminToken}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}\nwrangler dev said:\n${this.server.logTail(30)}`);
    // A 204 (a DELETE) has no body.
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  createRoom(name: string, topic?: string): Promise<Room> {
    return this.admin<Room>('POST', '/api/v1/rooms', topic === undefined ? { name } : { name, topic });
  }

  createWebhook(roomId: string, rateLimit = { burst: 100_000, perSecond: 100_000 }): Promise<Webhook> {
    return this.admin<Webhook>('POST', '/api/v1/webhooks', { name: `e2e ${roomId.slice(0, 8)}`, kind: 'generic', roomId, rateLimit });
  }

  async createToken(permissions: string[]): Promise<string> {
    const created = await this.admin<{ token: string }>('POST', '/api/v1/tokens', { name: 'e2e viewer', permissions });
    return created.token;
  }

  /** The webhook URL on this server (the API builds it from the request's host, which is ours). */
  webhookUrl(hook: Webhook): string {
    const url = new URL(hook.url);
    if (url.origin !== this.server.baseUrl) throw new Error(`webhook URL ${hook.url} is not on ${this.server.baseUrl}`);
    return hook.url;
  }

  /** Posts and insists on 200; for setting up a scene, not for the assertions about answers. */
  async postOk(hook: Webhook, message: string, metadata?: string): Promise<Delivery> {
    const res = await this.send(this.webhookUrl(hook), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(metadata === undefined ? { message } : { message, metadata }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`webhook post answered ${res.status}: ${text}\nwrangler dev said:\n${this.server.logTail(30)}`);
    const { deliveries } = JSON.parse(text) as { deliveries: Delivery[] };
    if (deliveries.length !== 1 || !deliveries[0]) throw new Error(`expected one delivery: ${text}`);
    return deliveries[0];
  }

  /** Every message of a room from D1 (the history API flushes the room first), following nextAfter. */
  async history(roomId: string): Promise<ChatMessage[]> {
    const all: ChatMessage[] = [];
    let after = 0;
    for (let page = 0; page < 1_000; page++) {
      const body = await this.admin<{ entities: ChatMessage[]; nextAfter?: number }>(
        'GET',
        `/api/v1/rooms/${roomId}/messages?after=${after}&limit=500`,
      );
      all.push(...body.entities);
      if (body.nextAfter === undefined) return all;
      after = body.nextAfter;
    }
    throw new Error('history did not end within 1,000 pages');
  }
}
