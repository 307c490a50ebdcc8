import { Hono } from 'hono';
import type { AppEnv } from '../../http/context';
import { uuidParam } from '../params';
import { ROOM_PAGE_ASSET, roomPageCsp } from './room-page';

/**
 * The room page asks for a token itself (or reads a viewer link's secret from its URL's fragment,
 * which never reaches the server), so it is served to anyone; it reveals nothing but the id already
 * in its URL (the room's name arrives only with a ticket, which needs chat:read or the room's viewer
 * link). The HTML
 * is the same for every room (its script reads the id from the URL); the Worker checks the id and
 * adds the CSP, which names this host's WebSocket origin. Script and stylesheet are static assets.
 */
export const pageRoutes = new Hono<AppEnv>().get('/rooms/:id', uuidParam('No room has this id.'), async (c) => {
  const asset = await c.env.ASSETS.fetch(new URL(ROOM_PAGE_ASSET, c.req.url));
  if (!asset.ok) throw new Error(`the room page asset answered ${asset.status}; was scripts/build-page.ts run?`);
  return c.html(await asset.text(), 200, {
    'Content-Security-Policy': roomPageCsp(c.req.url),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  });
});
