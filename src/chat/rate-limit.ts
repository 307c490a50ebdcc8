import type { RateLimit } from './limits';

export interface Bucket {
  tokens: number;
  /** Epoch ms of the last refill. */
  at: number;
}

export type Take = { ok: true; bucket: Bucket } | { ok: false; bucket: Bucket; retryAfterSeconds: number };

/**
 * Token bucket: a new (or forgotten) bucket starts full; it refills at `perSecond` up to `burst`;
 * each post takes one token. A refused post is told when the next token will be there, in whole
 * seconds, at least 1 (the `Retry-After` header's unit).
 */
export function takeToken(previous: Bucket | undefined, limit: RateLimit, now: number): Take {
  const start = previous ?? { tokens: limit.burst, at: now };
  const elapsed = Math.max(0, now - start.at);
  const tokens = Math.min(limit.burst, start.tokens + (elapsed * limit.perSecond) / 1000);
  if (tokens >= 1) return { ok: true, bucket: { tokens: tokens - 1, at: now } };
  const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / limit.perSecond));
  return { ok: false, bucket: { tokens, at: now }, retryAfterSeconds };
}

/**
 * Admission leases (webhook-gate.ts, admission-lease.ts): with a fast limit, the gate hands the
 * isolate that asks a few tokens ahead, good for LEASE_MS, so the posts that follow skip the call
 * to the gate. The tokens come out of the one bucket, so a lease never lets more posts through
 * than the limit; tokens an isolate did not use go back to the bucket on its next call.
 */
export const LEASE_MS = 100;
/** The isolate stops using a lease this much before the gate stops counting it (clocks, timers). */
export const LEASE_MARGIN_MS = 20;
const LEASE_MAX_TOKENS = 32;
/** Below this many tokens per lease (a limit under 40 posts/s) there are no leases at all. */
const LEASE_MIN_TOKENS = 4;

/**
 * Tokens to lease from what the bucket has left after this post: at most what it refills during
 * the lease, and at most half of what is left, so the leases of a few isolates cannot drain the
 * burst that the posts arriving in other isolates need (a new isolate always finds tokens unless
 * the webhook really posts near its limit).
 */
export function leaseSize(limit: RateLimit, tokensLeft: number): number {
  const n = Math.floor(Math.min(LEASE_MAX_TOKENS, (limit.perSecond * LEASE_MS) / 1000, tokensLeft / 2));
  return n >= LEASE_MIN_TOKENS ? n : 0;
}

/** The bucket with `tokens` given back (a lease's unused ones), never above burst. */
export function returnTokens(bucket: Bucket | undefined, limit: RateLimit, tokens: number): Bucket | undefined {
  if (!bucket || !(tokens > 0)) return bucket;
  return { tokens: Math.min(limit.burst, bucket.tokens + tokens), at: bucket.at };
}
