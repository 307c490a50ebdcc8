import { Hono } from 'hono';
import { z } from 'zod';
import { ApiError } from '../http/api-error';
import { requirePermission } from '../http/auth';
import type { AppEnv } from '../http/context';
import { jsonBody } from '../http/json-body';
import { PERMISSIONS } from '../http/permissions';
import { validJson } from '../http/validate';
import { revokeViewerAccess } from '../chat/tickets.store';
import { createClient, getClient, listClients, revokeClient } from './clients.store';
import { CLIENT_CREDENTIALS, OAUTH_LIMITS } from './oauth.limits';

/**
 * Genesys' OAuthClient request, the part this service honours. Strict: a Genesys field it does not
 * implement (`roleIds`, `registeredRedirectUri`, …) is a 400 naming it, never silently dropped.
 */
const createClientSchema = z.strictObject({
  name: z.string().trim().min(1).max(OAUTH_LIMITS.nameLength),
  description: z.string().max(OAUTH_LIMITS.descriptionLength).optional(),
  authorizedGrantType: z.literal(CLIENT_CREDENTIALS, { error: `only ${CLIENT_CREDENTIALS} is supported` }),
  permissions: z
    .array(z.enum(PERMISSIONS))
    .min(1)
    .max(PERMISSIONS.length * 2),
  accessTokenValiditySeconds: z
    .number()
    .int()
    .min(OAUTH_LIMITS.minValiditySeconds)
    .max(OAUTH_LIMITS.maxValiditySeconds)
    .default(OAUTH_LIMITS.defaultValiditySeconds),
});

const CLIENTS = '/api/v2/oauth/clients';
const manage = requirePermission('tokens:manage');

export const clientsRoutes = new Hono<AppEnv>()
  .post(CLIENTS, manage, jsonBody(OAUTH_LIMITS.bodyBytes), validJson(createClientSchema), async (c) => {
    const body = c.req.valid('json');
    // As for tokens: a client gets only permissions its creator holds.
    const beyond = [...new Set(body.permissions.filter((p) => !c.var.principal.permissions.has(p)))];
    if (beyond.length > 0) {
      throw new ApiError(
        403,
        'missing.permissions',
        `A client can be granted only permissions its creator holds. You are missing the following permission(s): ${beyond.join(', ')}`,
        beyond.map((p) => ({ errorCode: 'missing.permissions', fieldName: p })),
      );
    }
    return c.json(await createClient(c.var.db, body), 201);
  })
  .get(CLIENTS, manage, async (c) => {
    const entities = await listClients(c.var.db);
    return c.json({ entities, pageSize: entities.length, pageNumber: 1, total: entities.length, pageCount: 1 });
  })
  .get(`${CLIENTS}/:id`, manage, async (c) => {
    const client = await getClient(c.var.db, c.req.param('id'));
    if (!client) throw ApiError.notFound('No OAuth client has this id.');
    return c.json(client);
  })
  /** Revokes the client: its secret and every access token issued to it stop working at once, and its room sockets close (4401). */
  .delete(`${CLIENTS}/:id`, manage, async (c) => {
    const id = c.req.param('id');
    if (!(await revokeClient(c.var.db, id))) throw ApiError.notFound('No OAuth client has this id.');
    await revokeViewerAccess(c.env, c.var.db, id);
    return c.body(null, 204);
  });
