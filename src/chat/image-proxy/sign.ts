/**
 * Signed image URLs: the proxy (image-proxy.routes.ts) fetches only a URL signed with the Worker's
 * IMAGE_PROXY_KEY, and only the renderer and the sender of a post sign, so it is not an open proxy.
 * The signature is HMAC-SHA256 over a purpose label and the URL, base64url, in the same-origin
 * `src` `/image-proxy?u=<url>&s=<signature>`. Without a key (or with one too short) nothing is signed:
 * images stay links and icons letter avatars, and the proxy answers 404.
 */
import { hmacSha256 } from './hmac';
import { IMAGE_PROXY_LIMITS } from './limits';
import { imageUrlProblem } from './upstream-rule';

export const IMAGE_PROXY_PATH = '/image-proxy';

/** What the renderer asks of a signer: the proxied `src` for an https image URL, or null (not proxied). */
export interface ImageSigner {
  src(url: string): string | null;
}

const encoder = new TextEncoder();
const LABEL = 'switchboard image-proxy v1\n';

/** The key's bytes, or null when the Worker has none (or one too short to trust). */
export function proxyKey(env: { IMAGE_PROXY_KEY?: string }): Uint8Array | null {
  const key = env.IMAGE_PROXY_KEY;
  if (typeof key !== 'string' || key.length < IMAGE_PROXY_LIMITS.minKeyChars) return null;
  return encoder.encode(key);
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function signImageUrl(key: Uint8Array, url: string): string {
  return base64url(hmacSha256(key, encoder.encode(LABEL + url)));
}

/** Checks `signature` for `url` with WebCrypto (constant time). */
export async function imageSignatureValid(key: Uint8Array, url: string, signature: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(signature)) return false;
  const bytes = Uint8Array.from(atob(signature.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0));
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  return crypto.subtle.verify('HMAC', hmac, bytes, encoder.encode(LABEL + url));
}

export function proxiedSrc(key: Uint8Array, url: string): string {
  return `${IMAGE_PROXY_PATH}?u=${encodeURIComponent(url)}&s=${signImageUrl(key, url)}`;
}

/** A proxied `src` as the renderer writes it (before attribute escaping): what allowed-html.ts accepts. */
export const PROXIED_SRC = /^\/image-proxy\?u=[A-Za-z0-9\-_.!~*'()%]+&s=[A-Za-z0-9_-]{43}$/;

/** The request's signer, or undefined when the Worker has no key (images stay links). */
export function imageSigner(env: { IMAGE_PROXY_KEY?: string }): ImageSigner | undefined {
  const key = proxyKey(env);
  if (key === null) return undefined;
  return { src: (url) => (imageUrlProblem(url) === undefined ? proxiedSrc(key, url) : null) };
}

/**
 * A sender's icon as stored with a message: an https icon the proxy may fetch becomes its signed
 * same-origin path (the page's CSP is `img-src 'self'`); anything else is kept as it is (the page shows
 * a path on its own origin, and the letter avatar for the rest).
 */
export function proxiedIcon(iconUrl: string | null, signer: ImageSigner | undefined): string | null {
  if (iconUrl === null || signer === undefined || !iconUrl.startsWith('https:')) return iconUrl;
  return signer.src(iconUrl) ?? iconUrl;
}
