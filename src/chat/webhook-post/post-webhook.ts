import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { messages } from '../../db/schema';
import { ApiError } from '../../http/api-error';
import { DeliveryError, storeUnavailable } from '../chat-errors';
import { SOAP_ACK } from '../integrations';
import { imageSigner } from '../image-proxy/sign';
import { renderMarkdown } from '../markdown';
import type { ChangeResult, MessageEdit } from '../room/types';
import { roomStub } from '../stubs';
import type { WebhookRow } from '../webhooks.store';
import { admitPost } from './admission';
import { deliver, type DeliveryResult } from './deliver';
import { PostBody, readChange, readPost, type AnswerFormat, type PostRequest, type WebhookCopy } from './read-post';
import { senderOf } from './sender';

export type { PostRequest } from './read-post';

export interface PostAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The message stored or changed (the first room's), for the delivery log. */
  delivery?: { roomId: string; messageId: string; seq: number | null };
}

/** What the delivery log needs from a request, filled in as it is handled. */
export interface PostTrace {
  /** The webhook the URL's secret named, once a copy of it was read. */
  webhookId?: string;
  /** The body's bytes, once read. */
  bytes: number;
}

/** The request, its body's length written to `trace` when it is read. */
function traced(request: PostRequest, trace: PostTrace): PostRequest {
  return {
    ...request,
    body: async () => {
      const bytes = await request.body();
      trace.bytes = bytes.byteLength;
      return bytes;
    },
  };
}

/** The webhook copy, its id written to `trace` when it is found. */
function tracedCopy(webhook: WebhookCopy, trace: PostTrace): WebhookCopy {
  return async () => {
    const row = await webhook();
    if (row) trace.webhookId = row.id;
    return row;
  };
}

export function messageNotFound(): ApiError {
  return ApiError.notFound('No message with this id was posted by this sender.');
}

/**
 * The webhook post, from the URL's posting secret, the request's headers and its bytes to the answer:
 * read the body against the webhook and route it, have the gate admit it (the rate limit counts its
 * rooms), render and store it in every target room, then record the answer for its idempotency key.
 * Refusals are thrown as ApiError (the app's one error handler writes them); nothing is stored unless
 * the answer is a 2xx. Messages carry the webhook's public id, never the secret, and their sender
 * (the webhook's name and icon, or the post's own where the webhook allows it) and level.
 */
export async function postToWebhook(
  env: Env,
  db: Db,
  urlSecret: string,
  plain: PostRequest,
  trace: PostTrace = { bytes: 0 },
): Promise<PostAnswer> {
  const request = traced(plain, trace);
  const body = new PostBody(request);
  const admitted = await admitPost(env, db, urlSecret, (webhook) => readPost(tracedCopy(webhook, trace), request, body));
  if (admitted.kind === 'ignored') {
    return answer(admitted.read.format, 200, JSON.stringify({ deliveries: [], ignored: admitted.read.reason }), false);
  }
  if (admitted.kind === 'replay') return answer(admitted.post.format, admitted.status, admitted.body, true);

  const { post, attempt, key } = admitted;
  let result: DeliveryResult;
  try {
    const images = imageSigner(env);
    const posted = {
      webhookId: post.hook.id,
      markdown: post.markdown,
      html: renderMarkdown(post.markdown, { images }),
      metadata: post.metadata,
      sender: senderOf(post.hook, post.override, images),
      level: post.level,
      ...(post.key === undefined ? {} : { key: post.key }),
    };
    result = await deliver(env, post.targets, posted, attempt);
  } catch (err) {
    await key?.release(err instanceof DeliveryError ? err.maybeStored : false);
    throw err;
  }
  const text = JSON.stringify({ deliveries: result.deliveries });
  await key?.complete(result.status, text);
  return { ...answer(post.format, result.status, text, false), delivery: result.deliveries[0] };
}

/**
 * A webhook's edit (PATCH) or delete (DELETE) of a message it posted, by the message's id: admitted
 * as a post is (signature, rate limit: one token, Idempotency-Key), then changed in its room, which
 * stores the new version durably before answering. Answers 200 `{message}` (its latest version, a
 * tombstone after a delete); a message this webhook did not post, or an unknown id: 404.
 */
export async function changeWebhookMessage(
  env: Env,
  db: Db,
  urlSecret: string,
  messageId: string,
  method: 'PATCH' | 'DELETE',
  plain: PostRequest,
  trace: PostTrace = { bytes: 0 },
): Promise<PostAnswer> {
  const request = traced(plain, trace);
  const body = new PostBody(request);
  const admitted = await admitPost(env, db, urlSecret, (webhook) =>
    readChange(tracedCopy(webhook, trace), request, body, method, messageId),
  );
  if (admitted.kind === 'ignored') throw new Error('a change is never ignored');
  if (admitted.kind === 'replay') return answer('json', admitted.status, admitted.body, true);
  const { post, key } = admitted;
  const images = imageSigner(env);
  const edit: MessageEdit | null =
    method === 'DELETE'
      ? null
      : {
          markdown: post.markdown,
          html: renderMarkdown(post.markdown, { images }),
          metadata: post.metadata,
          level: post.level,
          sender: senderOf(post.hook, post.override, images),
        };
  let result: ChangeResult;
  try {
    result = await changeInItsRoom(env, db, post.hook, messageId, edit);
  } catch (err) {
    await key?.release(err instanceof DeliveryError ? err.maybeStored : false);
    throw err;
  }
  if (result.kind === 'not-found') {
    await key?.release(false);
    throw messageNotFound();
  }
  const text = JSON.stringify({ message: result.message });
  await key?.complete(200, text);
  const { roomId, seq } = result.message;
  return { ...answer('json', 200, text, false), delivery: { roomId, messageId, seq } };
}

/**
 * The message's room: D1's row says (a message flushed there), else one of the rooms the webhook
 * posts to now (a message of the last second, not flushed yet), asked in turn. Each room answers
 * "not found" for a message it does not hold or that another sender posted.
 */
async function changeInItsRoom(env: Env, db: Db, hook: WebhookRow, messageId: string, edit: MessageEdit | null): Promise<ChangeResult> {
  let stored: { roomId: string } | undefined;
  try {
    stored = await db.select({ roomId: messages.roomId }).from(messages).where(eq(messages.id, messageId)).get();
  } catch (err) {
    console.error('message lookup failed', err);
    throw storeUnavailable('The message could not be changed; nothing was changed. Retry later.');
  }
  const candidates = stored ? [stored.roomId] : [...new Set([hook.roomId, ...hook.mappings.flatMap((m) => m.roomIds)])];
  for (const roomId of candidates) {
    let result: ChangeResult;
    try {
      result = await roomStub(env, roomId).change(roomId, { messageId, webhookId: hook.id, personId: null, edit });
    } catch (err) {
      console.error('change failed', err);
      throw new DeliveryError(true);
    }
    if (result.kind === 'changed') return result;
  }
  return { kind: 'not-found' };
}

function answer(format: AnswerFormat, status: number, body: string, replayed: boolean): PostAnswer {
  const headers: Record<string, string> = replayed ? { 'Idempotent-Replayed': 'true' } : {};
  // Salesforce only counts a delivery as done on its SOAP acknowledgement.
  if (format === 'soap') return { status: 200, headers: { ...headers, 'Content-Type': 'text/xml; charset=utf-8' }, body: SOAP_ACK };
  // Slack answers a stored post with `ok`; a post not stored in every room (202) keeps our JSON, which says so.
  if (format === 'slack' && status === 200)
    return { status, headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }, body: 'ok' };
  return { status, headers: { ...headers, 'Content-Type': 'application/json' }, body };
}
