import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { DomainError } from './errors';
import { ApiError, errorBody, fromDomainError } from './http/api-error';
import type { AppEnv } from './http/context';
import { createDb } from './db/client';
import { notMigrated } from './db/missing-table';
import { tokensRoutes } from './tokens/tokens.routes';
import { analyticsRoutes } from './analytics/analytics.routes';
import { chatRoutes } from './chat/chat.routes';
import { viewerLinksRoutes } from './chat/viewer-links/viewer-links.routes';
import { imageProxyRoutes } from './chat/image-proxy/image-proxy.routes';
import { apiCors } from './http/cors';
import { clientsRoutes } from './oauth/clients.routes';
import { tokenRoutes } from './oauth/token.routes';
import { adminPageRoutes } from './admin-page/admin-page.routes';

export const CORRELATION_HEADER = 'ININ-Correlation-Id';

/**
 * Maps anything thrown in a route to an ApiError; a database without its tables is a 503 that names the
 * fix; other unknown errors are logged and become a 500.
 */
function toApiError(err: unknown, contextId: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError) return fromDomainError(err);
  if (err instanceof HTTPException) {
    // Hono's own validator raises 400 for unparseable JSON bodies.
    if (err.status === 400)
      return new ApiError(400, 'bad.request', 'The request could not be understood by the server due to malformed syntax.');
    if (err.status === 404) return ApiError.notFound();
    if (err.status === 413) return new ApiError(413, 'payload.too.large', err.message || 'The request body is too large.');
  }
  const unmigrated = notMigrated(err);
  if (unmigrated) {
    console.error(`[${contextId}] ${unmigrated.message}`);
    return fromDomainError(unmigrated);
  }
  console.error(`[${contextId}] unhandled error`, err);
  return new ApiError(500, 'internal.server.error', 'The server encountered an unexpected error.');
}

/** The one place an error answer is written: Genesys' ErrorBody, correlation id in header and body. */
function errorResponse(c: Context<AppEnv>, apiError: ApiError): Response {
  const contextId = c.get('contextId') ?? crypto.randomUUID();
  const res = c.json(errorBody(apiError, contextId), apiError.status);
  res.headers.set(CORRELATION_HEADER, contextId);
  for (const [name, value] of Object.entries(apiError.headers)) res.headers.set(name, value);
  return res;
}

export function createApp() {
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    const contextId = crypto.randomUUID();
    c.set('contextId', contextId);
    c.set('db', createDb(c.env.DB));
    await next();
    c.header(CORRELATION_HEADER, contextId);
  });

  // Browsers on allow-listed origins (wallboards): before any route, so a preflight is never authenticated.
  app.use('/api/*', apiCors());

  app.route('/', tokensRoutes);
  app.route('/', clientsRoutes);
  app.route('/', tokenRoutes);
  app.route('/', analyticsRoutes);
  app.route('/', chatRoutes);
  app.route('/', viewerLinksRoutes);
  app.route('/', imageProxyRoutes);
  // The service's admin page (rooms, webhooks, viewer links, tokens, OAuth clients), and `GET /` to it.
  app.route('/', adminPageRoutes);

  app.notFound((c) => errorResponse(c, ApiError.notFound('No resource matches this method and path.')));
  app.onError((err, c) => errorResponse(c, toApiError(err, c.get('contextId') ?? 'unknown')));

  return app;
}
