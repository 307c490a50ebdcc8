import { desc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { tokens } from '../db/schema';
import { newToken, sha256Hex } from '../http/secrets';
import type { Permission } from '../http/permissions';

export interface TokenView {
  id: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  revokedAt?: string;
  /** The last request it authenticated, within the hour (LAST_USED_RESOLUTION_MS); null: never. */
  lastUsedAt: string | null;
}

function view(row: typeof tokens.$inferSelect): TokenView {
  return {
    id: row.id,
    name: row.name,
    permissions: row.permissions as Permission[],
    createdAt: row.createdAt,
    ...(row.revokedAt ? { revokedAt: row.revokedAt } : {}),
    lastUsedAt: row.lastUsedAt,
  };
}

export async function createToken(db: Db, name: string, permissions: Permission[]): Promise<TokenView & { token: string }> {
  const token = newToken();
  const row = {
    id: crypto.randomUUID(),
    name,
    permissions: [...new Set(permissions)],
    tokenHash: await sha256Hex(token),
    createdAt: new Date().toISOString(),
  };
  await db.insert(tokens).values(row);
  return { ...view({ ...row, revokedAt: null, lastUsedAt: null }), token };
}

export async function listTokens(db: Db): Promise<TokenView[]> {
  const rows = await db.select().from(tokens).orderBy(desc(tokens.createdAt), tokens.id);
  return rows.map(view);
}

/** One token as the list shows it (a revoked one too); undefined when unknown. */
export async function getToken(db: Db, id: string): Promise<TokenView | undefined> {
  const row = await db.select().from(tokens).where(eq(tokens.id, id)).get();
  return row && view(row);
}

/** Revokes (keeps the row, so a revoked token is told apart in audits); false when unknown. */
export async function revokeToken(db: Db, id: string): Promise<boolean> {
  const row = await db.select({ revokedAt: tokens.revokedAt }).from(tokens).where(eq(tokens.id, id)).get();
  if (!row) return false;
  if (!row.revokedAt) await db.update(tokens).set({ revokedAt: new Date().toISOString() }).where(eq(tokens.id, id));
  return true;
}
