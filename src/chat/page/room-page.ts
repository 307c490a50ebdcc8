/**
 * Where the room page lives among the static assets (scripts/build-page.ts writes it there from
 * client/index.html). wrangler.toml sends every /rooms/* request to the Worker first, so this file
 * is reachable only through the ASSETS binding, never directly.
 */
export const ROOM_PAGE_ASSET = '/rooms/index.html';

/**
 * Strict CSP: scripts, styles and images only from this origin, no inline code. A message's images and
 * senders' icons from other hosts come through this origin's image proxy (src/chat/image-proxy), or
 * are links and letter avatars: no message makes a viewer's browser contact another host.
 */
export function roomPageCsp(requestUrl: string): string {
  const url = new URL(requestUrl);
  const ws = `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    `connect-src 'self' ${ws}`,
    "img-src 'self'",
    "style-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
