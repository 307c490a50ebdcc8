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
});
