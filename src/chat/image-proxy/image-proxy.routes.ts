/**
 * `GET /image-proxy?u=<https URL>&s=<signature>`: an image from another host, served from this origin
 * so that viewers' browsers never contact the sender's host (no tracking pixel) and the room page's CSP
 * stays `img-src 'self'`. Only URLs signed with IMAGE_PROXY_KEY (sign.ts) are fetched; good answers
 * are kept in the Cache API for IMAGE_PROXY_LIMITS.cacheSeconds. Every refusal is an ErrorBody (no
 * image): the page then shows the link or the letter avatar in its place.
 */
import { Hono } from 'hono';
import { ApiError } from '../../http/api-error';
import type { AppEnv } from '../../http/context';
import { fetchImage, type UpstreamRoute } from './fetch-image';
import { IMAGE_PROXY_LIMITS } from './limits';
import { IMAGE_PROXY_PATH, imageSignatureValid, proxyKey } from './sign';
import { imageUrlProblem } from './upstream-rule';

/**
 * On every image answer: no script ever runs in it, SVG included (opened on its own, it is a sandboxed
 * document with an opaque origin); no other page may embed it; the browser never second-guesses its type.
 */
const IMAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  'X-Content-Type-Options': 'nosniff',
  'Content-Disposition': 'inline',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': `public, max-age=${IMAGE_PROXY_LIMITS.cacheSeconds}`,
};

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Where upstream requests go. The e2e harness (test/e2e/room-page-images.test.ts) sets
 * IMAGE_PROXY_LOOPBACK_UPSTREAM to a local http server; it is honoured only for a request that came to
 * a loopback address (`wrangler dev`), which a deployed Worker never receives, so it cannot be turned on there.
 */
function upstreamRoute(env: Env, requestUrl: string): UpstreamRoute {
  const local = env.IMAGE_PROXY_LOOPBACK_UPSTREAM;
  if (!local || !LOOPBACK.has(new URL(requestUrl).hostname)) return (url) => url.href;
  const origin = new URL(local).origin;
  return (url) => `${origin}${url.pathname}${url.search}`;
}

export const imageProxyRoutes = new Hono<AppEnv>().get(IMAGE_PROXY_PATH, async (c) => {
  const key = proxyKey(c.env);
  if (key === null) throw ApiError.notFound('The image proxy is not configured (no IMAGE_PROXY_KEY).');
  const url = c.req.query('u');
  const signature = c.req.query('s');
  if (!url || !signature) {
    throw new ApiError(400, 'bad.request', 'An image URL (u) and its signature (s) are required.', [
      { errorCode: 'bad.request', fieldName: url ? 's' : 'u' },
    ]);
  }
  if (!(await imageSignatureValid(key, url, signature))) {
    throw new ApiError(403, 'bad.signature', 'This image URL is not signed by this service.', [
      { errorCode: 'bad.signature', fieldName: 's' },
    ]);
  }
  const problem = imageUrlProblem(url);
  if (problem !== undefined)
    throw new ApiError(403, 'bad.request', `This image URL is refused: ${problem}.`, [{ errorCode: 'bad.request', fieldName: 'u' }]);

  // Keyed by the image's URL alone, so one image is fetched once whatever signs it.
  const cacheKey = new Request(new URL(`${IMAGE_PROXY_PATH}?u=${encodeURIComponent(url)}`, c.req.url));
  const cache = caches.default;
  const cached = await cache.match(cacheKey);
  // A copy: a cached answer's headers are immutable, and the app adds its correlation id.
  if (cached) return new Response(cached.body, cached);

  const image = await fetchImage(url, upstreamRoute(c.env, c.req.url));
  if (!image.ok) throw new ApiError(502, 'bad.gateway', `The image could not be served: ${image.reason}.`);
  const response = new Response(image.bytes, {
    status: 200,
    headers: { ...IMAGE_HEADERS, 'Content-Type': image.type, 'Content-Length': String(image.bytes.byteLength) },
  });
  c.executionCtx.waitUntil(cache.put(cacheKey, response.clone()));
  return response;
});
