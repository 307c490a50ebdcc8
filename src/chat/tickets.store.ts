import { and, eq, gt, lte } from 'drizzle-orm';
import type { Db } from '../db/client';
import { wsTickets } from '../db/schema';
import { sha256Hex } from '../http/secrets';
import { CHAT_LIMITS } from './limits';

function newTicket(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `swt_${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/**
 * A WebSocket ticket: lets a browser, which cannot set headers on a WebSocket, connect to one room
 * once within 60 s, so no long-lived token ever travels in a URL. Only its SHA-256 is stored.
 */
export async function issueTicket(db: Db, roomId: string, tokenId: string): Promise<{ ticket: string; expiresAt: string }> {
  const ticket = newTicket();
  const now = Date.now();
  const expiresAt = now + CHAT_LIMITS.wsTicketTtlMs;
  await db.batch([
    db.delete(wsTickets).where(lte(wsTickets.expiresAt, now)),
    db.insert(wsTickets).values({ ticketHash: await sha256Hex(ticket), roomId, tokenId, expiresAt }),
  ]);
  return { ticket, expiresAt: new Date(expiresAt).toISOString() };
}

/** Consumes the ticket if it is unexpired and for this room; a ticket for another room stays unused. */
export async function redeemTicket(db: Db, ticket: string, roomId: string): Promise<boolean> {
  const rows = await db
    .delete(wsTickets)
    .where(and(eq(wsTickets.ticketHash, await sha256Hex(ticket)), eq(wsTickets.roomId, roomId), gt(wsTickets.expiresAt, Date.now())))
    .returning({ roomId: wsTickets.roomId });
  return rows.length === 1;
}
