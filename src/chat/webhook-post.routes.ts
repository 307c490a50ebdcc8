import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import { ApiError } from '../http/api-error';
import { assertWellFormed } from '../http/json-body';
import type { AppEnv } from '../http/context';
import { sha256Hex } from '../http/secrets';
import { issuesToError, TOO_LARGE_ISSUE } from '../http/validate';
import { DeliveryError, storeUnavailable, webhookNotFound } from './chat-errors';
import { deliver, gateStub } from './deliver';
import {
  isNativeKind,
  NATIVE_MEDIA_TYPES,
  SIGNATURE_HEADERS,
  SOAP_ACK,
  translate,
  type NativeKind,
  type NativeMediaType,
  type NativePost,
} from './integrations';
import { signatureMatches } from './integrations/signature';
import { CHAT_LIMITS, codePointLength, isUuid } from './limits';
import { renderMarkdown } from './markdown';
import { routeMessage } from './routing';
import type { Admission } from './webhook-gate';
import { findWebhookByUrlId, type WebhookRow } from './webhooks.store';

/** `{message, metadata?}` (Genesys' generic webhook body); unknown fields are ignored. */
export const webhookMessageSchema = z.object({
  message: z
    .string({ error: 'message is required and must be a string' })
    .refine((m) => m.trim().length > 0, { message: 'message must not be empty' })
    .refine((m) => codePointLength(m) <= CHAT_LIMITS.messageChars, {
      message: `message is longer than ${CHAT_LIMITS.messageChars} characters`,
      params: TOO_LARGE_ISSUE,
    }),
  metadata: z
    .string({ error: 'metadata must be a string' })
    .refine((m) => codePointLength(m) <= CHAT_LIMITS.metadataChars, {
      message: `metadata is longer than ${CHAT_LIMITS.metadataChars} characters`,
      params: TOO_LARGE_ISSUE,
    })
    .nullish(),
});

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** `Idempotency-Key`, or GitHub's `X-GitHub-Delivery` (the same on a redelivery). */
function idempotencyKey(header: (name: string) => string | undefined): string | undefined {
  for (const name of ['Idempotency-Key', 'X-GitHub-Delivery']) {
    const value = header(name);
    if (value === undefined) continue;
    if (!IDEMPOTENCY_KEY.test(value)) {
      throw ApiError.invalidValue(name, `${name} must be 1 to ${CHAT_LIMITS.idempotencyKeyChars} printable ASCII characters.`);
    }
    return value;
  }
  return undefined;
}

/** A malformed id cannot name a webhook: answer before reading the body, with the one 404. */
const wellFormedId = createMiddleware<AppEnv>(async (c, next) => {
  if (!isUuid(c.req.param('id') ?? '')) throw webhookNotFound();
  await next();
});

function admissionError(admission: Exclude<Admission, { kind: 'go' | 'replay' }>): ApiError {
  switch (admission.kind) {
    case 'limited':
      return new ApiError(429, 'too.many.requests', 'This webhook is over its rate limit.', [], {
        'Retry-After': String(admission.retryAfterSeconds),
      });
    case 'in-progress':
      return new ApiError(409, 'conflict', 'A request with this idempotency key is still in progress.', [], { 'Retry-After': '1' });
    case 'key-reused':
      return new ApiError(409, 'conflict', 'This idempotency key was already used for a different message.');
  }
}

/** The webhook for this URL, or undefined; 503 when the store cannot be asked. */
async function findHook(c: { var: AppEnv['Variables'] }, id: string): Promise<WebhookRow | undefined> {
  try {
    return await findWebhookByUrlId(c.var.db, id);
  } catch (err) {
    console.error('webhook lookup failed', err);
    throw storeUnavailable();
  }
}

function usable(hook: WebhookRow | undefined): WebhookRow {
  if (!hook) throw webhookNotFound();
  if (!hook.active) throw new ApiError(403, 'webhook.inactive', 'This webhook is paused.');
  return hook;
}

// ---------------------------------------------------------------------------------------------
// The body: read once, as bytes (a signature covers exactly the bytes received).
// ---------------------------------------------------------------------------------------------

/** As json-body.ts: JSON with any parameters. */
const JSON_MEDIA_TYPE = /^application\/json\s*(;.*)?$/i;

function bodyFormat(contentType: string): NativeMediaType | null {
  if (JSON_MEDIA_TYPE.test(contentType)) return 'application/json';
  const media = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (media === 'application/x-www-form-urlencoded') return media;
  if (media === 'text/xml' || media === 'application/xml') return 'text/xml';
  return null;
}

function unsupportedMediaType(contentType: string, kind?: NativeKind): ApiError {
  const accepted = kind ? NATIVE_MEDIA_TYPES[kind].join(' or ') : 'application/json';
  return new ApiError(
    415,
    'unsupported.media.type',
    `Unsupported Content-Type ${contentType ? `'${contentType}'` : '(none)'}; send ${accepted}.`,
  );
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'payload.too.large', `The request body exceeds the limit of ${maxBytes} bytes.`);
}

/** The body, refused (413) past `maxBytes` by Content-Length or while streaming. */
async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('Content-Length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The same answer the JSON validator gives every other route (app.ts maps it to bad.request).
    throw new HTTPException(400, { message: 'Malformed JSON in request body' });
  }
  // Storage keeps UTF-8: a lone surrogate would be stored as U+FFFD, not as acknowledged.
  assertWellFormed(text);
  return value;
}

/** A JSON object with a `message` field means the generic body, whatever the webhook's kind. */
function isGenericAttempt(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, 'message');
}

// ---------------------------------------------------------------------------------------------
// Posting: the same gate (rate limit, idempotency), routing and delivery for every body.
// ---------------------------------------------------------------------------------------------

interface Idempotency {
  key: string;
  fingerprint: string;
}

type Answer = 'json' | 'soap';

async function verifySignature(hook: WebhookRow, body: Uint8Array, header: (name: string) => string | undefined): Promise<void> {
  if (hook.secret === null) return;
  const name = (isNativeKind(hook.kind) ? SIGNATURE_HEADERS[hook.kind] : undefined) ?? 'X-Hub-Signature-256';
  const value = header(name);
  const details = [{ errorCode: 'bad.signature', fieldName: name }];
  if (value === undefined) {
    throw new ApiError(401, 'bad.signature', `This webhook has a secret: send ${name}: sha256=<hex HMAC-SHA256 of the body>.`, details);
  }
  if (!(await signatureMatches(hook.secret, body, value))) {
    throw new ApiError(401, 'bad.signature', `${name} does not match the body and this webhook's secret.`, details);
  }
}

async function contentFingerprint(markdown: string, metadata: string | null): Promise<string> {
  return sha256Hex(JSON.stringify([markdown, metadata]));
}

async function store(
  c: Context<AppEnv>,
  hook: WebhookRow,
  markdown: string,
  metadata: string | null,
  idempotency: Idempotency | undefined,
  answer: Answer,
): Promise<Response> {
  const respond = (status: number, body: string, replayed: boolean): Response => {
    const headers: Record<string, string> = replayed ? { 'Idempotent-Replayed': 'true' } : {};
    // Salesforce only counts a delivery as done on its SOAP acknowledgement.
    if (answer === 'soap') return c.body(SOAP_ACK, 200, { ...headers, 'Content-Type': 'text/xml; charset=utf-8' });
    return c.body(body, status as 200, { ...headers, 'Content-Type': 'application/json' });
  };

  const gate = gateStub(c.env, hook.id);
  let admission: Admission;
  try {
    admission = await gate.admit({ rateLimit: { burst: hook.rateBurst, perSecond: hook.ratePerSecond }, idempotency });
  } catch (err) {
    console.error('webhook gate failed', err);
    throw storeUnavailable();
  }
  if (admission.kind === 'replay') return respond(admission.status, admission.body, true);
  if (admission.kind !== 'go') throw admissionError(admission);

  const key = idempotency?.key;
  let result;
  try {
    const targets = routeMessage(hook, markdown, metadata);
    const posted = { webhookId: hook.id, markdown, html: renderMarkdown(markdown), metadata };
    result = await deliver(c.env, targets, posted, admission.attempt);
  } catch (err) {
    const maybeStored = err instanceof DeliveryError ? err.maybeStored : false;
    if (key !== undefined) await gate.release(key, maybeStored).catch(() => undefined);
    throw err;
  }
  const body = JSON.stringify({ deliveries: result.deliveries });
  if (key !== undefined) {
    // Stored already: a failure to remember the answer must not turn the success into an error.
    await gate.complete(key, result.status, body).catch((err: unknown) => console.error('idempotency record failed', err));
  }
  return respond(result.status, body, false);
}

/** A tool's own payload: translated, then posted like a generic one. */
async function postNative(c: Context<AppEnv>, hook: WebhookRow, kind: NativeKind, post: NativePost, body: Uint8Array): Promise<Response> {
  const header = (name: string) => c.req.header(name);
  const key = idempotencyKey(header);
  usable(hook);
  await verifySignature(hook, body, header);

  const translation = translate(kind, post);
  if (translation.kind === 'unrecognised') {
    throw new ApiError(400, 'invalid.value', translation.expected, [{ errorCode: 'invalid.value', fieldName: translation.fieldName }]);
  }
  const answer: Answer = post.mediaType === 'text/xml' ? 'soap' : 'json';
  if (translation.kind === 'ignored') {
    if (answer === 'soap') return c.body(SOAP_ACK, 200, { 'Content-Type': 'text/xml; charset=utf-8' });
    return c.body(JSON.stringify({ deliveries: [], ignored: translation.reason }), 200, { 'Content-Type': 'application/json' });
  }

  const { markdown, metadata, deliveryKey } = translation;
  let idempotency: Idempotency | undefined;
  if (key !== undefined) {
    idempotency = { key, fingerprint: await contentFingerprint(markdown, metadata) };
  } else if (deliveryKey !== undefined) {
    const id = await sha256Hex(deliveryKey.id);
    idempotency = {
      key: `${kind}:${id}`,
      fingerprint: deliveryKey.contentMayChange ? id : await contentFingerprint(markdown, metadata),
    };
  }
  return store(c, hook, markdown, metadata, idempotency, answer);
}

export const webhookPostRoutes = new Hono<AppEnv>().post('/webhooks/api/v1/webhook/:id', wellFormedId, async (c) => {
  const id = c.req.param('id');
  const header = (name: string) => c.req.header(name);
  const contentType = c.req.header('Content-Type') ?? '';
  const format = bodyFormat(contentType);
  if (format === null) throw unsupportedMediaType(contentType);

  if (format !== 'application/json') {
    // Only a tool's own payload comes as a form or XML; which kinds take it is the webhook's to say.
    const hook = await findHook(c, id);
    if (!hook || !isNativeKind(hook.kind) || !NATIVE_MEDIA_TYPES[hook.kind].includes(format)) {
      throw unsupportedMediaType(contentType, hook && isNativeKind(hook.kind) ? hook.kind : undefined);
    }
    const body = await readBody(c.req.raw, CHAT_LIMITS.webhookBodyBytes);
    return postNative(c, hook, hook.kind, { mediaType: format, text: new TextDecoder().decode(body), header }, body);
  }

  const body = await readBody(c.req.raw, CHAT_LIMITS.webhookBodyBytes);
  const text = new TextDecoder().decode(body);
  const json = parseJson(text);
  const generic = webhookMessageSchema.safeParse(json);
  if (generic.success) {
    // The generic body: answered exactly as before native payloads existed (validation, then the key, then the webhook).
    const { message, metadata = null } = generic.data;
    const key = idempotencyKey(header);
    const hook = usable(await findHook(c, id));
    await verifySignature(hook, body, header);
    const idempotency = key === undefined ? undefined : { key, fingerprint: await contentFingerprint(message, metadata) };
    return store(c, hook, message, metadata, idempotency, 'json');
  }
  // A broken generic body gets the answer it always got, whatever the webhook.
  if (isGenericAttempt(json)) throw issuesToError(generic.error.issues);
  const hook = await findHook(c, id);
  // So does anything else sent to an unknown or generic webhook; a tool's webhook reads its own payload.
  if (!hook || !isNativeKind(hook.kind)) throw issuesToError(generic.error.issues);
  return postNative(c, hook, hook.kind, { mediaType: format, text, json, header }, body);
});
