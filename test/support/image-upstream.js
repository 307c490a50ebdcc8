/**
 * The image hosts of the workers tests (test/chat/image-proxy.test.ts): vitest.config.ts makes this
 * Worker the `outboundService` of the Worker under test, so every fetch it makes to the internet
 * arrives here, whatever the host, and nothing leaves the machine. Real bytes, real headers, real
 * redirects and real slowness, by path.
 */

/** An 8 × 4 RGB PNG. */
const PNG = Uint8Array.from(
  atob(
    'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAECAIAAAA8r+mnAAAAQklEQVR4nAXBQQEAMAwCMZRUCUqqBCVTgoh7V9ESSYywWBHxRMUJyYyxWRPzTM0ZKUxw2JDwQsMFqUxx2ZLySsuVD3RMMWHWnCpIAAAAAElFTkSuQmCC',
  ),
  (ch) => ch.charCodeAt(0),
);
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="90" height="20"><rect width="90" height="20" fill="#4c1"/></svg>';
const MIB = 1024 * 1024;

/** How many times each URL was asked for (one isolate serves the whole test run). */
const hits = new Map();

function tooBig(bytes) {
  const body = new Uint8Array(bytes);
  body.set(PNG.subarray(0, 16));
  return body;
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const n = (hits.get(url.href) ?? 0) + 1;
    hits.set(url.href, n);
    const png = (headers = {}) => new Response(PNG, { headers: { 'Content-Type': 'image/png', ...headers } });
    switch (url.pathname) {
      case '/pixel.png':
        return png({ 'Set-Cookie': 'tracking=1' });
      case '/hits':
        return Response.json({ n: hits.get(url.searchParams.get('of')) ?? 0 });
      case '/badge.svg':
        return new Response(SVG, { headers: { 'Content-Type': 'image/svg+xml; charset=utf-8' } });
      case '/page.html':
        return new Response('<!doctype html><p>not an image</p>', { headers: { 'Content-Type': 'text/html' } });
      case '/liar.png':
        return new Response('<!doctype html><script>alert(1)</script>', { headers: { 'Content-Type': 'image/png' } });
      case '/declared-huge.png':
        return new Response(tooBig(3 * MIB), { headers: { 'Content-Type': 'image/png' } });
      case '/streamed-huge.png': {
        let sent = 0;
        const stream = new ReadableStream({
          pull(controller) {
            if (sent >= 3 * MIB) return controller.close();
            controller.enqueue(sent === 0 ? tooBig(64 * 1024) : new Uint8Array(64 * 1024));
            sent += 64 * 1024;
          },
        });
        return new Response(stream, { headers: { 'Content-Type': 'image/png' } });
      }
      case '/slow.png':
        await new Promise((resolve) => setTimeout(resolve, 8_000));
        return png();
      case '/missing.png':
        return new Response('gone', { status: 404, headers: { 'Content-Type': 'text/plain' } });
      case '/redirect-good':
        return Response.redirect(new URL('/pixel.png', url).href, 302);
      case '/redirect-private':
        return Response.redirect('https://127.0.0.1/pixel.png', 302);
      case '/redirect-http':
        return Response.redirect(`http://${url.host}/pixel.png`, 301);
      case '/redirect-loop':
        return Response.redirect(url.href, 302);
      case '/once.png':
        return n === 1 ? png() : new Response('only once', { status: 500 });
      default:
        return new Response('no such image', { status: 404 });
    }
  },
};
