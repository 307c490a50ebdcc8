import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import { BASE, send } from '../helpers';

export const CLIENTS = '/api/v2/oauth/clients';
export const QUERY = '/api/v2/analytics/conversations/aggregates/query';

export interface CreatedClient {
  id: string;
  secret: string;
  [key: string]: unknown;
}

export async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Creates a client with the admin token and insists on 201. */
export async function createClient(permissions: string[], extra: Record<string, unknown> = {}): Promise<CreatedClient> {
  const res = await send('POST', CLIENTS, {
    json: { name: 'wallboard', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** `base64(id:secret)`, built here with btoa over the UTF-8 bytes, as Node's Buffer does for the SDK. */
export function basic(id: string, secret: string): string {
  let binary = '';
  for (const b of new TextEncoder().encode(`${id}:${secret}`)) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

export interface TokenAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** A raw request to the token endpoint; defaults are the bytes Genesys' SDK sends (see docs/clients.md). */
export async function tokenRequest(
  opts: { authorization?: string; body?: string; contentType?: string | null } = {},
): Promise<TokenAnswer> {
  const headers: Record<string, string> = {};
  if (opts.authorization !== undefined) headers.Authorization = opts.authorization;
  const contentType = opts.contentType === undefined ? 'application/x-www-form-urlencoded' : opts.contentType;
  if (contentType !== null) headers['Content-Type'] = contentType;
  const res = await exports.default.fetch(
    new Request(`${BASE}/oauth/token`, { method: 'POST', headers, body: opts.body ?? 'grant_type=client_credentials' }),
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Logs the client in as the SDK does and insists on 200; answers the access token. */
export async function login(client: { id: string; secret: string }): Promise<string> {
  const res = await tokenRequest({ authorization: basic(client.id, client.secret) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token;
}

/** Asserts an RFC 6749 §5.2 error answer. */
export function expectOAuthError(res: TokenAnswer, status: 400 | 401, error: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error, error_description: expect.any(String) });
  expect(res.body.error_description.length).toBeGreaterThan(0);
  expect(res.headers.get('Cache-Control')).toBe('no-store');
  if (status === 401) expect(res.headers.get('WWW-Authenticate')).toMatch(/^Basic realm="switchboard"/);
  else expect(res.headers.get('WWW-Authenticate')).toBeNull();
}
