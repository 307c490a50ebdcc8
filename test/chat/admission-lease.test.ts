import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers';
import { keepLease, leasedTokens, takeLeased, tokensOwed } from '../../src/chat/admission-lease';
import { gateStub } from '../../src/chat/deliver';
import { LEASE_MARGIN_MS, LEASE_MS, leaseSize, returnTokens } from '../../src/chat/rate-limit';
import type { WebhookRow } from '../../src/chat/webhooks.store';
import { history, post, postOk, roomWithWebhook } from './helpers';

/**
 * Admission leases: a webhook with a fast rate limit hands the isolate a few tokens ahead, so the
 * posts that follow skip the gate. Neither the rate limit nor a change of the webhook may ever be
 * seen later because of it.
 */

async function stored(roomId: string): Promise<string[]> {
  return (await history(roomId, '?limit=500')).body.entities.map((m: { markdown: string }) => m.markdown);
}

describe('leaseSize and returnTokens', () => {
  it('lease at most the refill of one lease period, at most 32, at most half of what is left, and nothing for slow limits', () => {
    expect(LEASE_MS).toBe(100);
    expect(leaseSize({ burst: 10_000, perSecond: 10_000 }, 9_999)).toBe(32);
    expect(leaseSize({ burst: 10_000, perSecond: 100 }, 9_999)).toBe(10); // 100/s × 0.1 s
    expect(leaseSize({ burst: 10_000, perSecond: 10_000 }, 15.9)).toBe(7); // half of what the bucket has left
    expect(leaseSize({ burst: 100, perSecond: 10 }, 99)).toBe(0); // the default limit: 1 per lease, no lease
    expect(leaseSize({ burst: 100, perSecond: 39 }, 99)).toBe(0); // 3.9 per lease: under the minimum of 4
    expect(leaseSize({ burst: 100, perSecond: 40 }, 99)).toBe(4);
    expect(leaseSize({ burst: 10_000, perSecond: 10_000 }, 7)).toBe(0); // 3.5: under the minimum
  });

  it('give unused tokens back, never above burst, and leave a bucket never made alone', () => {
    const limit = { burst: 10, perSecond: 100 };
    expect(returnTokens({ tokens: 2, at: 5 }, limit, 4)).toEqual({ tokens: 6, at: 5 });
    expect(returnTokens({ tokens: 8, at: 5 }, limit, 4)).toEqual({ tokens: 10, at: 5 });
    expect(returnTokens({ tokens: 2, at: 5 }, limit, 0)).toEqual({ tokens: 2, at: 5 });
    expect(returnTokens(undefined, limit, 4)).toBeUndefined(); // a new bucket starts full anyway
  });
});

describe("an isolate's lease", () => {
  const hook = (id: string, updatedAt: string) => ({ id, updatedAt }) as WebhookRow;

  it('gives its tokens to posts on the same copy of the webhook until it ends, then owes the rest back', () => {
    const id = crypto.randomUUID();
    const v1 = hook(id, '2026-01-01T00:00:00.000Z');
    keepLease(v1, 3, 1_000);
    expect(takeLeased(v1, 1_000)).toBe(true);
    expect(takeLeased(v1, 1_000 + LEASE_MS - LEASE_MARGIN_MS - 1)).toBe(true);
    expect(leasedTokens(id)).toBe(1);
    // Ended (the isolate stops LEASE_MARGIN_MS before the gate does): the last token is owed back.
    expect(takeLeased(v1, 1_000 + LEASE_MS - LEASE_MARGIN_MS)).toBe(false);
    expect(leasedTokens(id)).toBe(0);
    expect(tokensOwed(id)).toBe(1);
    expect(tokensOwed(id)).toBe(0); // given back once
  });

  it('holds for one version of the webhook only, and runs out', () => {
    const id = crypto.randomUUID();
    const v1 = hook(id, '2026-01-01T00:00:00.000Z');
    const v2 = hook(id, '2026-01-01T00:00:00.001Z');
    keepLease(v1, 2, 1_000);
    expect(takeLeased(v2, 1_001)).toBe(false); // another copy: ends the lease
    expect(takeLeased(v1, 1_001)).toBe(false);
    expect(tokensOwed(id)).toBe(2);
    keepLease(v2, 1, 1_000);
    expect(takeLeased(v2, 1_001)).toBe(true);
    expect(takeLeased(v2, 1_001)).toBe(false); // spent
    expect(tokensOwed(id)).toBe(0);
  });

  it('replaced by a newer one, owes the unused tokens of the old one', () => {
    const id = crypto.randomUUID();
    const v1 = hook(id, '2026-01-01T00:00:00.000Z');
    keepLease(v1, 5, 1_000);
    expect(takeLeased(v1, 1_000)).toBe(true);
    keepLease(v1, 7, 1_010);
    expect(leasedTokens(id)).toBe(7);
    expect(tokensOwed(id)).toBe(4);
  });
});

describe('posts on a lease', () => {
  it("take a fast webhook's tokens in the isolate instead of asking the gate, and are stored in order", async () => {
    const { roomId, hook } = await roomWithWebhook(); // 10,000 per second
    await postOk(hook.id, 'first');
    expect(leasedTokens(hook.id)).toBe(32);
    // A post within the lease takes one of its tokens (32 -> 31 ...); one after it has ended asks
    // the gate for a new lease (back to 32). On a slow machine some posts do the latter.
    const left = [32];
    for (let i = 0; i < 10; i++) {
      await postOk(hook.id, `post ${i}`);
      left.push(leasedTokens(hook.id));
    }
    const leased = left.slice(1).filter((n, i) => n === left[i]! - 1).length;
    expect(leased, JSON.stringify(left)).toBeGreaterThan(0);
    expect(left.slice(1).every((n, i) => n === left[i]! - 1 || n === 32)).toBe(true);
    expect(await stored(roomId)).toEqual(['first', ...Array.from({ length: 10 }, (_, i) => `post ${i}`)]);
  });

  it('are never taken for a webhook at the default limit (10 per second)', async () => {
    const { hook } = await roomWithWebhook({ rateLimit: { burst: 100, perSecond: 10 } });
    for (let i = 0; i < 3; i++) await postOk(hook.id, `post ${i}`);
    expect(leasedTokens(hook.id)).toBe(0);
  });

  it('never let more posts through than the rate limit allows, one by one or many at once', async () => {
    // 50 per second: leases of 5. The bound is the bucket's: burst + what it refilled meanwhile.
    const limit = { burst: 20, perSecond: 50 };
    const { roomId, hook } = await roomWithWebhook({ rateLimit: limit });
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await post(hook.id, { message: `one ${i}` })).status);
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => post(hook.id, { message: `many ${round} ${i}` })));
      statuses.push(...answers.map((a) => a.status));
    }
    const elapsedMs = Date.now() - started;
    const accepted = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(accepted).toBeLessThanOrEqual(limit.burst + Math.ceil((elapsedMs * limit.perSecond) / 1000));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect((await stored(roomId)).length).toBe(accepted);
  });

  it('end before a change made through any isolate is answered: the very next post sees it', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook.id, 'before');
    expect(leasedTokens(hook.id)).toBeGreaterThan(0);
    // Paused through the gate directly, as another isolate would: this isolate's copy still says
    // active, and its lease was granted on that copy.
    const paused = await gateStub(env, hook.id).update(hook.id, { active: false });
    expect(paused?.active).toBe(false);
    expectError(await post(hook.id, { message: 'after the pause' }), 403, 'webhook.inactive');
    expect(leasedTokens(hook.id)).toBe(0);
    expect(await stored(roomId)).toEqual(['before']);
  });
});
