import { createMiddleware } from 'hono/factory';
import { and, eq, gt, isNull } from 'drizzle-orm';
import { ApiError } from './api-error';
import type { AppEnv, Principal } from './context';
import { ACCESS_TOKEN_PREFIX, secretsEqual, sha256Hex, VIEWER_LINK_PREFIX } from './secrets';
import { oauthAccessTokens, oauthClients, tokens } from '../db/schema';
import { PERMISSIONS, type Permission } from './permissions';
import { lastUseDue, recordClientUse, recordTokenUse, recordUseLater } from './last-used';

const ADMIN: Principal = { tokenId: 'admin', permissions: new Set(PERMISSIONS) };

/** What authenticating needs of a request: its bindings, its D1 handle, and a way to work after the answer. */
export interface AuthContext {
  env: Env;
  var: AppEnv['Variables'];
  executionCtx: Pick<ExecutionContext, 'waitUntil'>;
}

/** A credential found: the principal it acts as, and the use to record after the answer when one is due. */
interface Resolved {
  principal: Principal;
  recordUse?: { what: string; write: () => Promise<unknown> };
}

/** The client behind an unexpired access token of an active client: its id, permissions and last use. */
async function resolveAccessToken(
  db: AppEnv['Variables']['db'],
  token: string,
): Promise<{ clientId: string; permissions: Permission[]; lastUsedAt: string | null } | undefined> {
  const row = await db
    .select({ clientId: oauthClients.id, permissions: oauthClients.permissions, lastUsedAt: oauthClients.lastUsedAt })
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
  return row ? { clientId: row.clientId, permissions: row.permissions as Permission[], lastUsedAt: row.lastUsedAt } : undefined;
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
 *
 * The lookup also reads the token's (or client's) last use, so a use is written only when the one
 * stored is stale (http/last-used.ts): not a D1 write per request.
 */
async function resolvePrincipal(env: Env, db: AppEnv['Variables']['db'], token: string): Promise<Resolved | undefined> {
  if (env.ADMIN_TOKEN && (await secretsEqual(token, env.ADMIN_TOKEN))) return { principal: ADMIN };
  const now = Date.now();
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    const access = await resolveAccessToken(db, token);
    if (!access) return undefined;
    return {
      principal: { tokenId: access.clientId, permissions: new Set(access.permissions) },
      ...(lastUseDue(access.lastUsedAt, now)
        ? { recordUse: { what: `OAuth client ${access.clientId}`, write: () => recordClientUse(db, access.clientId, now) } }
        : {}),
    };
  }
  const hash = await sha256Hex(token);
  const row = await db
    .select({ id: tokens.id, permissions: tokens.permissions, lastUsedAt: tokens.lastUsedAt })
    .from(tokens)
    .where(and(eq(tokens.tokenHash, hash), isNull(tokens.revokedAt)))
    .get();
  if (!row) return undefined;
  return {
    principal: { tokenId: row.id, permissions: new Set(row.permissions as Permission[]) },
    ...(lastUseDue(row.lastUsedAt, now)
      ? { recordUse: { what: `API token ${row.id}`, write: () => recordTokenUse(db, row.id, now) } }
      : {}),
  };
}

/** The request's principal; a use of its token or client is recorded after the answer (waitUntil). */
export async function authenticate(c: AuthContext, header: string | undefined): Promise<Principal> {
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
  const resolved = await resolvePrincipal(c.env, c.var.db, token);
  if (!resolved) throw new ApiError(401, 'bad.credentials', 'Invalid login credentials.');
  if (resolved.recordUse) recordUseLater(c.executionCtx, resolved.recordUse.what, resolved.recordUse.write);
  return resolved.principal;
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
