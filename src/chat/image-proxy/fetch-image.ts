/**
 * The upstream side of the image proxy: fetch an image URL the rule allows (upstream-rule.ts),
 * following at most a few redirects whose every target is checked again, within one deadline, reading
 * at most IMAGE_PROXY_LIMITS.maxBytes of body, and accept it only if both the declared type and the
 * first bytes say it is an image of a kind browsers show.
 */
import { IMAGE_PROXY_LIMITS } from './limits';
import { imageUrlProblem } from './upstream-rule';

export type FetchedImage = { ok: true; type: string; bytes: Uint8Array } | { ok: false; reason: string };

/** Where a request for `url` actually goes: itself, or in the e2e harness a loopback http server. */
export type UpstreamRoute = (url: URL) => string;

const ACCEPT = 'image/avif,image/webp,image/png,image/jpeg,image/gif,image/svg+xml;q=0.8';

/**
 * Raster formats by their first bytes. SVG has no magic number: it is accepted when declared and its
 * start looks like XML or `<svg`, and served under a sandboxing CSP (image-proxy.routes.ts).
 */
function sniff(bytes: Uint8Array): string | null {
  const at = (i: number, ...values: number[]) => values.every((v, j) => bytes[i + j] === v);
  const ascii = (i: number, text: string) => at(i, ...[...text].map((ch) => ch.charCodeAt(0)));
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  if (ascii(4, 'ftypavif') || ascii(4, 'ftypavis')) return 'image/avif';
  const head = new TextDecoder()
    .decode(bytes.subarray(0, 1024))
    .replace(/^\ufeff/, '')
    .trimStart();
  if ((head.startsWith('<?xml') || head.startsWith('<svg') || head.startsWith('<!--')) && head.includes('<svg')) return 'image/svg+xml';
  return null;
}

const ALLOWED_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/svg+xml']);

async function readAtMost(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

export async function fetchImage(first: string, route: UpstreamRoute): Promise<FetchedImage> {
  const signal = AbortSignal.timeout(IMAGE_PROXY_LIMITS.timeoutMs);
  let url = first;
  try {
    for (let hop = 0; ; hop++) {
      const problem = imageUrlProblem(url);
      if (problem !== undefined) return { ok: false, reason: `${hop === 0 ? 'the URL' : 'a redirect'} is refused: ${problem}` };
      const res = await fetch(route(new URL(url)), {
        redirect: 'manual',
        signal,
        headers: { Accept: ACCEPT, 'User-Agent': 'Switchboard image proxy' },
      });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel();
        const location = res.headers.get('Location');
        if (location === null || hop >= IMAGE_PROXY_LIMITS.maxRedirects) return { ok: false, reason: 'too many redirects' };
        url = new URL(location, url).href;
        continue;
      }
      if (!res.ok || res.body === null) {
        await res.body?.cancel();
        return { ok: false, reason: `the image's server answered ${res.status}` };
      }
      const declared = (res.headers.get('Content-Type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
      if (!ALLOWED_TYPES.has(declared)) {
        await res.body.cancel();
        return { ok: false, reason: `not an image type shown here: ${declared || 'none'}` };
      }
      const length = Number(res.headers.get('Content-Length') ?? '0');
      if (length > IMAGE_PROXY_LIMITS.maxBytes) {
        await res.body.cancel();
        return { ok: false, reason: `larger than ${IMAGE_PROXY_LIMITS.maxBytes} bytes` };
      }
      const bytes = await readAtMost(res.body, IMAGE_PROXY_LIMITS.maxBytes);
      if (bytes === null) return { ok: false, reason: `larger than ${IMAGE_PROXY_LIMITS.maxBytes} bytes` };
      const type = sniff(bytes);
      if (type === null) return { ok: false, reason: 'the body is not an image' };
      return { ok: true, type, bytes };
    }
  } catch (err) {
    if (signal.aborted) return { ok: false, reason: `no complete answer within ${IMAGE_PROXY_LIMITS.timeoutMs} ms` };
    return { ok: false, reason: `the image's server could not be reached (${err instanceof Error ? err.message : 'error'})` };
  }
}
