import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import { ApiError } from '../http/api-error';
import { assertWellFormed, readBodyBytes, utf8 } from '../http/json-body';
import type { AppEnv } from '../http/context';
import { sha256Hex } from '../http/secrets';
import { issuesToError, TOO_LARGE_ISSUE } from '../http/validate';
import { DeliveryError, storeUnavailable, webhookNotFound } from './chat-errors';
import { keepLease, takeLeased, tokensOwed } from './admission-lease';
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
import { forgetWebhook, knownWebhook, rememberWebhook } from './webhook-cache';
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

function admissionError(admission: Exclude<Admission, { kind: 'go' | 'replay' | 'stale' }>): ApiError {
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

/** The gate's copy of the webhook differs from the one this attempt used: run again on the gate's. */
class StaleWebhook extends Error {
  constructor(readonly hook: WebhookRow | null) {
    super('stale webhook copy');
  }
}

/** A success that would rest on the isolate's unchecked copy: get the row from D1 and answer again. */
class Unverified extends Error {
  constructor() {
    super('answer needs a verified webhook');
  }
}

/** A 4xx answer (or an unverified success) that may rest on the copy; failures (5xx) are not tried again. */
function isRefusal(err: unknown): boolean {
  return err instanceof Unverified || (err instanceof ApiError && err.status < 500);
}

/** Attempts of one post: the first may use the isolate's copy, later ones use the gate's answer. */
const MAX_ATTEMPTS = 3;

/**
 * One post's view of its webhook and body. The row comes from the isolate's cache (webhook-cache.ts)
 * when it has it, else from D1; either way the gate checks its version before the post is admitted
 * (`verified`), and a refusal made on a cached copy before that check is made again on a fresh one.
 */
class PostAttempt {
  usedCache = false;
  verified = false;

  constructor(
    private readonly c: Context<AppEnv>,
    readonly id: string,
    private readonly bodyOnce: () => Promise<Uint8Array>,
    /** Given by the gate (null: no such webhook), or 'lookup' (D1) or 'cache' (the isolate's copy, else D1). */
    private readonly source: WebhookRow | null | 'lookup' | 'cache',
  ) {}

  body(): Promise<Uint8Array> {
    return this.bodyOnce();
  }

  /** The webhook for this URL, or undefined; 503 when the store cannot be asked. */
  async hook(): Promise<WebhookRow | undefined> {
    if (this.source === null) return undefined;
    if (typeof this.source !== 'string') return this.source;
    if (this.source === 'cache') {
      const cached = knownWebhook(this.id);
      if (cached) {
        this.usedCache = true;
        return cached;
      }
    }
    let row: WebhookRow | undefined;
    try {
      row = await findWebhookByUrlId(this.c.var.db, this.id);
    } catch (err) {
      console.error('webhook lookup failed', err);
      throw storeUnavailable();
    }
    if (row) rememberWebhook(this.id, row);
    else forgetWebhook(this.id);
    return row;
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
  attempt: PostAttempt,
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

  // Made only when a post talks to the gate: a leased post (no key) never does.
  const gate = () => gateStub(c.env, hook.id);
  let admission: Admission;
  if (idempotency === undefined && takeLeased(hook)) {
    // A token of this isolate's lease on this very copy of the webhook (admission-lease.ts).
    admission = { kind: 'go' };
  } else {
    const askedAt = Date.now();
    try {
      admission = await gate().admit({
        webhook: { id: hook.id, version: hook.updatedAt },
        rateLimit: { burst: hook.rateBurst, perSecond: hook.ratePerSecond },
        idempotency,
        lease: idempotency === undefined ? { returned: tokensOwed(hook.id) } : undefined,
      });
    } catch (err) {
      console.error('webhook gate failed', err);
      throw storeUnavailable();
    }
    if (admission.kind === 'stale') throw new StaleWebhook(admission.hook);
    if (admission.kind === 'go' && admission.leased) keepLease(hook, admission.leased, askedAt);
  }
  attempt.verified = true;
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
    if (key !== undefined) await gate().release(key, maybeStored).catch(() => undefined);
    throw err;
  }
  const body = JSON.stringify({ deliveries: result.deliveries });
  if (key !== undefined) {
    // Stored already: a failure to remember the answer must not turn the success into an error.
    await gate().complete(key, result.status, body).catch((err: unknown) => console.error('idempotency record failed', err));
  }
  return respond(result.status, body, false);
}

/** A tool's own payload: translated, then posted like a generic one. */
async function postNative(
  c: Context<AppEnv>,
  attempt: PostAttempt,
  hook: WebhookRow,
  kind: NativeKind,
  post: NativePost,
  body: Uint8Array,
): Promise<Response> {
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
    if (attempt.usedCache) throw new Unverified();
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
  return store(c, attempt, hook, markdown, metadata, idempotency, answer);
}

export const webhookPostRoutes = new Hono<AppEnv>().post('/webhooks/api/v1/webhook/:id', wellFormedId, async (c) => {
  const id = c.req.param('id');
  // Read at most once whatever the attempts (a rejection, e.g. 413, is the same for each).
  let body: Promise<Uint8Array> | undefined;
  const bodyOnce = () => (body ??= readBodyBytes(c.req.raw, CHAT_LIMITS.webhookBodyBytes));
  let attempt = new PostAttempt(c, id, bodyOnce, 'cache');
  for (let n = 1; ; n++) {
    try {
      return await post(c, attempt);
    } catch (err) {
      if (err instanceof StaleWebhook) {
        if (err.hook) rememberWebhook(id, err.hook);
        else forgetWebhook(id);
        if (n >= MAX_ATTEMPTS) throw storeUnavailable();
        attempt = new PostAttempt(c, id, bodyOnce, err.hook);
      } else if (attempt.usedCache && !attempt.verified && n < MAX_ATTEMPTS && isRefusal(err)) {
        // Refused on the isolate's copy: that copy may be stale, so refuse (or not) on D1's.
        attempt = new PostAttempt(c, id, bodyOnce, 'lookup');
      } else {
        throw err;
      }
    }
  }
});

async function post(c: Context<AppEnv>, attempt: PostAttempt): Promise<Response> {
  const header = (name: string) => c.req.header(name);
  const contentType = c.req.header('Content-Type') ?? '';
  const format = bodyFormat(contentType);
  if (format === null) throw unsupportedMediaType(contentType);

  if (format !== 'application/json') {
    // Only a tool's own payload comes as a form or XML; which kinds take it is the webhook's to say.
    const hook = await attempt.hook();
    if (!hook || !isNativeKind(hook.kind) || !NATIVE_MEDIA_TYPES[hook.kind].includes(format)) {
      throw unsupportedMediaType(contentType, hook && isNativeKind(hook.kind) ? hook.kind : undefined);
    }
    const body = await attempt.body();
    return postNative(c, attempt, hook, hook.kind, { mediaType: format, text: utf8.decode(body), header }, body);
  }

  const body = await attempt.body();
  const text = utf8.decode(body);
  const json = parseJson(text);
  const generic = webhookMessageSchema.safeParse(json);
  if (generic.success) {
    // The generic body: answered exactly as before native payloads existed (validation, then the key, then the webhook).
    const { message, metadata = null } = generic.data;
    const key = idempotencyKey(header);
    const hook = usable(await attempt.hook());
    await verifySignature(hook, body, header);
    const idempotency = key === undefined ? undefined : { key, fingerprint: await contentFingerprint(message, metadata) };
    return store(c, attempt, hook, message, metadata, idempotency, 'json');
  }
  // A broken generic body gets the answer it always got, whatever the webhook.
  if (isGenericAttempt(json)) throw issuesToError(generic.error.issues);
  const hook = await attempt.hook();
  // So does anything else sent to an unknown or generic webhook; a tool's webhook reads its own payload.
  if (!hook || !isNativeKind(hook.kind)) throw issuesToError(generic.error.issues);
  return postNative(c, attempt, hook, hook.kind, { mediaType: format, text, json, header }, body);
}
