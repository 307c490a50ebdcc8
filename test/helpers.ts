import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';

export const ADMIN_TOKEN = 'test-admin-token';
export const BASE = 'http://switchboard.test';

export interface Sent {
  status: number;
  headers: Headers;
  body: any;
}

/** Sends a request through the Worker's real fetch handler and parses a JSON answer. */
export async function send(
  method: string,
  path: string,
  opts: { token?: string | null; json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await exports.default.fetch(new Request(BASE + path, { method, headers, body }));
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('Content-Type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Asserts the common error shape with a specific code and status. */
export function expectError(res: Sent, status: number, code: string, fieldName?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ code, status, message: expect.any(String), details: expect.any(Array), errors: expect.any(Array) });
  expect(res.body.contextId).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.headers.get('ININ-Correlation-Id')).toBe(res.body.contextId);
  if (fieldName !== undefined) {
    expect(res.body.details.map((d: { fieldName?: string }) => d.fieldName)).toContain(fieldName);
  }
}

export async function createToken(permissions: string[], name = 'test'): Promise<{ id: string; token: string }> {
  const res = await send('POST', '/api/v1/tokens', { json: { name, permissions } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
