import { createMiddleware } from 'hono/factory';
import { ApiError } from './api-error';
import type { AppEnv } from './context';

const JSON_MEDIA_TYPE = /^application\/json\s*(;.*)?$/i;

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'payload.too.large', `The request body exceeds the limit of ${maxBytes} bytes.`);
}

/**
 * Admits only `application/json` bodies (415 otherwise) of at most `maxBytes` (413 otherwise,
 * checked against Content-Length first and then while streaming). The text is left in Hono's
 * body cache, so the zod validator that follows parses it once (malformed JSON: 400 bad.request).
 */
export function jsonBody(maxBytes: number) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const contentType = c.req.header('Content-Type') ?? '';
    if (!JSON_MEDIA_TYPE.test(contentType)) {
      throw new ApiError(
        415,
        'unsupported.media.type',
        `Unsupported Content-Type ${contentType ? `'${contentType}'` : '(none)'}; send application/json.`,
      );
    }
    const declared = Number(c.req.header('Content-Length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

    const text = readLimited(c.req.raw.body, maxBytes);
    // Hono's body cache holds promises (its type says otherwise); the validator reads from it.
    (c.req.bodyCache as Record<string, unknown>).text = text;
    await text;
    await next();
  });
}

async function readLimited(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
