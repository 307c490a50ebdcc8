import { Hono } from 'hono';
import type { AppEnv } from '../http/context';
import { ADMIN_PAGE_ASSET, ADMIN_PAGE_CSP } from './admin-page';

/**
 * The admin page asks for a token with `chat:admin`, `tokens:manage` or both itself (kept in the tab's
 * sessionStorage), so it is served to anyone: the HTML holds nothing but the page's frame. Every list
 * and change goes through the API with that token. Script and stylesheet are static assets.
 */
export const adminPageRoutes = new Hono<AppEnv>()
  // The base URL that `npm run dev` prints, opened in a browser: the page a person can do something with.
  .get('/', (c) => c.redirect('/admin', 302))
  .get('/admin', async (c) => {
    const asset = await c.env.ASSETS.fetch(new URL(ADMIN_PAGE_ASSET, c.req.url));
    if (!asset.ok) throw new Error(`the admin page asset answered ${asset.status}; was scripts/build-page.ts run?`);
    return c.html(await asset.text(), 200, {
      'Content-Security-Policy': ADMIN_PAGE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
  });
