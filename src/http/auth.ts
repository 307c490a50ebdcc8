import { createMiddleware } from 'hono/factory';
import { and, eq, gt, isNull } from 'drizzle-orm';
import { ApiError } from './api-error';
import type { AppEnv, Principal } from './context';
import { ACCESS_TOKEN_PREFIX, secretsEqual, sha256Hex, VIEWER_LINK_PREFIX } from './secrets';
import { oauthAccessTokens, oauthClients, tokens } from '../db/schema';
import { PERMISSIONS, type Permission } from './permissions';

const ADMIN: Principal = { tokenId: 'admin', permissions: new Set(PERMISSIONS) };

/** The client behind an unexpired access token of an active client: its id and permissions. */
async function resolveAccessToken(
  db: AppEnv['Variables']['db'],
  token: string,
): Promise<{ clientId: string; permissions: Permission[] } | undefined> {
  const row = await db
    .select({ clientId: oauthClients.id, permissions: oauthClients.permissions })
    .from(oauthAccessTokens)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthAccessTokens.clientId))
    .where(
      and(
        eq(oauthAccessTokens.tokenHash, await sha256Hex(token)),
        gt(oauthAccessTokens.expiresAt, Date.now()),
        isNull(oauthClients.revokedAt),
      ),
    )
    .get();
  return row ? { clientId: row.clientId, permissions: row.permissions as Permission[] } : undefined;
}

/** Extracts the bearer token; a missing or non-Bearer Authorization header carries no token. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * Resolves the request's principal from `Authorization: Bearer <token>`: ADMIN_TOKEN holds every
 * permission; other tokens are found by their SHA-256 and must not be revoked. An OAuth access token
 * (its own prefix, so one lookup either way) holds its client's permissions until it expires or
 * the client is revoked; its principal is the client's id.
 */
async function resolvePrincipal(env: Env, db: AppEnv['Variables']['db'], token: string): Promise<Principal | undefined> {
  if (env.ADMIN_TOKEN && (await secretsEqual(token, env.ADMIN_TOKEN))) return ADMIN;
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    const access = await resolveAccessToken(db, token);
    return access && { tokenId: access.clientId, permissions: new Set(access.permissions) };
  }
  const hash = await sha256Hex(token);
  const row = await db
    .select({ id: tokens.id, permissions: tokens.permissions })
    .from(tokens)
    .where(and(eq(tokens.tokenHash, hash), isNull(tokens.revokedAt)))
    .get();
  if (!row) return undefined;
  return { tokenId: row.id, permissions: new Set(row.permissions as Permission[]) };
}

export async function authenticate(c: { env: Env; var: AppEnv['Variables'] }, header: string | undefined): Promise<Principal> {
  const token = bearerToken(header);
  if (!token) {
    throw new ApiError(401, 'authentication.required', 'No authentication bearer token specified in authorization header.');
  }
  if (token.startsWith(VIEWER_LINK_PREFIX)) {
    // Only the room reader routes take one (chat/viewer-links/viewer-link-auth.ts).
    throw new ApiError(
      401,
      'bad.credentials',
      "A viewer link opens only its own room's page, WebSocket and history; this request needs an API token.",
    );
  }
  const principal = await resolvePrincipal(c.env, c.var.db, token);
  if (!principal) throw new ApiError(401, 'bad.credentials', 'Invalid login credentials.');
  return principal;
}

export function assertPermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.has(permission)) {
    throw new ApiError(
      403,
      'missing.permissions',
      `Unable to perform the requested action. You are missing the following permission(s): ${permission}`,
      [{ errorCode: 'missing.permissions', fieldName: permission }],
    );
  }
}

/** Route middleware: authenticate the bearer token, then require `permission`. */
export function requirePermission(permission: Permission) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const principal = await authenticate(c, c.req.header('Authorization'));
    assertPermission(principal, permission);
    c.set('principal', principal);
    await next();
  });
}
