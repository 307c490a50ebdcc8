/**
 * Request bodies for the fuzzers, and the transport-level verdict every JSON route shares (415, 413,
 * malformed JSON, lone surrogates), worked out from the README, not from src/http.
 */
import fc from 'fast-check';
import type { Sent } from '../../helpers';
import { call as send } from './client';
import {
  acceptedContentType,
  clip,
  anyJson,
  brokenJsonText,
  deepNesting,
  hasLoneSurrogate,
  invalidUtf8Body,
  refusedContentType,
  RawJson,
  toJsonText,
} from './arbitraries';

export interface Body {
  /** What goes on the wire. */
  bytes: Uint8Array;
  contentType: string | undefined;
  /** How it was made, for the failure report. */
  label: string;
}

const encoder = new TextEncoder();

export function jsonBody(value: unknown, contentType: string | undefined = 'application/json', label = 'json'): Body {
  return makeBody(encoder.encode(toJsonText(value)), contentType, label);
}

/** A body that fast-check reports readably (a short text, not a byte dump). */
export function makeBody(bytes: Uint8Array, contentType: string | undefined, label: string): Body {
  const body: Body = { bytes, contentType, label };
  Object.defineProperty(body, fc.toStringMethod, { value: () => describe(body), enumerable: false });
  return body;
}

export function describe(body: Body): string {
  const text = new TextDecoder().decode(body.bytes);
  return `${body.label} [${body.contentType ?? 'no Content-Type'}] ${body.bytes.length} B: ${clip(text, 300)}`;
}

/** Sends a body as it is. */
export async function sendBody(
  method: string,
  path: string,
  body: Body,
  opts: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (body.contentType !== undefined) headers['Content-Type'] = body.contentType;
  return send(method, path, { token: opts.token, body: body.bytes, headers });
}

/**
 * Bodies around a route's schema: mostly the generated (valid or mutated) object, else the same with
 * a refused content type, any JSON at all, broken JSON, invalid UTF-8, deep nesting, or padding past
 * the size limit.
 */
export function bodiesAround(nearSchema: fc.Arbitrary<unknown>, limitBytes: number): fc.Arbitrary<Body> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.tuple(nearSchema, acceptedContentType).map(([v, ct]) => jsonBody(v, ct, 'near schema')) },
    { weight: 1, arbitrary: fc.tuple(nearSchema, refusedContentType).map(([v, ct]) => jsonBody(v, ct, 'refused type')) },
    { weight: 2, arbitrary: anyJson.map((v) => jsonBody(v, 'application/json', 'any json')) },
    { weight: 1, arbitrary: brokenJsonText.map((t) => makeBody(encoder.encode(t), 'application/json', 'broken json')) },
    { weight: 1, arbitrary: invalidUtf8Body.map((bytes) => makeBody(bytes, 'application/json', 'invalid utf-8')) },
    { weight: 1, arbitrary: deepNesting.map((raw) => jsonBody(raw, 'application/json', 'deep')) },
    {
      weight: 1,
      arbitrary: fc.tuple(nearSchema, fc.constantFrom(-1, 0, 1, 1000)).map(([v, extra]) => padTo(v, limitBytes + extra)),
    },
  );
}

/** The object `v` (or `{}`) with a `padding` field making the body exactly `bytes` long, when it can. */
export function padTo(v: unknown, bytes: number): Body {
  const base = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const probe = toJsonText({ ...base, padding: '' });
  const room = bytes - encoder.encode(probe).length;
  const value = { ...base, padding: 'p'.repeat(Math.max(0, room)) };
  return jsonBody(value, 'application/json', `padded to ${bytes} B`);
}

export type Verdict = { status: number; codes: readonly string[] };

export const NOT_JSON = Symbol('not json');

/** The parsed value of the body as the server would see it, or NOT_JSON. */
export function parsed(body: Body): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    return NOT_JSON;
  }
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** README: "anything but application/json (a charset parameter is fine)": 415; then size, JSON, Unicode. */
export function transportVerdict(body: Body, limitBytes: number): Verdict | undefined {
  if (mediaType(body.contentType) !== 'application/json') return { status: 415, codes: ['unsupported.media.type'] };
  if (body.bytes.length > limitBytes) return { status: 413, codes: ['payload.too.large'] };
  const value = parsed(body);
  if (value === NOT_JSON) return { status: 400, codes: ['bad.request'] };
  if (containsLoneSurrogate(value)) return { status: 400, codes: ['invalid.value'] };
  return undefined;
}

export function containsLoneSurrogate(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (hasLoneSurrogate(v)) return true;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (hasLoneSurrogate(k)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export { RawJson };
