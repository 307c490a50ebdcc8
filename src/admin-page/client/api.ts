/**
 * The admin API as the page uses it: typed with the shapes docs/api.md documents (the server's own
 * view types live in modules that need the Worker's bindings, so they are restated here), every
 * answer either the value or the API's ErrorBody made readable.
 */
import type { Permission } from '../../http/permissions';
import type { CLIENT_CREDENTIALS } from '../../oauth/oauth.limits';
import type { RateLimit, WebhookKind } from '../../chat/limits';

export interface Room {
  id: string;
  name: string;
  topic: string | null;
  createdAt: string;
}

export interface WebhookMapping {
  field: 'message' | 'metadata';
  match: 'exact' | 'contains' | 'prefix';
  value: string;
  roomIds: string[];
}

export interface Webhook {
  id: string;
  /** null (with needsRotation) for a webhook that migration 0007 left without a posting secret. */
  url: string | null;
  needsRotation?: true;
  name: string;
  kind: WebhookKind;
  roomId: string;
  active: boolean;
  mappings: WebhookMapping[];
  rateLimit: RateLimit;
  avatarUrl: string | null;
  allowOverrides: boolean;
  hasSecret?: boolean;
  /** When the webhook's URL last got a request, refused ones included; null: none in the log's 7 days. */
  lastDeliveryAt?: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryEntry {
  id: number;
  at: string;
  method: 'POST' | 'PATCH' | 'DELETE';
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  messageId: string | null;
  roomId: string | null;
  seq: number | null;
  bytes: number;
}

export interface DeliveryPage {
  entities: DeliveryEntry[];
  nextBefore?: number;
}

/** A room's read-only link, as listed: never its secret. */
export interface ViewerLink {
  id: string;
  roomId: string;
  label: string;
  createdAt: string;
  rotatedAt: string | null;
  lastUsedAt: string | null;
}

/** A viewer link as created or rotated: the only answers that hold its secret and URL. */
export interface ViewerLinkWithSecret extends ViewerLink {
  secret: string;
  url: string;
}

/** An API token as listed: never its secret. */
export interface ApiToken {
  id: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  revokedAt?: string;
  /** The last request it authenticated, within the hour; null: never. */
  lastUsedAt: string | null;
}

/** An API token as created: the only answer that holds the token itself. */
export interface ApiTokenWithSecret extends ApiToken {
  token: string;
}

/** An OAuth client (Genesys' OAuthClient) as listed: never its secret. */
export interface OAuthClient {
  id: string;
  name: string;
  description?: string;
  authorizedGrantType: typeof CLIENT_CREDENTIALS;
  permissions: Permission[];
  accessTokenValiditySeconds: number;
  state: 'active' | 'inactive';
  dateCreated: string;
  dateRevoked?: string;
  /** The last token it got or request one of its tokens authenticated, within the hour; null: never. */
  lastUsedAt: string | null;
}

/** An OAuth client as created: the only answer that holds its secret. */
export interface OAuthClientWithSecret extends OAuthClient {
  secret: string;
}

export interface NewOAuthClient {
  name: string;
  description?: string;
  authorizedGrantType: typeof CLIENT_CREDENTIALS;
  permissions: Permission[];
  /** Absent: the API's default. */
  accessTokenValiditySeconds?: number;
}

export interface NewWebhook {
  name: string;
  kind: WebhookKind;
  roomId: string;
  rateLimit?: Partial<RateLimit>;
  avatarUrl?: string;
  allowOverrides?: boolean;
  secret?: string;
}

/** What went wrong, from the API's ErrorBody when there is one. */
export interface Problem {
  /** undefined: the request never got an answer (network). */
  status?: number;
  code?: string;
  message: string;
  fields: string[];
  contextId?: string;
}

export type Answer<T> = { ok: true; status: number; value: T } | { ok: false; problem: Problem };

/** Kinds whose deliveries are signed: they take a `secret` (the others refuse the field). */
export const SIGNED_KINDS: readonly WebhookKind[] = ['github', 'bitbucket', 'jira'];

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** An ErrorBody read defensively: anything missing is described from the status alone. */
export function problemOf(status: number, body: unknown): Problem {
  const error = asObject(body);
  const details = Array.isArray(error?.details) ? error.details : [];
  const fields = details.map((d) => asObject(d)?.fieldName).filter((f): f is string => typeof f === 'string' && f !== '');
  return {
    status,
    code: typeof error?.code === 'string' ? error.code : undefined,
    message: typeof error?.message === 'string' && error.message !== '' ? error.message : `The server answered ${status}.`,
    fields,
    contextId: typeof error?.contextId === 'string' ? error.contextId : undefined,
  };
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One request; the token goes in the Authorization header only, never in a URL. */
export async function request<T>(method: string, path: string, token: string | null, body?: unknown): Promise<Answer<T>> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch {
    return { ok: false, problem: { message: 'The server could not be reached. Check the connection and try again.', fields: [] } };
  }
  const json = await readJson(res);
  if (!res.ok) return { ok: false, problem: problemOf(res.status, json) };
  return { ok: true, status: res.status, value: json as T };
}

/** The admin API with one token. */
export class AdminApi {
  constructor(private readonly token: string) {}

  rooms(): Promise<Answer<{ entities: Room[] }>> {
    return request('GET', '/api/v1/rooms', this.token);
  }

  createRoom(name: string, topic: string | null): Promise<Answer<Room>> {
    return request('POST', '/api/v1/rooms', this.token, topic === null ? { name } : { name, topic });
  }

  updateRoom(id: string, change: { name: string; topic: string | null }): Promise<Answer<Room>> {
    return request('PATCH', `/api/v1/rooms/${encodeURIComponent(id)}`, this.token, change);
  }

  deleteRoom(id: string): Promise<Answer<undefined>> {
    return request('DELETE', `/api/v1/rooms/${encodeURIComponent(id)}`, this.token);
  }

  webhooks(): Promise<Answer<{ entities: Webhook[] }>> {
    return request('GET', '/api/v1/webhooks', this.token);
  }

  webhook(id: string): Promise<Answer<Webhook>> {
    return request('GET', `/api/v1/webhooks/${encodeURIComponent(id)}`, this.token);
  }

  createWebhook(input: NewWebhook): Promise<Answer<Webhook>> {
    return request('POST', '/api/v1/webhooks', this.token, input);
  }

  setActive(id: string, active: boolean): Promise<Answer<Webhook>> {
    return request('PATCH', `/api/v1/webhooks/${encodeURIComponent(id)}`, this.token, { active });
  }

  rotate(id: string): Promise<Answer<Webhook>> {
    return request('POST', `/api/v1/webhooks/${encodeURIComponent(id)}/rotate`, this.token);
  }

  deleteWebhook(id: string): Promise<Answer<undefined>> {
    return request('DELETE', `/api/v1/webhooks/${encodeURIComponent(id)}`, this.token);
  }

  viewerLinks(roomId: string): Promise<Answer<{ entities: ViewerLink[] }>> {
    return request('GET', `/api/v1/rooms/${encodeURIComponent(roomId)}/viewer-links`, this.token);
  }

  createViewerLink(roomId: string, label: string): Promise<Answer<ViewerLinkWithSecret>> {
    return request('POST', `/api/v1/rooms/${encodeURIComponent(roomId)}/viewer-links`, this.token, { label });
  }

  rotateViewerLink(roomId: string, id: string): Promise<Answer<ViewerLinkWithSecret>> {
    return request('POST', `/api/v1/rooms/${encodeURIComponent(roomId)}/viewer-links/${encodeURIComponent(id)}/rotate`, this.token);
  }

  revokeViewerLink(roomId: string, id: string): Promise<Answer<undefined>> {
    return request('DELETE', `/api/v1/rooms/${encodeURIComponent(roomId)}/viewer-links/${encodeURIComponent(id)}`, this.token);
  }

  tokens(): Promise<Answer<{ entities: ApiToken[] }>> {
    return request('GET', '/api/v1/tokens', this.token);
  }

  createToken(name: string, permissions: Permission[]): Promise<Answer<ApiTokenWithSecret>> {
    return request('POST', '/api/v1/tokens', this.token, { name, permissions });
  }

  revokeToken(id: string): Promise<Answer<undefined>> {
    return request('DELETE', `/api/v1/tokens/${encodeURIComponent(id)}`, this.token);
  }

  oauthClients(): Promise<Answer<{ entities: OAuthClient[] }>> {
    return request('GET', '/api/v2/oauth/clients', this.token);
  }

  createOAuthClient(input: NewOAuthClient): Promise<Answer<OAuthClientWithSecret>> {
    return request('POST', '/api/v2/oauth/clients', this.token, input);
  }

  /** The API revokes the client (its row stays, `inactive`): what the page calls deleting it. */
  deleteOAuthClient(id: string): Promise<Answer<undefined>> {
    return request('DELETE', `/api/v2/oauth/clients/${encodeURIComponent(id)}`, this.token);
  }

  deliveries(id: string, before?: number): Promise<Answer<DeliveryPage>> {
    const query = new URLSearchParams({ limit: String(DELIVERY_PAGE) });
    if (before !== undefined) query.set('before', String(before));
    return request('GET', `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries?${query}`, this.token);
  }
}

/** Deliveries shown per page (the API allows up to 100; its log keeps 100 per webhook). */
export const DELIVERY_PAGE = 20;

/**
 * A test post to a webhook's URL, as a sender would make it (no token: the URL's secret is the
 * credential). Sent to the URL's path on this origin, so the page's `connect-src 'self'` allows it.
 */
export function testPost(webhookUrl: string, message: string): Promise<Answer<unknown>> {
  const url = new URL(webhookUrl, location.origin);
  return request('POST', url.pathname, null, { message });
}
