import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context';
import { ApiError } from '../http/api-error';
import { isUuid } from './limits';

/** Path ids are UUIDs; anything else names no resource (404, not a validation error). */
export function uuidParam(message: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!isUuid(c.req.param('id') ?? '')) throw ApiError.notFound(message);
    await next();
  });
}
