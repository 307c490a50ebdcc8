/**
 * Where the admin page lives among the static assets (scripts/build-page.ts writes it there from
 * client/index.html). wrangler.toml sends every request but /assets/* to the Worker first, so this
 * file is reachable only through the ASSETS binding, never directly.
 */
export const ADMIN_PAGE_ASSET = '/admin/index.html';

/**
 * Strict CSP: script, style and images (the webhook kinds' icons) only from this origin, no inline
 * code, and requests only to this origin (the API and the test post to a webhook URL).
 */
export const ADMIN_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "style-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
