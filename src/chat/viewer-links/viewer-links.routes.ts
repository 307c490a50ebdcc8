import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import { ApiError } from '../../http/api-error';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson } from '../../http/validate';
import { roomNotFound, storeUnavailable } from '../chat-errors';
import { CHAT_LIMITS, isUuid, viewerLinkUrl } from '../limits';
import { uuidParam } from '../params';
import { getRoom } from '../rooms.store';
import { roomStub } from '../stubs';
import { createViewerLink, deleteViewerLink, getViewerLink, listViewerLinks, replaceSecret, viewerLinkView } from './viewer-links.store';

const createSchema = z.strictObject({ label: z.string().trim().min(1).max(CHAT_LIMITS.viewerLinkLabelChars) });

const admin = requirePermission('chat:admin');
const roomId = uuidParam('No room has this id.');
const linkId = createMiddleware<AppEnv>(async (c, next) => {
  if (!isUuid(c.req.param('linkId') ?? '')) throw linkNotFound();
  await next();
});

function linkNotFound(): ApiError {
  return ApiError.notFound('This room has no viewer link with this id.');
}

/**
 * Closes the room's WebSockets opened by a viewer link's principal (close code 4401, as a revoked
 * token's). Before the secret changes, so that a room that cannot be told leaves everything as it was
 * (503, repeatable); again after, best effort, for a socket that opened in between.
 */
async function closeSockets(env: Env, room: string, principalId: string, strict: boolean): Promise<void> {
  try {
    await roomStub(env, room).closeToken(principalId);
  } catch (err) {
    console.error(`viewer link: room ${room} could not close ${principalId}'s sockets`, err);
    if (strict) throw storeUnavailable('The room could not be told to close the link’s WebSockets; nothing was changed. Retry later.');
  }
}

/**
 * Read-only links to one room (chat:admin): the secret is shown once, on creation and on rotation;
 * only its SHA-256 is kept. The link opens that room's page, ticket, history and WebSocket, nothing
 * else (viewer-link-auth.ts).
 */
export const viewerLinksRoutes = new Hono<AppEnv>()
  .post('/api/v1/rooms/:id/viewer-links', admin, roomId, jsonBody(CHAT_LIMITS.adminBodyBytes), validJson(createSchema), async (c) => {
    const room = c.req.param('id');
    const outcome = await createViewerLink(c.var.db, room, c.req.valid('json').label);
    if (outcome === 'no room') throw roomNotFound();
    if (outcome === 'full') {
      throw new ApiError(
        409,
        'conflict',
        `This room has ${CHAT_LIMITS.viewerLinksPerRoom} viewer links, the most it may; revoke one first.`,
      );
    }
    const { row, secret } = outcome;
    return c.json({ ...viewerLinkView(row), secret, url: viewerLinkUrl(new URL(c.req.url).origin, room, secret) }, 201);
  })
  .get('/api/v1/rooms/:id/viewer-links', admin, roomId, async (c) => {
    const room = c.req.param('id');
    if (!(await getRoom(c.var.db, room))) throw roomNotFound();
    return c.json({ entities: (await listViewerLinks(c.var.db, room)).map(viewerLinkView) });
  })
  /** A new secret, hence a new URL; the old one is refused from this moment and its sockets are closed. */
  .post('/api/v1/rooms/:id/viewer-links/:linkId/rotate', admin, roomId, linkId, async (c) => {
    const room = c.req.param('id');
    const current = await getViewerLink(c.var.db, room, c.req.param('linkId'));
    if (!current) throw linkNotFound();
    await closeSockets(c.env, room, current.principalId, true);
    const rotated = await replaceSecret(c.var.db, current);
    if (!rotated) {
      if (!(await getViewerLink(c.var.db, room, current.id))) throw linkNotFound();
      throw new ApiError(409, 'conflict', 'The link was rotated by another request meanwhile; nothing was changed. Retry.');
    }
    await closeSockets(c.env, room, current.principalId, false);
    const { row, secret } = rotated;
    return c.json({ ...viewerLinkView(row), secret, url: viewerLinkUrl(new URL(c.req.url).origin, room, secret) });
  })
  /** Revokes the link: refused from this moment, its sockets closed. */
  .delete('/api/v1/rooms/:id/viewer-links/:linkId', admin, roomId, linkId, async (c) => {
    const room = c.req.param('id');
    const current = await getViewerLink(c.var.db, room, c.req.param('linkId'));
    if (!current) throw linkNotFound();
    await closeSockets(c.env, room, current.principalId, true);
    const principal = await deleteViewerLink(c.var.db, current);
    if (principal === undefined) throw linkNotFound();
    await closeSockets(c.env, room, principal, false);
    return c.body(null, 204);
  });
