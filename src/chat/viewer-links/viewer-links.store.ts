import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { viewerLinks, wsTickets } from '../../db/schema';
import { lastUseStale } from '../../http/last-used';
import { newToken, sha256Hex, VIEWER_LINK_PREFIX } from '../../http/secrets';
import { CHAT_LIMITS } from '../limits';

type ViewerLinkRow = typeof viewerLinks.$inferSelect;

/** A viewer link as the API lists it: never its secret (only its SHA-256 is stored). */
export interface ViewerLinkView {
  id: string;
  roomId: string;
  label: string;
  createdAt: string;
  /** When the current secret replaced the previous one; null: never rotated. */
  rotatedAt: string | null;
  /** When the link last opened the room (ticket, history or WebSocket), to the minute; null: never. */
  lastUsedAt: string | null;
}

export function viewerLinkView(row: ViewerLinkRow): ViewerLinkView {
  return {
    id: row.id,
    roomId: row.roomId,
    label: row.label,
    createdAt: row.createdAt,
    rotatedAt: row.rotatedAt,
    lastUsedAt: row.lastUsedAt,
  };
}

/** A viewer link's principal id starts with this (a token's id is a bare UUID). */
export const VIEWER_LINK_PRINCIPAL_PREFIX = 'vl_';

/** The id a link's current secret acts as (tickets, sockets): a new one with every secret. */
function newPrincipalId(): string {
  return `${VIEWER_LINK_PRINCIPAL_PREFIX}${crypto.randomUUID()}`;
}

export type CreateOutcome = { row: ViewerLinkRow; secret: string } | 'no room' | 'full';

/**
 * A new link for the room, unless the room is gone or holds CHAT_LIMITS.viewerLinksPerRoom links:
 * the checks and the insert are one statement, so concurrent requests cannot pass the limit together
 * and a link never outlives a room deleted meanwhile (the foreign key also cascades).
 */
export async function createViewerLink(db: Db, roomId: string, label: string): Promise<CreateOutcome> {
  const secret = newToken(VIEWER_LINK_PREFIX);
  const row: ViewerLinkRow = {
    id: crypto.randomUUID(),
    roomId,
    label,
    secretHash: await sha256Hex(secret),
    principalId: newPrincipalId(),
    createdAt: new Date().toISOString(),
    rotatedAt: null,
    lastUsedAt: null,
  };
  const inserted = await db.$client
    .prepare(
      `INSERT INTO viewer_links (id, room_id, label, secret_hash, principal_id, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6
       WHERE EXISTS (SELECT 1 FROM rooms WHERE id = ?2)
         AND (SELECT COUNT(*) FROM viewer_links WHERE room_id = ?2) < ?7`,
    )
    .bind(row.id, roomId, label, row.secretHash, row.principalId, row.createdAt, CHAT_LIMITS.viewerLinksPerRoom)
    .run();
  if (inserted.meta.changes === 1) return { row, secret };
  const room = await db.$client.prepare('SELECT 1 FROM rooms WHERE id = ?').bind(roomId).first();
  return room === null ? 'no room' : 'full';
}

/** The room's links, oldest first. */
export async function listViewerLinks(db: Db, roomId: string): Promise<ViewerLinkRow[]> {
  return db.select().from(viewerLinks).where(eq(viewerLinks.roomId, roomId)).orderBy(asc(viewerLinks.createdAt), asc(viewerLinks.id));
}

export async function getViewerLink(db: Db, roomId: string, id: string): Promise<ViewerLinkRow | undefined> {
  return db
    .select()
    .from(viewerLinks)
    .where(and(eq(viewerLinks.id, id), eq(viewerLinks.roomId, roomId)))
    .get();
}

/** The link a presented secret belongs to, by its SHA-256; undefined: unknown, revoked or rotated away. */
export async function findViewerLink(db: Db, secret: string): Promise<ViewerLinkRow | undefined> {
  return db
    .select()
    .from(viewerLinks)
    .where(eq(viewerLinks.secretHash, await sha256Hex(secret)))
    .get();
}

/**
 * Records a use at `now` unless one within CHAT_LIMITS.viewerLinkLastUsedMs is recorded already: the
 * caller checks the row it read, and the UPDATE checks again, so walls that reconnect together write once.
 */
export async function recordViewerLinkUse(db: Db, id: string, now: number): Promise<void> {
  await db
    .update(viewerLinks)
    .set({ lastUsedAt: new Date(now).toISOString() })
    .where(and(eq(viewerLinks.id, id), lastUseStale(viewerLinks.lastUsedAt, now, CHAT_LIMITS.viewerLinkLastUsedMs)));
}

/**
 * A new secret for the link, in place of `current`'s: the old secret's hash and principal go, with the
 * old principal's unused tickets, in one transaction. Undefined when the link changed meanwhile (a
 * concurrent rotation or revocation): nothing was written.
 */
export async function replaceSecret(db: Db, current: ViewerLinkRow): Promise<{ row: ViewerLinkRow; secret: string } | undefined> {
  const secret = newToken(VIEWER_LINK_PREFIX);
  const [updated] = await db.batch([
    db
      .update(viewerLinks)
      .set({ secretHash: await sha256Hex(secret), principalId: newPrincipalId(), rotatedAt: new Date().toISOString() })
      .where(and(eq(viewerLinks.id, current.id), eq(viewerLinks.principalId, current.principalId)))
      .returning(),
    db.delete(wsTickets).where(eq(wsTickets.tokenId, current.principalId)),
  ]);
  const row = updated[0];
  return row && { row, secret };
}

/**
 * Deletes the link and `current`'s tickets in one transaction; answers the principal it had when
 * deleted (a rotation may have come between), undefined when it was already gone. Tickets of a later
 * principal are refused anyway: redeeming one needs its link.
 */
export async function deleteViewerLink(db: Db, current: ViewerLinkRow): Promise<string | undefined> {
  const [deleted] = await db.batch([
    db.delete(viewerLinks).where(eq(viewerLinks.id, current.id)).returning({ principalId: viewerLinks.principalId }),
    db.delete(wsTickets).where(eq(wsTickets.tokenId, current.principalId)),
  ]);
  return deleted[0]?.principalId;
}
