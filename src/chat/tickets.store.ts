import { and, eq, gt, lte, min, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { oauthClients, tokens, viewerLinks, viewerSessions, wsTickets } from '../db/schema';
import { ApiError } from '../http/api-error';
import { sha256Hex } from '../http/secrets';
import { storeUnavailable } from './chat-errors';
import { CHAT_LIMITS } from './limits';
import { roomStub } from './stubs';
import { VIEWER_LINK_PRINCIPAL_PREFIX } from './viewer-links/viewer-links.store';

/** ADMIN_TOKEN's principal (http/auth.ts): no row in `tokens`, never revoked through the API. */
const ADMIN_TOKEN_ID = 'admin';

function newTicket(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `swt_${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/**
 * A WebSocket ticket: lets a browser, which cannot set headers on a WebSocket, connect to one room
 * once within 60 s, so no long-lived token ever travels in a URL. Only its SHA-256 is stored. A
 * token may mint CHAT_LIMITS.wsTicketsPerToken per 60 s (used ones count until they expire): the
 * count and the insert are one statement, so concurrent requests cannot pass the limit together.
 * Beyond it: 429 with Retry-After (when the oldest of them expires).
 */
export async function issueTicket(db: Db, roomId: string, tokenId: string): Promise<{ ticket: string; expiresAt: string }> {
  const ticket = newTicket();
  const now = Date.now();
  const expiresAt = now + CHAT_LIMITS.wsTicketTtlMs;
  const hash = await sha256Hex(ticket);
  const d1 = db.$client;
  const [, inserted] = await d1.batch([
    d1.prepare('DELETE FROM ws_tickets WHERE expires_at <= ?').bind(now),
    d1
      .prepare(
        `INSERT INTO ws_tickets (ticket_hash, room_id, token_id, expires_at) SELECT ?1, ?2, ?3, ?4
         WHERE (SELECT COUNT(*) FROM ws_tickets WHERE token_id = ?3 AND expires_at > ?5) < ?6`,
      )
      .bind(hash, roomId, tokenId, expiresAt, now, CHAT_LIMITS.wsTicketsPerToken),
  ]);
  if (inserted!.meta.changes === 0) {
    const oldest = await db
      .select({ at: min(wsTickets.expiresAt) })
      .from(wsTickets)
      .where(and(eq(wsTickets.tokenId, tokenId), gt(wsTickets.expiresAt, now)))
      .get();
    const retryAfter = Math.max(1, Math.ceil(((oldest?.at ?? now + CHAT_LIMITS.wsTicketTtlMs) - Date.now()) / 1000));
    throw new ApiError(
      429,
      'too.many.requests',
      `This token has minted ${CHAT_LIMITS.wsTicketsPerToken} WebSocket tickets in the last ${CHAT_LIMITS.wsTicketTtlMs / 1000} s, the most it may. Retry after ${retryAfter} s.`,
      [],
      { 'Retry-After': String(retryAfter) },
    );
  }
  return { ticket, expiresAt: new Date(expiresAt).toISOString() };
}

/**
 * Uses the ticket if it is unexpired, unused, for this room and its token is not revoked; answers
 * the token's id (null: refused). A ticket for another room stays unused.
 */
export async function redeemTicket(db: Db, ticket: string, roomId: string): Promise<string | null> {
  const now = Date.now();
  const rows = await db
    .update(wsTickets)
    .set({ usedAt: now })
    .where(
      and(
        eq(wsTickets.ticketHash, await sha256Hex(ticket)),
        eq(wsTickets.roomId, roomId),
        gt(wsTickets.expiresAt, now),
        sql`${wsTickets.usedAt} IS NULL`,
        // The principal's id: an API token's, an OAuth client's for a client-credentials access token,
        // or a viewer link's current secret's (viewer-links/), for its own room.
        sql`(${wsTickets.tokenId} = ${ADMIN_TOKEN_ID}
          OR EXISTS (SELECT 1 FROM ${tokens} WHERE ${tokens.id} = ${wsTickets.tokenId} AND ${tokens.revokedAt} IS NULL)
          OR EXISTS (SELECT 1 FROM ${oauthClients} WHERE ${oauthClients.id} = ${wsTickets.tokenId} AND ${oauthClients.revokedAt} IS NULL)
          OR EXISTS (SELECT 1 FROM ${viewerLinks} WHERE ${viewerLinks.principalId} = ${wsTickets.tokenId} AND ${viewerLinks.roomId} = ${wsTickets.roomId}))`,
      ),
    )
    .returning({ tokenId: wsTickets.tokenId });
  return rows.length === 1 ? rows[0]!.tokenId : null;
}

/**
 * Before a token's WebSocket opens: remembers that it may have sockets in this room (for
 * revocation), and drops rows older than the socket lifetime (their sockets are closed by then).
 */
export async function recordViewerSession(db: Db, tokenId: string, roomId: string): Promise<void> {
  if (tokenId === ADMIN_TOKEN_ID) return;
  const now = Date.now();
  await db.batch([
    db.delete(viewerSessions).where(lte(viewerSessions.openedAt, now - CHAT_LIMITS.socketLifetimeMs)),
    db
      .insert(viewerSessions)
      .values({ tokenId, roomId, openedAt: now })
      .onConflictDoUpdate({ target: [viewerSessions.tokenId, viewerSessions.roomId], set: { openedAt: now } }),
  ]);
}

/**
 * Whether the token (or the OAuth client, for an access token; or the viewer link, while this is its
 * current secret's principal) is still valid (not revoked); ADMIN_TOKEN always is.
 */
export async function tokenActive(db: Db, tokenId: string): Promise<boolean> {
  if (tokenId === ADMIN_TOKEN_ID) return true;
  if (tokenId.startsWith(VIEWER_LINK_PRINCIPAL_PREFIX)) {
    return (await db.select({ id: viewerLinks.id }).from(viewerLinks).where(eq(viewerLinks.principalId, tokenId)).get()) !== undefined;
  }
  const row =
    (await db.select({ revokedAt: tokens.revokedAt }).from(tokens).where(eq(tokens.id, tokenId)).get()) ??
    (await db.select({ revokedAt: oauthClients.revokedAt }).from(oauthClients).where(eq(oauthClients.id, tokenId)).get());
  return row !== undefined && row.revokedAt === null;
}

/**
 * The token was revoked: its tickets are deleted, and every room where it opened a socket within
 * the lifetime closes its sockets (4401). Repeatable: a room that could not be told keeps its row,
 * and the 503 asks for the DELETE again.
 */
export async function revokeViewerAccess(env: Env, db: Db, tokenId: string): Promise<void> {
  await db.delete(wsTickets).where(eq(wsTickets.tokenId, tokenId));
  const rooms = await db
    .select({ roomId: viewerSessions.roomId })
    .from(viewerSessions)
    .where(and(eq(viewerSessions.tokenId, tokenId), gt(viewerSessions.openedAt, Date.now() - CHAT_LIMITS.socketLifetimeMs)));
  const outcomes = await Promise.allSettled(rooms.map(({ roomId }) => roomStub(env, roomId).closeToken(tokenId)));
  const failed = rooms.filter((_, i) => outcomes[i]!.status === 'rejected').map((r) => r.roomId);
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome.status === 'rejected')
      console.error(`revocation: room ${rooms[i]!.roomId} could not close token ${tokenId}'s sockets`, outcome.reason);
  }
  if (failed.length === 0) {
    await db.delete(viewerSessions).where(eq(viewerSessions.tokenId, tokenId));
    return;
  }
  throw storeUnavailable(
    `The token is revoked, but ${failed.length} room(s) could not be told to close its WebSockets yet. Repeat the DELETE.`,
  );
}
