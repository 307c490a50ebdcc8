import fc from 'fast-check';
import type { NativeMediaType, NativePost } from '../../../src/chat/integrations';

/** A post as the route hands it to a translator: JSON parsed, headers looked up case-insensitively. */
export function nativePost(
  body: unknown,
  headers: Record<string, string> = {},
  mediaType: NativeMediaType = 'application/json',
): NativePost {
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    mediaType,
    text,
    ...(mediaType === 'application/json' ? { json: typeof body === 'string' ? JSON.parse(body) : body } : {}),
    header: (name) => lower.get(name.toLowerCase()),
  };
}

/**
 * Text made of the pieces a hostile sender would try (markdown and HTML syntax, every punctuation
 * character) plus `extra`, each format's own syntax: for the property tests that every field stays text.
 */
export function hostileText(...extra: string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.constantFrom(...'\\`*_~[]()<>&@!#+-=.|:;"\'abc '.split(''), '<script>', '<img src=x>', ...extra), { maxLength: 25 })
    .map((a) => a.join(''));
}
