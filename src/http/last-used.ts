import { and, eq, isNull, lt, or, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { oauthClients, tokens } from '../db/schema';

/**
 * How finely an API token's or an OAuth client's `lastUsedAt` is kept: a use is written only when the
 * stored one is older than this, or there is none. Enough to tell a token in daily use from one unused
 * for months, at one D1 write per credential an hour instead of one per request.
 */
export const LAST_USED_RESOLUTION_MS = 60 * 60_000;

/** A stored `lastUsedAt` before this instant is stale at `now`. ISO 8601 strings in UTC compare as their instants. */
function staleBefore(now: number, resolutionMs: number): string {
  return new Date(now - resolutionMs).toISOString();
}

/**
 * Whether a use at `now` is to be written over `lastUsedAt`, as read with the credential's lookup.
 * Viewer links keep theirs to the minute (CHAT_LIMITS.viewerLinkLastUsedMs) by the same rule.
 */
export function lastUseDue(lastUsedAt: string | null, now: number, resolutionMs = LAST_USED_RESOLUTION_MS): boolean {
  return lastUsedAt === null || lastUsedAt < staleBefore(now, resolutionMs);
}

/**
 * The same test inside the UPDATE: of concurrent requests that all read a stale value, the first
 * write makes it fresh and the others change nothing.
 */
export function lastUseStale(column: SQLiteColumn, now: number, resolutionMs = LAST_USED_RESOLUTION_MS): SQL | undefined {
  return or(isNull(column), lt(column, staleBefore(now, resolutionMs)));
}

/**
 * Runs `write` after the answer (waitUntil), so recording a use never delays a request; a failed write
 * is logged and lost, never the request's failure.
 */
export function recordUseLater(ctx: Pick<ExecutionContext, 'waitUntil'>, what: string, write: () => Promise<unknown>): void {
  ctx.waitUntil(
    Promise.resolve()
      .then(write)
      .then(
        () => undefined,
        (err) => console.error(`last use of ${what} not recorded`, err),
      ),
  );
}

/*
 * The two writes live here, beside the rule, and not in the tokens and OAuth stores: authentication
 * (this floor) records them, and a floor does not reach up into the features built on it.
 */

/** Records that the API token authenticated a request at `now`, unless a use within the resolution is recorded already. */
export async function recordTokenUse(db: Db, id: string, now: number): Promise<void> {
  await db
    .update(tokens)
    .set({ lastUsedAt: new Date(now).toISOString() })
    .where(and(eq(tokens.id, id), lastUseStale(tokens.lastUsedAt, now)));
}

/** Records a use of the OAuth client at `now`, unless a use within the resolution is recorded already. */
export async function recordClientUse(db: Db, id: string, now: number): Promise<void> {
  await db
    .update(oauthClients)
    .set({ lastUsedAt: new Date(now).toISOString() })
    .where(and(eq(oauthClients.id, id), lastUseStale(oauthClients.lastUsedAt, now)));
}
