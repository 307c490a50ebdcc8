/** The image proxy's limits (docs/limits.md, "Images and sender icons"). */
export const IMAGE_PROXY_LIMITS = {
  /** The largest image served: a bigger body is cut off as it streams in and refused (502). */
  maxBytes: 2 * 1024 * 1024,
  /** From the request to the upstream until its whole body is read, redirects included. */
  timeoutMs: 5_000,
  /** Redirects followed, each one's target checked as the first URL was. */
  maxRedirects: 3,
  /** How long a served image is kept in the Cache API and by browsers. */
  cacheSeconds: 86_400,
  /** A shorter IMAGE_PROXY_KEY counts as none: images stay links, icons letter avatars. */
  minKeyChars: 32,
} as const;
