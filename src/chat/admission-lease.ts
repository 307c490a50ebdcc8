import { LEASE_MARGIN_MS, LEASE_MS } from './rate-limit';
import type { WebhookRow } from './webhooks.store';

/** Enough for every busy webhook of an isolate; the oldest entry goes first. */
const MAX_ENTRIES = 1_000;

interface Lease {
  /** The webhook version (`updatedAt`) the gate admitted: the lease holds for that copy only. */
  version: string;
  tokens: number;
  /** Epoch ms; the gate counts the lease until later than this (see takeLeased). */
  until: number;
}

/**
 * The isolate's admission leases by webhook id, and the tokens it owes back. A post without an
 * Idempotency-Key whose webhook copy the gate vouched for within the lease takes a token here
 * instead of calling the gate (one Durable Object call less per post: ~9% of a post's CPU).
 *
 * Why this never admits what the gate would refuse:
 * - rate: every leased token was taken from the gate's one bucket before it was handed out;
 * - the webhook's row: a lease is for one version of it, and every change (PATCH, rotate, delete)
 *   waits in the gate until every lease it handed out has ended before it answers, so after a
 *   change's 2xx no post is admitted on the copy before it. The gate counts a lease from when it
 *   granted it, this isolate from before it asked, and stops LEASE_MARGIN_MS early.
 */
const leases = new Map<string, Lease>();
const owed = new Map<string, number>();

/** Takes one leased token for a post on `hook` as this isolate has it; false: ask the gate. */
export function takeLeased(hook: WebhookRow, now = Date.now()): boolean {
  const lease = leases.get(hook.id);
  if (!lease) return false;
  if (lease.version === hook.updatedAt && lease.tokens > 0 && now < lease.until) {
    lease.tokens--;
    return true;
  }
  endLease(hook.id, lease);
  return false;
}

/** Keeps what the gate granted to a call made at `askedAt` (before the call was sent). */
export function keepLease(hook: WebhookRow, tokens: number, askedAt: number): void {
  const current = leases.get(hook.id);
  if (current) endLease(hook.id, current);
  if (tokens <= 0) return;
  leases.set(hook.id, { version: hook.updatedAt, tokens, until: askedAt + LEASE_MS - LEASE_MARGIN_MS });
  if (leases.size > MAX_ENTRIES) {
    const [oldestId, oldest] = leases.entries().next().value!;
    endLease(oldestId, oldest);
  }
}

/** Unused tokens to give back with the next call to the gate (zeroed: a lost call loses them, never counts them twice). */
export function tokensOwed(webhookId: string): number {
  const n = owed.get(webhookId) ?? 0;
  owed.delete(webhookId);
  return n;
}

function endLease(webhookId: string, lease: Lease): void {
  leases.delete(webhookId);
  if (lease.tokens <= 0) return;
  owed.set(webhookId, (owed.get(webhookId) ?? 0) + lease.tokens);
  if (owed.size > MAX_ENTRIES) owed.delete(owed.keys().next().value!);
}

/** Tokens left in this isolate's lease for the webhook (0: none), for tests and diagnostics. */
export function leasedTokens(webhookId: string): number {
  return leases.get(webhookId)?.tokens ?? 0;
}
