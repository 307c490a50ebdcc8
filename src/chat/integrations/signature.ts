const encoder = new TextEncoder();

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/**
 * True when `header` is `sha256=<hex>` and the hex is the HMAC-SHA256 of exactly `body` (the bytes
 * received, not a re-serialisation) under `secret`, compared in constant time.
 */
export async function signatureMatches(secret: string, body: Uint8Array, header: string): Promise<boolean> {
  const match = SIGNATURE.exec(header.trim());
  if (!match?.[1]) return false;
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', key, body));
  return crypto.subtle.timingSafeEqual(expected, hexBytes(match[1]));
}
