import type { WebhookRow } from './webhooks.store';

/** Enough for every webhook a busy isolate sees; the oldest entry goes first. */
const MAX_ENTRIES = 1_000;

/**
 * The isolate's copies of webhook rows by URL id, so a post needs no D1 query. A copy is only a
 * hint: the webhook's gate checks its version (`updatedAt`) before admitting a post and answers
 * "stale" with its own copy, which every change goes through (webhook-gate.ts). Only rows D1 or
 * the gate returned are kept: an unknown id is never remembered, as known or as unknown.
 */
const rows = new Map<string, WebhookRow>();

export function knownWebhook(urlId: string): WebhookRow | undefined {
  return rows.get(urlId);
}

export function rememberWebhook(urlId: string, row: WebhookRow): void {
  if (row.id !== urlId) return;
  rows.delete(urlId);
  rows.set(urlId, row);
  if (rows.size > MAX_ENTRIES) rows.delete(rows.keys().next().value!);
}

export function forgetWebhook(urlId: string): void {
  rows.delete(urlId);
}
