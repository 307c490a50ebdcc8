import { Hono } from 'hono';
import type { AppEnv } from '../../http/context';
import { uuidParam } from '../params';
import { ROOM_SCRIPT, ROOM_SCRIPT_PATH, ROOM_STYLE, ROOM_STYLE_PATH, roomPageCsp, roomPageHtml } from './room-page';

const COMMON_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

/**
 * The room page asks for a token itself, so it is served to anyone; it reveals nothing but the id
 * already in its URL (the room's name arrives only with a ticket, which needs chat:read).
 */
export const pageRoutes = new Hono<AppEnv>()
  .get('/rooms/:id', uuidParam('No room has this id.'), (c) =>
    c.html(roomPageHtml(c.req.param('id')), 200, {
      ...COMMON_HEADERS,
      'Content-Security-Policy': roomPageCsp(c.req.url),
      'Cache-Control': 'no-store',
    }),
  )
  .get(ROOM_SCRIPT_PATH, (c) =>
    c.body(ROOM_SCRIPT, 200, { ...COMMON_HEADERS, 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' }),
  )
  .get(ROOM_STYLE_PATH, (c) =>
    c.body(ROOM_STYLE, 200, { ...COMMON_HEADERS, 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'no-cache' }),
  );
