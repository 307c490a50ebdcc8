import type { Db } from '../../db/client';
import { ApiError } from '../../http/api-error';
import { storeUnavailable } from '../chat-errors';
import { notMigrated } from '../../db/missing-table';
import { gateStub } from '../stubs';
import type { Admission } from '../webhook-gate';
import { findWebhookByPostSecretHash, postSecretHash, type WebhookRow } from '../webhooks.store';
import type { ReadPost, WebhookCopy } from './read-post';

type Post = Extract<ReadPost, { kind: 'post' }>;

/** The outcome of a keyed post, recorded with the gate so that a retry is answered as this one was. */
export interface KeyRecord {
  /** Stored: repeats within 24 hours get this answer back. */
  complete(status: number, body: string): Promise<void>;
  /** Failed: the key is free again, or, when the room may have stored the message, kept for a retry. */
  release(maybeStored: boolean): Promise<void>;
}

export type Admitted =
  /** A tool's event that is not shown: acknowledged on a verified copy of the webhook, nothing stored. */
  | { kind: 'ignored'; read: Extract<ReadPost, { kind: 'ignored' }> }
  /** The key's first answer, given again. */
  | { kind: 'replay'; post: Post; status: number; body: string }
  /** Admitted: store it. `attempt` (keyed posts) seeds the message ids, the same for a retry of an uncertain attempt. */
  | { kind: 'go'; post: Post; attempt?: string; key?: KeyRecord };

/** Enough for every webhook a busy isolate sees; the oldest entry goes first. */
const MAX_CACHED = 1_000;
/** Reads of one post: the first may use the isolate's copy, later ones use the store's or the gate's. */
const MAX_READS = 3;

/**
 * The isolate's copies of webhook rows by the SHA-256 of the URL's posting secret, so a post needs no
 * D1 query. A copy is only a hint: the webhook's gate checks its version (`updatedAt`) before admitting
 * a post and answers "stale" with its own copy, which every change (rotation included) goes through
 * (webhook-gate.ts). A copy is kept, and used, only under the hash of the secret it holds: after a
 * rotation the old secret's copy is stale at the gate, and the gate's copy (the new secret) does not
 * match the old URL, which then finds no webhook. An unknown secret is never remembered.
 */
const copies = new Map<string, WebhookRow>();

/** The row, if it is the webhook of the URL secret whose hash is `secretHash`. */
function forSecret(secretHash: string, row: WebhookRow | null | undefined): WebhookRow | undefined {
  return row && row.postSecretHash === secretHash ? row : undefined;
}

export const webhookCopies = {
  get(secretHash: string): WebhookRow | undefined {
    return copies.get(secretHash);
  },
  /** Keeps the row D1 or the gate returned for the secret's hash; none (deleted, rotated, unknown): forgets it. */
  remember(secretHash: string, row: WebhookRow | null | undefined): void {
    copies.delete(secretHash);
    const own = forSecret(secretHash, row);
    if (!own) return;
    copies.set(secretHash, own);
    if (copies.size > MAX_CACHED) copies.delete(copies.keys().next().value!);
  },
};

async function load(db: Db, secretHash: string): Promise<WebhookRow | undefined> {
  let row: WebhookRow | undefined;
  try {
    row = await findWebhookByPostSecretHash(db, secretHash);
  } catch (err) {
    console.error('webhook lookup failed', err);
    throw notMigrated(err) ?? storeUnavailable();
  }
  webhookCopies.remember(secretHash, row);
  return row;
}

/** Where a read takes its copy of the webhook: the isolate's (else D1's), D1's, or the one the gate answered. */
type Source = { from: 'cache' } | { from: 'store' } | { from: 'gate'; hook: WebhookRow | null };

/**
 * Admits one post to the webhook whose posting secret is `urlSecret`: reads it (`read`) against a copy
 * of the webhook (which also routes it), then has the webhook's gate check that copy's version, the
 * rate limit (one token per target room) and the idempotency key. No post is ever admitted, refused or
 * acknowledged on a copy older than the gate's:
 * - a copy the gate calls stale is replaced by the gate's own, and the post is read again on it;
 * - a refusal (a 4xx) or an acknowledgement without storing, made on the isolate's copy before the
 *   gate has vouched for it, is made again on D1's copy.
 */
export async function admitPost(env: Env, db: Db, urlSecret: string, read: (webhook: WebhookCopy) => Promise<ReadPost>): Promise<Admitted> {
  const secretHash = await postSecretHash(urlSecret);
  let source: Source = { from: 'cache' };
  for (let reads = 1; ; reads++) {
    let usedCache = false;
    const current = source;
    const webhook: WebhookCopy = async () => {
      // The gate's copy is the webhook's current one: after a rotation it no longer has this secret.
      if (current.from === 'gate') return forSecret(secretHash, current.hook);
      const cached = current.from === 'cache' ? webhookCopies.get(secretHash) : undefined;
      usedCache = cached !== undefined;
      return cached ?? load(db, secretHash);
    };

    let result: ReadPost;
    try {
      result = await read(webhook);
    } catch (err) {
      if (usedCache && err instanceof ApiError && err.status < 500) {
        source = { from: 'store' };
        continue;
      }
      throw err;
    }
    if (result.kind === 'ignored') {
      if (!usedCache) return { kind: 'ignored', read: result };
      source = { from: 'store' };
      continue;
    }

    const admission = await askGate(env, result);
    switch (admission.kind) {
      case 'stale':
        webhookCopies.remember(secretHash, admission.hook);
        if (reads >= MAX_READS) throw storeUnavailable();
        source = { from: 'gate', hook: admission.hook };
        continue;
      case 'replay':
        return { kind: 'replay', post: result, status: admission.status, body: admission.body };
      case 'go': {
        const key = result.idempotency?.key;
        return {
          kind: 'go',
          post: result,
          attempt: admission.attempt,
          key: key === undefined ? undefined : keyRecord(env, result.hook.id, key, admission.claim),
        };
      }
      default:
        throw admissionError(admission);
    }
  }
}

async function askGate(env: Env, post: Post): Promise<Admission> {
  try {
    return await gateStub(env, post.hook.id).admit({
      webhook: { id: post.hook.id, version: post.hook.updatedAt },
      rateLimit: { burst: post.hook.rateBurst, perSecond: post.hook.ratePerSecond },
      cost: post.cost ?? post.targets.length,
      idempotency: post.idempotency,
    });
  } catch (err) {
    console.error('webhook gate failed', err);
    throw storeUnavailable();
  }
}

export function keyRecord(env: Env, webhookId: string, key: string, claim: number | undefined): KeyRecord {
  const gate = gateStub(env, webhookId);
  return {
    async complete(status, body) {
      // Stored already: a failure to remember the answer must not turn the success into an error.
      await gate.complete(key, status, body).catch((err: unknown) => console.error('idempotency record failed', err));
    },
    async release(maybeStored) {
      await gate.release(key, maybeStored, claim).catch(() => undefined);
    },
  };
}

export function admissionError(
  admission: Extract<Admission, { kind: 'limited' | 'in-progress' | 'key-reused' }>,
  limitedMessage = 'This webhook is over its rate limit (counted in room deliveries).',
): ApiError {
  switch (admission.kind) {
    case 'limited':
      return new ApiError(429, 'too.many.requests', limitedMessage, [], {
        'Retry-After': String(admission.retryAfterSeconds),
      });
    case 'in-progress':
      return new ApiError(409, 'conflict', 'A request with this idempotency key is still in progress.', [], { 'Retry-After': '1' });
    case 'key-reused':
      return new ApiError(409, 'conflict', 'This idempotency key was already used for a different message.');
  }
}
