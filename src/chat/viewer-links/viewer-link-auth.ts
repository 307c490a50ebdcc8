import { createMiddleware } from 'hono/factory';
import { ApiError } from '../../http/api-error';
import { assertPermission, type AuthContext, authenticate, bearerToken } from '../../http/auth';
import type { AppEnv, Principal } from '../../http/context';
import { VIEWER_LINK_PREFIX } from '../../http/secrets';
import { lastUseDue, recordUseLater } from '../../http/last-used';
import { CHAT_LIMITS } from '../limits';
import { findViewerLink, recordViewerLinkUse } from './viewer-links.store';

/** The answer a viewer link gets once it is revoked or rotated away (the room page says the same). */
export const VIEWER_LINK_GONE = 'This viewer link was revoked or replaced; ask for a new one.';

/**
 * Who reads room `roomId` (its ticket, history or WebSocket): a token with chat:read, or a viewer
 * link of this very room. A viewer link's principal holds no permission at all, so no other route
 * would take it even if it got that far (http/auth.ts refuses its prefix first).
 */
export async function authenticateRoomReader(c: AuthContext, header: string | undefined, roomId: string): Promise<Principal> {
  const token = bearerToken(header);
  if (token?.startsWith(VIEWER_LINK_PREFIX)) {
    const link = await findViewerLink(c.var.db, token);
    if (!link) throw new ApiError(401, 'bad.credentials', VIEWER_LINK_GONE);
    if (link.roomId !== roomId) {
      throw new ApiError(403, 'missing.permissions', 'This viewer link opens another room, and only that one.', [
        { errorCode: 'missing.permissions', fieldName: 'chat:read' },
      ]);
    }
    // After the answer, as an API token's use is (http/last-used.ts): a wall's reconnect waits on no write.
    const now = Date.now();
    if (lastUseDue(link.lastUsedAt, now, CHAT_LIMITS.viewerLinkLastUsedMs)) {
      const db = c.var.db;
      recordUseLater(c.executionCtx, `viewer link ${link.id}`, () => recordViewerLinkUse(db, link.id, now));
    }
    return { tokenId: link.principalId, permissions: new Set() };
  }
  const principal = await authenticate(c, header);
  assertPermission(principal, 'chat:read');
  return principal;
}

/** Route middleware for `/api/v1/rooms/:id/…` reads: chat:read, or a viewer link of room `:id`. */
export const roomReader = createMiddleware<AppEnv>(async (c, next) => {
  c.set('principal', await authenticateRoomReader(c, c.req.header('Authorization'), c.req.param('id') ?? ''));
  await next();
});
