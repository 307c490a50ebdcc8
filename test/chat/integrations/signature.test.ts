import { describe, expect, it } from 'vitest';
import { signatureMatches } from '../../../src/chat/integrations/signature';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('HMAC-SHA256 delivery signatures', () => {
  // The test values GitHub publishes in "Validating webhook deliveries".
  const SECRET = "It's a Secret to Everybody";
  const SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it('accepts GitHub\u2019s documented test signature, in either case of hex', async () => {
    expect(await signatureMatches(SECRET, bytes('Hello, World!'), SIGNATURE)).toBe(true);
    expect(await signatureMatches(SECRET, bytes('Hello, World!'), SIGNATURE.toUpperCase().replace('SHA256', 'sha256'))).toBe(true);
  });

  it('refuses another body, another secret, a flipped bit and malformed headers', async () => {
    expect(await signatureMatches(SECRET, bytes('Hello, World?'), SIGNATURE)).toBe(false);
    expect(await signatureMatches('another secret', bytes('Hello, World!'), SIGNATURE)).toBe(false);
    expect(await signatureMatches(SECRET, bytes('Hello, World!'), `${SIGNATURE.slice(0, -1)}6`)).toBe(false);
    for (const header of [
      '',
      'sha256=',
      SIGNATURE.slice(7),
      `sha1=${SIGNATURE.slice(7)}`,
      `${SIGNATURE}00`,
      SIGNATURE.slice(0, -2),
      `sha256=${'zz'.repeat(32)}`,
    ]) {
      expect(await signatureMatches(SECRET, bytes('Hello, World!'), header), header).toBe(false);
    }
  });

  it('covers the exact bytes: the same JSON re-serialised does not match', async () => {
    expect(await signatureMatches(SECRET, bytes('{"a": 1}'), `sha256=${await hmacHex(SECRET, '{"a":1}')}`)).toBe(false);
    expect(await signatureMatches(SECRET, bytes('{"a": 1}'), `sha256=${await hmacHex(SECRET, '{"a": 1}')}`)).toBe(true);
  });
});

async function hmacHex(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', bytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return [...new Uint8Array(await crypto.subtle.sign('HMAC', key, bytes(body)))].map((b) => b.toString(16).padStart(2, '0')).join('');
}
