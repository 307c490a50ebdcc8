import { cors } from 'hono/cors';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context';

/**
 * CORS for the API (`/api/*`), so that wallboards, web pages on other origins, can call it with
 * `fetch` and an `Authorization: Bearer` header. Origins come from `CORS_ORIGINS` (wrangler.toml
 * `[vars]`): a comma-separated list of exact origins (`https://wall.example.com`,
 * `http://localhost:5173`); empty, the default, allows no other origin. `*`, `null` and anything that
 * is not an exact origin (a path, a trailing slash, a pattern) are refused: ignored and logged.
 * Credentials (cookies) are never allowed: the API authenticates with the Authorization header,
 * which a page sends without them.
 */
export const CORS = {
  allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowHeaders: ['Authorization', 'Content-Type', 'ININ-Correlation-Id', 'Genesys-App'],
  exposeHeaders: ['ININ-Correlation-Id', 'Retry-After'],
  /** How long a browser may cache a preflight answer (seconds). */
  maxAgeSeconds: 600,
} as const;

export interface ParsedOrigins {
  allowed: ReadonlySet<string>;
  /** Entries of the setting that are not exact origins (or are `*`), ignored. */
  refused: string[];
}

/** Parses the CORS_ORIGINS setting; pure, so tests can call it directly. */
export function parseCorsOrigins(setting: string | undefined): ParsedOrigins {
  const allowed = new Set<string>();
  const refused: string[] = [];
  for (const raw of (setting ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (isExactOrigin(entry)) allowed.add(entry);
    else refused.push(entry);
  }
  return { allowed, refused };
}

/** `scheme://host[:port]` for http(s), written exactly as a browser sends it in `Origin`. */
function isExactOrigin(entry: string): boolean {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return false;
  }
  // A host is letters, digits, dots and hyphens (or an IPv6 literal): `https://*.example.com` parses, but is a pattern.
  const host = /^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname);
  return host && (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === entry;
}

/**
 * The parsed setting, kept for the isolate's life and keyed by its text (a changed setting is simply
 * another entry; there are only ever one or two).
 */
const parsed = new Map<string, ReadonlySet<string>>();

function allowedOrigins(setting: string | undefined): ReadonlySet<string> {
  const key = setting ?? '';
  const known = parsed.get(key);
  if (known) return known;
  const { allowed, refused } = parseCorsOrigins(key);
  if (refused.length > 0) {
    console.error(
      `CORS_ORIGINS: ignoring ${refused.map((r) => JSON.stringify(r)).join(', ')}: only exact origins (scheme://host[:port]) are allowed, never *`,
    );
  }
  if (parsed.size >= 4) parsed.clear();
  parsed.set(key, allowed);
  return allowed;
}

const allowListed = cors({
  origin: (origin) => origin,
  allowMethods: [...CORS.allowMethods],
  allowHeaders: [...CORS.allowHeaders],
  exposeHeaders: [...CORS.exposeHeaders],
  maxAge: CORS.maxAgeSeconds,
  credentials: false,
});

/**
 * For an allow-listed `Origin`: hono's cors (preflights answered 204 before any route, so never
 * authenticated; every other answer, errors included, carries the allow and expose headers). Any other
 * origin gets no CORS header at all, and its preflight an empty 204 that the browser refuses.
 * WebSocket upgrades are left alone: CORS does not apply to them.
 */
export function apiCors() {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.header('Upgrade') !== undefined) return next();
    const origin = c.req.header('Origin');
    if (origin !== undefined && allowedOrigins(c.env.CORS_ORIGINS).has(origin)) return allowListed(c, next);
    if (c.req.method === 'OPTIONS' && origin !== undefined && c.req.header('Access-Control-Request-Method') !== undefined) {
      return c.body(null, 204, { Vary: 'Origin' });
    }
    await next();
    c.header('Vary', 'Origin', { append: true });
  });
}
