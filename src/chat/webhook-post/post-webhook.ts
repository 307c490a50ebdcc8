import type { Db } from '../../db/client';
import { DeliveryError } from '../chat-errors';
import { SOAP_ACK } from '../integrations';
import { renderMarkdown } from '../markdown';
import { admitPost } from './admission';
import { deliver, type DeliveryResult } from './deliver';
import { PostBody, readPost, type AnswerFormat, type PostRequest } from './read-post';
import { senderOf } from './sender';

export type { PostRequest } from './read-post';

export interface PostAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The webhook post, from the URL's posting secret, the request's headers and its bytes to the answer:
 * read the body against the webhook and route it, have the gate admit it (the rate limit counts its
 * rooms), render and store it in every target room, then record the answer for its idempotency key.
 * Refusals are thrown as ApiError (the app's one error handler writes them); nothing is stored unless
 * the answer is a 2xx. Messages carry the webhook's public id, never the secret, and their sender
 * (the webhook's name and icon, or the post's own where the webhook allows it) and level.
 */
export async function postToWebhook(env: Env, db: Db, urlSecret: string, request: PostRequest): Promise<PostAnswer> {
  const body = new PostBody(request);
  const admitted = await admitPost(env, db, urlSecret, (webhook) => readPost(webhook, request, body));
  if (admitted.kind === 'ignored') {
    return answer(admitted.read.format, 200, JSON.stringify({ deliveries: [], ignored: admitted.read.reason }), false);
  }
  if (admitted.kind === 'replay') return answer(admitted.post.format, admitted.status, admitted.body, true);

  const { post, attempt, key } = admitted;
  let result: DeliveryResult;
  try {
    const posted = {
      webhookId: post.hook.id,
      markdown: post.markdown,
      html: renderMarkdown(post.markdown),
      metadata: post.metadata,
      sender: senderOf(post.hook, post.override),
      level: post.level,
    };
    result = await deliver(env, post.targets, posted, attempt);
  } catch (err) {
    await key?.release(err instanceof DeliveryError ? err.maybeStored : false);
    throw err;
  }
  const text = JSON.stringify({ deliveries: result.deliveries });
  await key?.complete(result.status, text);
  return answer(post.format, result.status, text, false);
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
