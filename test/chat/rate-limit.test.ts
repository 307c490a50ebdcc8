import { describe, expect, it } from 'vitest';
import { takeToken, type Bucket } from '../../src/chat/rate-limit';

describe('takeToken', () => {
  const limit = { burst: 3, perSecond: 2 };

  it('starts full: a burst of posts passes, the next one waits for a token', () => {
    let bucket: Bucket | undefined;
    for (let i = 0; i < 3; i++) {
      const take = takeToken(bucket, limit, 1_000);
      expect(take.ok).toBe(true);
      bucket = take.bucket;
    }
    const refused = takeToken(bucket, limit, 1_000);
    // 0 tokens at 2 per second: the next one is there in 0.5 s, announced as 1 whole second.
    expect(refused).toEqual({ ok: false, bucket: { tokens: 0, at: 1_000 }, retryAfterSeconds: 1 });
  });

  it('refills at perSecond, never above burst', () => {
    const empty = { tokens: 0, at: 0 };
    expect(takeToken(empty, limit, 250).ok).toBe(false); // 0.5 tokens
    expect(takeToken(empty, limit, 500)).toEqual({ ok: true, bucket: { tokens: 0, at: 500 } });
    expect(takeToken(empty, limit, 60_000)).toEqual({ ok: true, bucket: { tokens: 2, at: 60_000 } });
  });

  it('tells a slow limit how many seconds until the next token', () => {
    const slow = { burst: 1, perSecond: 0.1 };
    const refused = takeToken({ tokens: 0.25, at: 0 }, slow, 0);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfterSeconds).toBe(8); // 0.75 tokens at 0.1/s = 7.5 s
  });

  it('takes one token per room a post goes to', () => {
    const wide = { burst: 10, perSecond: 2 };
    let bucket: Bucket | undefined;
    // 3 rooms a post: 10 tokens pay for 3 posts (9), the 4th finds 1 of its 3.
    for (let i = 0; i < 3; i++) {
      const take = takeToken(bucket, wide, 0, 3);
      expect(take.ok).toBe(true);
      bucket = take.bucket;
    }
    expect(bucket).toEqual({ tokens: 1, at: 0 });
    const refused = takeToken(bucket, wide, 0, 3);
    // 2 tokens missing at 2 per second: 1 s.
    expect(refused).toEqual({ ok: false, bucket: { tokens: 1, at: 0 }, retryAfterSeconds: 1 });
    // A one-room post still fits.
    expect(takeToken(bucket, wide, 0, 1)).toEqual({ ok: true, bucket: { tokens: 0, at: 0 } });
  });

  it('admits a post costing more than the burst on a full bucket, leaving it in debt', () => {
    const small = { burst: 4, perSecond: 2 };
    const first = takeToken(undefined, small, 0, 10);
    expect(first).toEqual({ ok: true, bucket: { tokens: -6, at: 0 } });
    // Not full yet (-6 + 2 × 2 s = -2): refused, told to wait until the 4 tokens it needs are there, 3 s.
    const early = takeToken(first.bucket, small, 2_000, 10);
    expect(early).toEqual({ ok: false, bucket: { tokens: -2, at: 2_000 }, retryAfterSeconds: 3 });
    // Any post waits for the debt: a one-room post needs 1 token, 1.5 s away.
    const single = takeToken(early.bucket, small, 2_000, 1);
    expect(single.ok).toBe(false);
    if (!single.ok) expect(single.retryAfterSeconds).toBe(2);
    // Full again after 10 / 2 = 5 s in all: admitted, in debt again.
    expect(takeToken(first.bucket, small, 5_000, 10)).toEqual({ ok: true, bucket: { tokens: -6, at: 5_000 } });
  });
});
