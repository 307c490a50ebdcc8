import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/client';
import { oauthAccessTokens, oauthClients } from '../db/schema';
import type { Permission } from '../http/permissions';
import { sha256Hex } from '../http/secrets';
import { ACCESS_TOKEN_PREFIX } from '../http/secrets';
import { CLIENT_CREDENTIALS, CLIENT_SECRET_PREFIX, OAUTH_LIMITS } from './oauth.limits';

/** Genesys' OAuthClient, the fields this service fills; `secret` only in the answer to its creation. */
export interface OAuthClientView {
  id: string;
  name: string;
  description?: string;
  authorizedGrantType: typeof CLIENT_CREDENTIALS;
  permissions: Permission[];
  accessTokenValiditySeconds: number;
  state: 'active' | 'inactive';
  dateCreated: string;
  dateRevoked?: string;
  /**
   * The last time it got an access token or one of its access tokens authenticated a request, within
   * the hour (LAST_USED_RESOLUTION_MS); null: never. Not a Genesys field.
   */
  lastUsedAt: string | null;
}

export interface NewClient {
  name: string;
  description?: string;
  permissions: Permission[];
  accessTokenValiditySeconds: number;
}

/** 256 random bits, base64url, after a prefix. */
function randomSecret(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `${prefix}${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

function view(row: typeof oauthClients.$inferSelect): OAuthClientView {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    authorizedGrantType: CLIENT_CREDENTIALS,
    permissions: row.permissions as Permission[],
    accessTokenValiditySeconds: row.accessTokenValiditySeconds,
    state: row.revokedAt ? 'inactive' : 'active',
    dateCreated: row.createdAt,
    ...(row.revokedAt ? { dateRevoked: row.revokedAt } : {}),
    lastUsedAt: row.lastUsedAt,
  };
}

export async function createClient(db: Db, client: NewClient): Promise<OAuthClientView & { secret: string }> {
  const secret = randomSecret(CLIENT_SECRET_PREFIX);
  const row = {
    id: crypto.randomUUID(),
    name: client.name,
    description: client.description ?? null,
    permissions: [...new Set(client.permissions)],
    secretHash: await sha256Hex(secret),
    accessTokenValiditySeconds: client.accessTokenValiditySeconds,
    createdAt: new Date().toISOString(),
    revokedAt: null,
    lastUsedAt: null,
  };
  await db.insert(oauthClients).values(row);
  return { ...view(row), secret };
}

export async function listClients(db: Db): Promise<OAuthClientView[]> {
  const rows = await db.select().from(oauthClients).orderBy(desc(oauthClients.createdAt), oauthClients.id);
  return rows.map(view);
}

export async function getClient(db: Db, id: string): Promise<OAuthClientView | undefined> {
  const row = await db.select().from(oauthClients).where(eq(oauthClients.id, id)).get();
  return row ? view(row) : undefined;
}

/**
 * Revokes the client and deletes every access token issued to it, in one transaction (a token
 * request running at the same time either ends before, and its token is deleted, or after, and finds
 * the client revoked). The row stays for audits. False when the id is unknown; a repeat is harmless.
 */
export async function revokeClient(db: Db, id: string): Promise<boolean> {
  const [, , found] = await db.batch([
    db
      .update(oauthClients)
      .set({ revokedAt: new Date().toISOString() })
      .where(and(eq(oauthClients.id, id), isNull(oauthClients.revokedAt))),
    db.delete(oauthAccessTokens).where(eq(oauthAccessTokens.clientId, id)),
    db.select({ id: oauthClients.id }).from(oauthClients).where(eq(oauthClients.id, id)),
  ]);
  return found.length === 1;
}

/**
 * The active client whose id and secret these are, or undefined. The secret is compared by its
 * SHA-256 in constant time; an unknown id costs the same hash.
 */
export async function verifyClient(db: Db, clientId: string, secret: string): Promise<typeof oauthClients.$inferSelect | undefined> {
  const [row, presented] = await Promise.all([
    db
      .select()
      .from(oauthClients)
      .where(and(eq(oauthClients.id, clientId), isNull(oauthClients.revokedAt)))
      .get(),
    crypto.subtle.digest('SHA-256', new TextEncoder().encode(secret)),
  ]);
  if (!row) return undefined;
  const stored = hexBytes(row.secretHash);
  if (!stored || stored.byteLength !== presented.byteLength) return undefined;
  return crypto.subtle.timingSafeEqual(presented, stored) ? row : undefined;
}

function hexBytes(hex: string): ArrayBuffer | undefined {
  if (!/^[0-9a-f]{64}$/.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out.buffer;
}

export interface IssuedToken {
  accessToken: string;
  /** Seconds, as the token endpoint answers them. */
  expiresIn: number;
}

/**
 * Issues an access token to an active client, in one transaction: the client's expired tokens are
 * deleted, then its oldest beyond OAUTH_LIMITS.liveTokensPerClient - 1 (by rowid: insertion order,
 * even within one millisecond), then the new one is inserted if the client is still active.
 * Undefined when it was revoked meanwhile.
 *
 * `expires_in` is one second less than the validity, as Genesys answers (86399 for 86400): a client
 * that counts from when it reads the answer never uses the token past its expiry.
 */
export async function issueAccessToken(db: Db, clientId: string, validitySeconds: number): Promise<IssuedToken | undefined> {
  const accessToken = randomSecret(ACCESS_TOKEN_PREFIX);
  const now = Date.now();
  const d1 = db.$client;
  const [, , inserted] = await d1.batch([
    d1.prepare('DELETE FROM oauth_access_tokens WHERE client_id = ?1 AND expires_at <= ?2').bind(clientId, now),
    d1
      .prepare(
        `DELETE FROM oauth_access_tokens WHERE token_hash IN (
           SELECT token_hash FROM oauth_access_tokens WHERE client_id = ?1
           ORDER BY rowid DESC LIMIT -1 OFFSET ?2)`,
      )
      .bind(clientId, OAUTH_LIMITS.liveTokensPerClient - 1),
    d1
      .prepare(
        `INSERT INTO oauth_access_tokens (token_hash, client_id, issued_at, expires_at)
         SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM oauth_clients WHERE id = ?2 AND revoked_at IS NULL)`,
      )
      .bind(await sha256Hex(accessToken), clientId, now, now + validitySeconds * 1000),
  ]);
  if (inserted!.meta.changes !== 1) return undefined;
  return { accessToken, expiresIn: validitySeconds - 1 };
}
