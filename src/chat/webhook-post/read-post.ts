import { z } from 'zod';
import { ApiError } from '../../http/api-error';
import { assertWellFormed } from '../../http/json-body';
import { sha256Hex } from '../../http/secrets';
import { issuesToError, TOO_LARGE_ISSUE } from '../../http/validate';
import { webhookNotFound } from '../chat-errors';
import {
  isNativeKind,
  looksLikeDiscord,
  looksLikeSlack,
  NATIVE_MEDIA_TYPES,
  senderOverride,
  SIGNATURE_HEADERS,
  translate,
  type NativeKind,
  type NativeMediaType,
  type NativePost,
} from '../integrations';
import { signatureMatches } from '../integrations/signature';
import { CHAT_LIMITS, codePointLength } from '../limits';
import { MESSAGE_LEVELS, type MessageLevel } from '../protocol';
import { routeMessage } from '../routing';
import type { WebhookRow } from '../webhooks.store';
import { applicableOverride, type AppliedOverride } from './sender';

/** A webhook post as the route received it: the body is read once, on first use, within its limit. */
export interface PostRequest {
  contentType: string;
  header(name: string): string | undefined;
  /** A query parameter of the webhook URL (`?answer=slack`). */
  query?(name: string): string | undefined;
  body(): Promise<Uint8Array>;
}

export interface Idempotency {
  key: string;
  /** Identifies the content, so a key reused for another message is told apart. */
  fingerprint: string;
}

/**
 * How a sender wants its acknowledgement: our JSON, the SOAP answer Salesforce waits for, or Slack's
 * `ok` (text/plain) when the URL says `?answer=slack` (senders written for Slack may check for it).
 */
export type AnswerFormat = 'json' | 'soap' | 'slack';

/**
 * What a post asks for, read against one copy of its webhook:
 * - `post`: a message to store in `targets` (routed by that copy's mappings), after the gate admits
 *   it: the rate limit counts one token per target room;
 * - `ignored`: a tool's event that is deliberately not shown (acknowledged, nothing stored).
 * Anything refused is thrown as an ApiError.
 */
export type ReadPost =
  | {
      kind: 'post';
      hook: WebhookRow;
      markdown: string;
      metadata: string | null;
      /** From the body (`level`), or derived from a tool's payload; default info. */
      level: MessageLevel;
      /** The post's own sender values that apply (only where the webhook allows overrides). */
      override: AppliedOverride;
      targets: string[];
      idempotency?: Idempotency;
      format: AnswerFormat;
      /** The generic body's `key`: the post replaces the message last posted with it in each room. */
      key?: string;
      /** What it takes from the rate limit, when not one token per target room (an edit or delete: 1). */
      cost?: number;
    }
  | { kind: 'ignored'; reason: string; format: AnswerFormat };

/**
 * `{message, metadata?, level?}` (Genesys' generic webhook body, and our `level`); unknown fields are
 * ignored. `username` and `iconUrl` are read apart, only where the webhook allows overrides.
 */
export const messageKeyField = z
  .string({ error: 'key must be a string' })
  .regex(/^[^\u0000-\u001f\u007f]{1,255}$/u, { message: 'key must be 1 to 255 characters, no control characters' });

const webhookMessageSchema = z.object({
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
  level: z.enum(MESSAGE_LEVELS, { error: `level must be one of ${MESSAGE_LEVELS.join(', ')}` }).nullish(),
  key: messageKeyField.nullish(),
});

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/**
 * Fatal: bytes that are not UTF-8 are refused rather than stored as U+FFFD, as lone surrogates are (a
 * message is stored as it was acknowledged, or not at all). One decoder: decode() without `stream`
 * keeps no state between calls.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
/** As json-body.ts: JSON with any parameters. */
const JSON_MEDIA_TYPE = /^application\/json\s*(;.*)?$/i;

/** The body as bytes, text and (for JSON) a parsed value, each made once whatever the attempts. */
export class PostBody {
  private bytes?: Promise<Uint8Array>;
  private text?: string;
  private json?: { value: unknown };

  constructor(private readonly request: PostRequest) {}

  read(): Promise<Uint8Array> {
    return (this.bytes ??= this.request.body());
  }

  async asText(): Promise<string> {
    if (this.text === undefined) {
      const bytes = await this.read();
      try {
        this.text = strictUtf8.decode(bytes);
      } catch {
        throw new ApiError(400, 'bad.request', 'The request body is not valid UTF-8.');
      }
    }
    return this.text;
  }

  async asJson(): Promise<unknown> {
    if (!this.json) {
      const text = await this.asText();
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        // The answer every other route gives a malformed JSON body.
        throw new ApiError(400, 'bad.request', 'The request could not be understood by the server due to malformed syntax.');
      }
      // Storage keeps UTF-8: a lone surrogate would be stored as U+FFFD, not as acknowledged.
      assertWellFormed(text);
      this.json = { value };
    }
    return this.json.value;
  }
}

/** One copy of the post's webhook, asked for only when the answer depends on it (undefined: no such webhook). */
export type WebhookCopy = () => Promise<WebhookRow | undefined>;

/**
 * Reads a post against one copy of its webhook: which body it is, whether it is signed, what message
 * it makes. Refusals are thrown in the order senders have always been answered: the media type, then
 * a broken generic body, then the key, then the webhook, then the signature.
 */
export async function readPost(webhook: WebhookCopy, request: PostRequest, body: PostBody): Promise<ReadPost> {
  const format = bodyFormat(request.contentType);
  if (format === null) throw unsupportedMediaType(request.contentType);

  if (format !== 'application/json') {
    const hook = await webhook();
    // Only a tool's own payload comes as a form or XML; which kinds take it is the webhook's to say.
    if (!hook || !isNativeKind(hook.kind) || !NATIVE_MEDIA_TYPES[hook.kind].includes(format)) {
      throw unsupportedMediaType(request.contentType, hook && isNativeKind(hook.kind) ? hook.kind : undefined);
    }
    if (format === 'multipart/form-data') {
      return readNative(hook, hook.kind, await multipartPost(request, await body.read()), request, body);
    }
    return readNative(hook, hook.kind, { mediaType: format, text: await body.asText(), header: request.header }, request, body);
  }

  const json = await body.asJson();
  const generic = webhookMessageSchema.safeParse(json);
  if (generic.success) {
    const { message, metadata = null } = generic.data;
    const level = generic.data.level ?? 'info';
    const key = idempotencyKey(request.header);
    const usableHook = usable(await webhook());
    await verifySignature(usableHook, await body.read(), request.header);
    const fields = json as Record<string, unknown>;
    const override = applicableOverride(usableHook, {
      name: { field: 'username', value: fields.username },
      iconUrl: { field: 'iconUrl', value: fields.iconUrl },
    });
    const messageKey = generic.data.key ?? undefined;
    const idempotency =
      key === undefined
        ? undefined
        : {
            key,
            fingerprint: await contentFingerprint(message, metadata, level, override, messageKey === undefined ? [] : ['key', messageKey]),
          };
    const targets = routeMessage(usableHook, message, metadata);
    return {
      ...(messageKey === undefined ? {} : { key: messageKey }),
      kind: 'post',
      hook: usableHook,
      markdown: message,
      metadata,
      level,
      override,
      targets,
      idempotency,
      format: jsonFormat(request),
    };
  }
  // A broken generic body gets the answer it always got, whatever the webhook.
  if (isGenericAttempt(json)) throw issuesToError(generic.error.issues);
  // So does anything else sent to an unknown or generic webhook; a tool's webhook reads its own payload.
  const hook = await webhook();
  // A generic webhook pasted into a tool that speaks Slack's (or Mattermost's) or Discord's format:
  // read as that format, not refused. Slack's first: a body with `text` is never Discord's.
  const guessed = hook?.kind !== 'generic' ? undefined : looksLikeSlack(json) ? 'slack' : looksLikeDiscord(json) ? 'discord' : undefined;
  if (hook && guessed !== undefined) {
    return readNative(hook, guessed, { mediaType: format, text: await body.asText(), json, header: request.header }, request, body);
  }
  if (!hook || !isNativeKind(hook.kind)) throw issuesToError(generic.error.issues);
  return readNative(hook, hook.kind, { mediaType: format, text: await body.asText(), json, header: request.header }, request, body);
}

/** A tool's own payload, translated into a message. */
async function readNative(hook: WebhookRow, kind: NativeKind, post: NativePost, request: PostRequest, body: PostBody): Promise<ReadPost> {
  const key = idempotencyKey(request.header);
  usable(hook);
  await verifySignature(hook, await body.read(), request.header);

  const translation = translate(kind, post);
  if (translation.kind === 'unrecognised') {
    throw new ApiError(400, 'invalid.value', translation.expected, [{ errorCode: 'invalid.value', fieldName: translation.fieldName }]);
  }
  // Salesforce only counts a delivery as done on its SOAP acknowledgement.
  const format: AnswerFormat = post.mediaType === 'text/xml' ? 'soap' : jsonFormat(request);
  if (translation.kind === 'ignored') return { kind: 'ignored', reason: translation.reason, format };

  const { markdown, metadata, deliveryKey } = translation;
  const level = translation.level ?? 'info';
  const override = applicableOverride(hook, senderOverride(post, translation));
  let idempotency: Idempotency | undefined;
  if (key !== undefined) {
    idempotency = { key, fingerprint: await contentFingerprint(markdown, metadata, undefined, override) };
  } else if (deliveryKey !== undefined) {
    const id = await sha256Hex(deliveryKey.id);
    idempotency = {
      key: `${kind}:${id}`,
      fingerprint: deliveryKey.contentMayChange ? id : await contentFingerprint(markdown, metadata, undefined, override),
    };
  }
  const targets = routeMessage(hook, markdown, metadata);
  return { kind: 'post', hook, markdown, metadata, level, override, targets, idempotency, format };
}

/**
 * Discord's multipart body: the JSON in the `payload_json` field (or the fields themselves, as its
 * docs allow), and files, of which only the names are kept. The whole body is within the post's size
 * limit; a form that does not parse is a malformed request.
 */
async function multipartPost(request: PostRequest, bytes: Uint8Array): Promise<NativePost> {
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { 'Content-Type': request.contentType } }).formData();
  } catch {
    throw new ApiError(400, 'bad.request', 'The request could not be understood by the server due to malformed syntax.');
  }
  const fields: Record<string, string> = {};
  const files: string[] = [];
  for (const [name, value] of form) {
    if (typeof value === 'string') fields[name] = value;
    else files.push(value.name || name);
  }
  const text = fields.payload_json ?? JSON.stringify(fields);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid.value', 'The "payload_json" field must be JSON.', [
      { errorCode: 'invalid.value', fieldName: 'payload_json' },
    ]);
  }
  assertWellFormed(text);
  return { mediaType: 'multipart/form-data', text, json, files, header: request.header };
}

/** `?answer=slack` on the webhook URL asks for Slack's `ok` instead of our JSON (any kind, any body). */
function jsonFormat(request: PostRequest): AnswerFormat {
  return request.query?.('answer') === 'slack' ? 'slack' : 'json';
}

function usable(hook: WebhookRow | undefined): WebhookRow {
  if (!hook) throw webhookNotFound();
  if (!hook.active) throw new ApiError(403, 'webhook.inactive', 'This webhook is paused.');
  return hook;
}

/** `Idempotency-Key`, or GitHub's `X-GitHub-Delivery` (the same on a redelivery). */
export function idempotencyKey(header: (name: string) => string | undefined): string | undefined {
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

function bodyFormat(contentType: string): NativeMediaType | null {
  if (JSON_MEDIA_TYPE.test(contentType)) return 'application/json';
  const media = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (media === 'application/x-www-form-urlencoded') return media;
  if (media === 'text/xml' || media === 'application/xml') return 'text/xml';
  if (media === 'multipart/form-data') return media;
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

/** A JSON object with a `message` field means the generic body, whatever the webhook's kind. */
function isGenericAttempt(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, 'message');
}

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

/**
 * What a key's repeat must match. A level given in the body (other than info) and the post's own
 * sender count only when given, so the keys of posts made before they existed keep their
 * fingerprints; a level derived from a tool's payload is already told by its message and metadata.
 */
function contentFingerprint(
  markdown: string,
  metadata: string | null,
  level: MessageLevel | undefined,
  override: AppliedOverride,
  /** What else the request names (a `key`; an edit's method and message id): none for a plain post. */
  extra: readonly string[] = [],
): Promise<string> {
  const plain = (level === undefined || level === 'info') && override.name === undefined && override.iconUrl === undefined;
  const content = plain ? [markdown, metadata] : [markdown, metadata, level, override.name ?? null, override.iconUrl ?? null];
  return sha256Hex(JSON.stringify(extra.length === 0 ? content : [...content, ...extra]));
}

/** `{message, metadata?, level?}`: a person's post or edit (chat:write), the same rules as a webhook's. */
export const messageBodySchema = webhookMessageSchema.omit({ key: true });

/**
 * A webhook's edit (`PATCH`, the generic body `{message, metadata?, level?}` and, where the webhook
 * allows overrides, `username`/`iconUrl`; native payloads are not read: tools do not edit) or delete
 * (`DELETE`, no body), of the message `messageId`. JSON only; signed as a post is when the webhook
 * has a secret (a DELETE signs its empty body). Costs one token of the rate limit.
 */
export async function readChange(
  webhook: WebhookCopy,
  request: PostRequest,
  body: PostBody,
  method: 'PATCH' | 'DELETE',
  messageId: string,
): Promise<Extract<ReadPost, { kind: 'post' }>> {
  let message = '';
  let metadata: string | null = null;
  let level: MessageLevel = 'info';
  let fields: Record<string, unknown> = {};
  if (method === 'PATCH') {
    if (bodyFormat(request.contentType) !== 'application/json') throw unsupportedMediaType(request.contentType);
    const json = await body.asJson();
    const parsed = webhookMessageSchema.omit({ key: true }).safeParse(json);
    if (!parsed.success) throw issuesToError(parsed.error.issues);
    message = parsed.data.message;
    metadata = parsed.data.metadata ?? null;
    level = parsed.data.level ?? 'info';
    fields = json as Record<string, unknown>;
  }
  const key = idempotencyKey(request.header);
  const hook = usable(await webhook());
  await verifySignature(hook, await body.read(), request.header);
  const override = applicableOverride(hook, {
    name: { field: 'username', value: fields.username },
    iconUrl: { field: 'iconUrl', value: fields.iconUrl },
  });
  const idempotency =
    key === undefined ? undefined : { key, fingerprint: await contentFingerprint(message, metadata, level, override, [method, messageId]) };
  return { kind: 'post', hook, markdown: message, metadata, level, override, targets: [], cost: 1, idempotency, format: 'json' };
}
