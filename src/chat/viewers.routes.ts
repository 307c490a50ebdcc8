import { and, asc, desc, eq, gt, gte, lt, sql } from 'drizzle-orm';
import { Hono } from 'hono';
import { z } from 'zod';
import { messages } from '../db/schema';
import { ApiError } from '../http/api-error';
import type { AppEnv } from '../http/context';
import { validQuery } from '../http/validate';
import { roomNotFound, storeUnavailable } from './chat-errors';
import { roomStub } from './stubs';
import { CHAT_LIMITS } from './limits';
import { uuidParam } from './params';
import { PROTOCOL } from './protocol';
import { getRoom, messageFromRow } from './rooms.store';
import { issueTicket, recordViewerSession, redeemTicket, tokenActive } from './tickets.store';
import { authenticateRoomReader, roomReader } from './viewer-links/viewer-link-auth';

const seqParam = z
  .string()
  .regex(/^\d{1,15}$/, { message: 'must be a whole number >= 0' })
  .transform(Number);

const historyQuery = z.object({
  after: seqParam.optional(),
  before: seqParam.optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, { message: 'must be a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(CHAT_LIMITS.historyMax))
    .optional(),
  /** Full-text search of the messages' text and metadata: words, each must appear (any order). */
  q: z.string().trim().min(1).max(CHAT_LIMITS.searchChars).optional(),
  /** Only messages whose metadata is exactly this. */
  metadata: z.string().min(1).max(CHAT_LIMITS.metadataChars).optional(),
  /** Jump to a date: only messages created at or after this instant (ISO 8601). */
  since: z
    .string()
    .max(40)
    .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 instant, e.g. 2026-11-26T09:00:00Z')
    .transform((v) => new Date(v).toISOString())
    .optional(),
  /** `desc`: newest first (a search's latest matches first; page with `before`). Default `asc`. */
  order: z.enum(['asc', 'desc']).optional(),
});

/**
 * The FTS5 query of a search: each word a quoted string (FTS5 syntax in the user's text is only
 * text), all required. Undefined when the text holds no word at all.
 */
function ftsQuery(text: string): string | undefined {
  const words = text.match(/[\p{L}\p{N}_]+/gu);
  return words
    ? words
        .slice(0, 32)
        .map((w) => `"${w}"`)
        .join(' ')
    : undefined;
}

const wsQuery = z.object({
  [PROTOCOL.query.after]: seqParam.optional(),
  [PROTOCOL.query.tail]: z
    .string()
    .regex(/^\d{1,4}$/, { message: 'must be a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(0).max(CHAT_LIMITS.replayTailMax))
    .optional(),
  [PROTOCOL.query.ticket]: z.string().min(1).max(100).optional(),
});

const roomId = uuidParam('No room has this id.');
/** chat:read, or a viewer link of this room (viewer-links/). */
const reader = roomReader;

export const viewersRoutes = new Hono<AppEnv>()
  /**
   * A 60-second, single-use ticket for one room's WebSocket, for browsers (no headers on WebSockets);
   * at most CHAT_LIMITS.wsTicketsPerToken per token per 60 s (429).
   */
  .post('/api/v1/rooms/:id/ws-ticket', reader, roomId, async (c) => {
    const room = await getRoom(c.var.db, c.req.param('id'));
    if (!room) throw roomNotFound();
    const { ticket, expiresAt } = await issueTicket(c.var.db, room.id, c.var.principal.tokenId);
    return c.json({ ticket, roomId: room.id, expiresAt, room }, 201);
  })

  /** Live viewer: bearer header with chat:read (or this room's viewer link), or `?ticket=`. Replay with `after=` or `tail=`. */
  .get('/api/v1/rooms/:id/ws', roomId, validQuery(wsQuery), async (c) => {
    if (c.req.header('Upgrade')?.toLowerCase() !== 'websocket') {
      throw new ApiError(426, 'upgrade.required', 'This endpoint is a WebSocket: send Upgrade: websocket.', [], { Upgrade: 'websocket' });
    }
    const id = c.req.param('id');
    const query = c.req.valid('query');
    const ticket = query[PROTOCOL.query.ticket];
    const header = c.req.header('Authorization');
    let tokenId: string;
    if (header !== undefined || ticket === undefined) {
      tokenId = (await authenticateRoomReader(c, header, id)).tokenId;
    } else {
      const owner = await redeemTicket(c.var.db, ticket, id);
      if (owner === null)
        throw new ApiError(401, 'bad.credentials', 'The ticket is unknown, expired, already used, for another room or of a revoked token.');
      tokenId = owner;
    }
    if (!(await getRoom(c.var.db, id))) throw roomNotFound();
    // Recorded before the socket opens, so a revocation from now on finds this room (and closes the
    // socket there); one that came before is seen by the check after the upgrade.
    await recordViewerSession(c.var.db, tokenId, id);

    const target = new URL('https://room.internal/ws');
    target.searchParams.set('room', id);
    target.searchParams.set('token', tokenId);
    const after = query[PROTOCOL.query.after];
    const tail = query[PROTOCOL.query.tail];
    if (after !== undefined) target.searchParams.set(PROTOCOL.query.after, String(after));
    else if (tail !== undefined) target.searchParams.set(PROTOCOL.query.tail, String(tail));
    const room = roomStub(c.env, id);
    let res: Response;
    try {
      res = await room.fetch(new Request(target, { headers: { Upgrade: 'websocket' } }));
    } catch (err) {
      console.error('room upgrade failed', err);
      throw storeUnavailable('The room cannot take viewers right now. Retry later.');
    }
    if (res.status === 410) throw roomNotFound();
    if (res.status === 429) {
      throw new ApiError(
        503,
        'service.unavailable',
        `This room has its maximum of ${CHAT_LIMITS.viewersPerRoom} viewers. Retry later.`,
        [],
        { 'Retry-After': '30' },
      );
    }
    if (res.status !== 101) throw storeUnavailable('The room cannot take viewers right now. Retry later.');
    // A revocation between the authentication and the upgrade may have found no socket to close.
    if (!(await tokenActive(c.var.db, tokenId))) {
      await room.closeToken(tokenId).catch(() => undefined);
      throw new ApiError(401, 'bad.credentials', 'Invalid login credentials.');
    }
    // No permessage-deflate towards the viewer (an empty header says so to the runtime): each socket
    // has its own deflate context, so every frame would be compressed once per viewer, on the
    // room's thread. Frames are small HTML snippets; at 100 viewers deflate was 40 % of
    // workerd's CPU. (Under `wrangler dev` its entry worker sits in front of this response and
    // negotiates compression with the client anyway; see README, Benchmarks.)
    return new Response(null, { status: 101, webSocket: res.webSocket, headers: { 'Sec-WebSocket-Extensions': '' } });
  })

  /**
   * History from D1, by seq: `after < seq < before`, ascending, at most `limit`; `nextAfter` when
   * more remain. The room flushes what it holds first, so every acknowledged message is included.
   */
  .get('/api/v1/rooms/:id/messages', reader, roomId, validQuery(historyQuery), async (c) => {
    const id = c.req.param('id');
    const { after = 0, before, limit = CHAT_LIMITS.historyDefault, q, metadata, since, order = 'asc' } = c.req.valid('query');
    const search = q === undefined ? undefined : ftsQuery(q);
    if (q !== undefined && search === undefined) return c.json({ entities: [] });
    if (!(await getRoom(c.var.db, id))) throw roomNotFound();
    try {
      await roomStub(c.env, id).flush(id);
    } catch (err) {
      console.error('history flush failed', err);
      throw storeUnavailable('History is unavailable for now: recent messages could not be written to the database. Retry later.');
    }
    const rows = await c.var.db
      .select()
      .from(messages)
      .where(
        and(
          eq(messages.roomId, id),
          gt(messages.seq, after),
          before !== undefined ? lt(messages.seq, before) : undefined,
          metadata !== undefined ? eq(messages.metadata, metadata) : undefined,
          since !== undefined ? gte(messages.createdAt, since) : undefined,
          search !== undefined ? sql`${messages}.rowid IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ${search})` : undefined,
        ),
      )
      .orderBy(order === 'asc' ? asc(messages.seq) : desc(messages.seq))
      .limit(limit + 1);
    const entities = rows.slice(0, limit).map(messageFromRow);
    const last = entities[entities.length - 1];
    if (rows.length <= limit || !last) return c.json({ entities });
    return c.json(order === 'asc' ? { entities, nextAfter: last.seq } : { entities, nextBefore: last.seq });
  });
