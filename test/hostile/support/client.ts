/**
 * Sends requests straight to the Worker's fetch handler (src/index.ts) with the real bindings from
 * `cloudflare:test`: the same app, D1 and Durable Objects as `exports.default.fetch` in
 * test/helpers.ts, without its loopback, which costs 10–100× more per request and would make
 * thousands of fuzzed requests too slow for CI.
 */
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import worker from '../../../src/index';
import { ADMIN_TOKEN, BASE, type Sent } from '../../helpers';
import { inBackground } from './background';

export interface CallOptions {
  /** Bearer token; `null` sends no Authorization header; default ADMIN_TOKEN. */
  token?: string | null;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
}

export async function call(method: string, path: string, opts: CallOptions = {}): Promise<Sent> {
  const res = await callRaw(method, path, opts);
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('Content-Type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The Response itself (a 101 carries its WebSocket). */
export async function callRaw(method: string, path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['Content-Type'] ??= 'application/json';
  }
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(BASE + path, { method, headers, body }), env, ctx);
  // Answered: its waitUntil work goes on beside the next requests (background.ts).
  inBackground(waitOnExecutionContext(ctx));
  return res;
}
