import { Hono } from 'hono';
import { z } from 'zod';
import { ApiError } from '../http/api-error';
import { requirePermission } from '../http/auth';
import type { AppEnv } from '../http/context';
import { jsonBody } from '../http/json-body';
import { validJson } from '../http/validate';
import { PERMISSIONS } from '../http/permissions';
import { revokeViewerAccess } from '../chat/tickets.store';
import { createToken, getToken, listTokens, revokeToken } from './tokens.store';

export const TOKEN_LIMITS = { nameLength: 100, bodyBytes: 16 * 1024 } as const;

const createTokenSchema = z.object({
  name: z.string().trim().min(1).max(TOKEN_LIMITS.nameLength),
  permissions: z
    .array(z.enum(PERMISSIONS))
    .min(1)
    .max(PERMISSIONS.length * 2),
});

export const tokensRoutes = new Hono<AppEnv>()
  .post('/api/v1/tokens', requirePermission('tokens:manage'), jsonBody(TOKEN_LIMITS.bodyBytes), validJson(createTokenSchema), async (c) => {
    const { name, permissions } = c.req.valid('json');
    // A token manager hands out only what it holds itself: tokens:manage alone is no way to chat:admin.
    const beyond = permissions.filter((p) => !c.var.principal.permissions.has(p));
    if (beyond.length > 0) {
      throw new ApiError(
        403,
        'missing.permissions',
        `A token can grant only permissions it holds. You are missing the following permission(s): ${[...new Set(beyond)].join(', ')}`,
        [...new Set(beyond)].map((p) => ({ errorCode: 'missing.permissions', fieldName: p })),
      );
    }
    return c.json(await createToken(c.var.db, name, permissions), 201);
  })
  .get('/api/v1/tokens', requirePermission('tokens:manage'), async (c) => {
    return c.json({ entities: await listTokens(c.var.db) });
  })
  // One token, as OAuth clients have (GET …/oauth/clients/{id}): a script checks one token's last use or state.
  .get('/api/v1/tokens/:id', requirePermission('tokens:manage'), async (c) => {
    const token = await getToken(c.var.db, c.req.param('id'));
    if (!token) throw ApiError.notFound('No token has this id.');
    return c.json(token);
  })
  /**
   * Revokes the token: it authenticates nothing from now on, its unused WebSocket tickets are void,
   * and its open WebSockets are closed (4401). A repeat does it all again (e.g. after a 503).
   */
  .delete('/api/v1/tokens/:id', requirePermission('tokens:manage'), async (c) => {
    const id = c.req.param('id');
    if (!(await revokeToken(c.var.db, id))) throw ApiError.notFound('No token has this id.');
    await revokeViewerAccess(c.env, c.var.db, id);
    return c.body(null, 204);
  });
