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
