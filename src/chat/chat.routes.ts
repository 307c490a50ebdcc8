import { Hono } from 'hono';
import type { AppEnv } from '../http/context';
import { pageRoutes } from './page/page.routes';
import { peoplePostRoutes } from './people-post/people-post.routes';
import { roomsRoutes } from './rooms.routes';
import { viewersRoutes } from './viewers.routes';
import { webhookPostRoutes } from './webhook-post/webhook-post.routes';
import { webhooksRoutes } from './webhooks.routes';

/**
 * Everything chat: admin routes, the public webhook post (and its edits), viewers (history,
 * WebSocket), people's posts (chat:write) and the room page.
 */
export const chatRoutes = new Hono<AppEnv>()
  .route('/', roomsRoutes)
  .route('/', viewersRoutes)
  .route('/', peoplePostRoutes)
  .route('/', webhooksRoutes)
  .route('/', webhookPostRoutes)
  .route('/', pageRoutes);
