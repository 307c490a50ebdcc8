const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Constant-time equality of a presented secret `a` and a configured one `b`. Both sides are hashed
 * first so that the comparison always runs over 32 bytes, whatever the lengths of the inputs.
 */
export async function secretsEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([crypto.subtle.digest('SHA-256', encoder.encode(a)), knownDigest(b)]);
  return crypto.subtle.timingSafeEqual(da, db);
}

/**
 * The digest of a configured secret (ADMIN_TOKEN), kept for the isolate's life: it is compared on
 * every authenticated request. Keyed by value, so a changed secret is simply another entry; the
 * cache holds the few configured secrets, never what clients send. The digest is kept once
 * computed (a plain buffer, not a promise another request might still be waiting on).
 */
const configured = new Map<string, ArrayBuffer>();

async function knownDigest(secret: string): Promise<ArrayBuffer> {
  const known = configured.get(secret);
  if (known) return known;
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(secret));
  if (configured.size >= 8) configured.clear();
  configured.set(secret, digest);
  return digest;
}

/** A fresh bearer token: a prefix that makes leaked tokens greppable, then 256 random bits. */
export function newToken(prefix = 'sbt_'): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `${prefix}${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** OAuth access tokens (`POST /oauth/token`) start with this, so auth.ts tells them from API tokens (`sbt_`) without a second lookup. */
export const ACCESS_TOKEN_PREFIX = 'sba_';

/**
 * A viewer link's secret (chat/viewer-links) starts with this: it opens one room's page, ticket and
 * history only, so every other route refuses it without looking it up.
 */
export const VIEWER_LINK_PREFIX = 'sbv_';
