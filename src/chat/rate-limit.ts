import type { RateLimit } from './limits';

export interface Bucket {
  /** Negative while the bucket is in debt (after a post that cost more than the burst). */
  tokens: number;
  /** Epoch ms of the last refill. */
  at: number;
}

export type Take = { ok: true; bucket: Bucket } | { ok: false; bucket: Bucket; retryAfterSeconds: number };

/**
 * Token bucket counting room deliveries: a new (or forgotten) bucket starts full; it refills at
 * `perSecond` up to `burst`; a post routed to k rooms costs k tokens, so a fan-out webhook cannot
 * cause `burst` × its rooms deliveries at once.
 *
 * A post costing more than `burst` could never find that many tokens: it is admitted when the bucket
 * is full and takes its whole cost, leaving the bucket in debt, so the deliveries it caused are still
 * paid for at `perSecond` before the next post (whatever its cost) is admitted. Capping the cost at
 * `burst` instead would let such a webhook deliver more than `perSecond` rooms per second, for ever.
 *
 * A refused post is told when the tokens it needs (its cost, at most `burst`) will be there, in whole
 * seconds, at least 1 (the `Retry-After` header's unit).
 */
export function takeToken(previous: Bucket | undefined, limit: RateLimit, now: number, cost = 1): Take {
  const start = previous ?? { tokens: limit.burst, at: now };
  const elapsed = Math.max(0, now - start.at);
  const tokens = Math.min(limit.burst, start.tokens + (elapsed * limit.perSecond) / 1000);
  const needed = Math.min(cost, limit.burst);
  if (tokens >= needed) return { ok: true, bucket: { tokens: tokens - cost, at: now } };
  const retryAfterSeconds = Math.max(1, Math.ceil((needed - tokens) / limit.perSecond));
  return { ok: false, bucket: { tokens, at: now }, retryAfterSeconds };
}
