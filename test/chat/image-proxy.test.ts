/**
 * Issue 25, item 2 (images) and item 1 (senders' icons): the image proxy. An https image or icon is
 * fetched by the Worker and served from its own origin, only for URLs it signed itself. Its upstream
 * hosts are test/support/image-upstream.js, the Worker's outboundService here (vitest.config.ts):
 * real bytes, headers, redirects and slowness over workerd's own fetch.
 *
 * The Worker of the other tests has no IMAGE_PROXY_KEY (images stay links there); these requests go
 * to the same app with one (`keyed`).
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app';
import { hmacSha256 } from '../../src/chat/image-proxy/hmac';
import { IMAGE_PROXY_LIMITS } from '../../src/chat/image-proxy/limits';
import { imageSigner, proxiedSrc, signImageUrl } from '../../src/chat/image-proxy/sign';
import { imageUrlProblem } from '../../src/chat/image-proxy/upstream-rule';
import type { ChatMessage } from '../../src/chat/protocol';
import { expectError, send, type Sent } from '../helpers';
import { history, roomWithWebhook, webhookPath } from './helpers';

const KEY = 'image-proxy-test-key-0123456789abcdef';
const keyed: Env = { ...env, IMAGE_PROXY_KEY: KEY };
const app = createApp();
const ORIGIN = 'https://switchboard.example.com';
const HOST = 'https://img.example.com';
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

async function keyedFetch(path: string, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(ORIGIN + path, init), keyed, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

async function asSent(res: Response): Promise<Sent> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: res.headers.get('Content-Type')?.includes('json') ? JSON.parse(text) : text };
}

/** The proxied path for `url`, signed with the test key. */
const signed = (url: string) => proxiedSrc(new TextEncoder().encode(KEY), url);

async function webCryptoHmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, message));
}

/** How often the upstream was asked for `url` (the upstream counts per URL). */
async function upstreamHits(url: string): Promise<number> {
  const res = await fetch(`${HOST}/hits?of=${encodeURIComponent(url)}`);
  return ((await res.json()) as { n: number }).n;
}

describe('signing', () => {
  it('computes the same HMAC-SHA256 as WebCrypto, for keys and messages of every length', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.uint8Array({ maxLength: 300 }), async (key, message) => {
        expect(hmacSha256(key, message)).toEqual(await webCryptoHmac(key, message));
      }),
      { numRuns: 300 },
    );
  });

  it('signs nothing without a key of at least 32 characters: images stay links', () => {
    expect(imageSigner({})).toBeUndefined();
    expect(imageSigner({ IMAGE_PROXY_KEY: '' })).toBeUndefined();
    expect(imageSigner({ IMAGE_PROXY_KEY: 'x'.repeat(IMAGE_PROXY_LIMITS.minKeyChars - 1) })).toBeUndefined();
    expect(imageSigner({ IMAGE_PROXY_KEY: KEY })?.src(`${HOST}/a.png`)).toBe(signed(`${HOST}/a.png`));
  });

  it('signs only URLs the proxy may fetch', () => {
    const signer = imageSigner({ IMAGE_PROXY_KEY: KEY })!;
    expect(signer.src('http://img.example.com/a.png')).toBeNull();
    expect(signer.src('https://localhost/a.png')).toBeNull();
    expect(signer.src('https://10.0.0.1/a.png')).toBeNull();
  });
});

describe('which hosts the proxy fetches (SSRF)', () => {
  it.each([
    ['http://img.example.com/a.png', 'not https'],
    ['ftp://img.example.com/a.png', 'not https'],
    ['https://user:pw@img.example.com/a.png', 'carries credentials'],
    ['https://img.example.com:8443/a.png', 'not on the default https port'],
    ['https://127.0.0.1/a.png', 'an IP address, not a name'],
    ['https://2130706433/a.png', 'an IP address, not a name'],
    ['https://0x7f.1/a.png', 'an IP address, not a name'],
    ['https://127.1/a.png', 'an IP address, not a name'],
    ['https://169.254.169.254/latest/meta-data', 'an IP address, not a name'],
    ['https://10.0.0.8/a.png', 'an IP address, not a name'],
    ['https://[::1]/a.png', 'an IP address, not a name'],
    ['https://[fe80::1]/a.png', 'an IP address, not a name'],
    ['https://[::ffff:192.168.0.1]/a.png', 'an IP address, not a name'],
    ['https://localhost/a.png', 'a single-label host'],
    ['https://metadata/computeMetadata', 'a single-label host'],
    ['https://grafana.localhost/a.png', 'a private or reserved name'],
    ['https://printer.local/a.png', 'a private or reserved name'],
    ['https://metadata.google.internal/a.png', 'a private or reserved name'],
    ['https://router.home.arpa/a.png', 'a private or reserved name'],
    ['https://1.0.0.127.in-addr.arpa/a.png', 'a private or reserved name'],
    ['https://localhost./a.png', 'a single-label host'],
  ])('refuses %s (%s)', (url, problem) => {
    expect(imageUrlProblem(url)).toBe(problem);
  });

  it.each([
    'https://img.example.com/a.png',
    'https://grafana.example.org/render/d-solo/x?panelId=2&width=1000',
    'https://IMG.Example.COM./b.svg',
  ])('fetches %s', (url) => {
    expect(imageUrlProblem(url)).toBeUndefined();
  });
});

describe('GET /image-proxy: refusals, each an ErrorBody and never an image', () => {
  it('answers 404 when the Worker has no IMAGE_PROXY_KEY (the other tests’ Worker)', async () => {
    const res = await send('GET', signed(`${HOST}/pixel.png`), { token: null });
    expectError(res, 404, 'not.found');
    expect(res.body.message).toContain('IMAGE_PROXY_KEY');
  });

  it('needs both the URL and its signature', async () => {
    expectError(await asSent(await keyedFetch('/image-proxy')), 400, 'bad.request', 'u');
    expectError(await asSent(await keyedFetch(`/image-proxy?u=${encodeURIComponent(`${HOST}/pixel.png`)}`)), 400, 'bad.request', 's');
  });

  it('refuses a wrong signature, another URL’s, and one made with another key (403)', async () => {
    const url = `${HOST}/pixel.png`;
    const other = signed(`${HOST}/other.png`).split('&s=')[1]!;
    const otherKey = proxiedSrc(new TextEncoder().encode(`${KEY}-rotated`), url).split('&s=')[1]!;
    for (const s of ['x', 'A'.repeat(43), other, otherKey, `${other}=`]) {
      const res = await asSent(await keyedFetch(`/image-proxy?u=${encodeURIComponent(url)}&s=${s}`));
      expectError(res, 403, 'bad.signature', 's');
    }
    // The URL tampered with after signing.
    const tampered = signed(url).replace('pixel.png', 'page.html');
    expectError(await asSent(await keyedFetch(tampered)), 403, 'bad.signature', 's');
  });

  it('refuses a signed URL to a private host without asking anyone (403)', async () => {
    for (const url of [
      'https://127.0.0.1/pixel.png',
      'https://localhost/pixel.png',
      'http://img.example.com/pixel.png',
      'https://[::1]/x.png',
    ]) {
      const res = await asSent(await keyedFetch(signed(url)));
      expectError(res, 403, 'bad.request', 'u');
      expect(await upstreamHits(url)).toBe(0);
    }
  });

  it.each([
    ['/redirect-private', 'a redirect is refused: an IP address'],
    ['/redirect-http', 'a redirect is refused: not https'],
    ['/redirect-loop', 'too many redirects'],
    ['/page.html', 'not an image type shown here: text/html'],
    ['/liar.png', 'the body is not an image'],
    ['/declared-huge.png', `larger than ${IMAGE_PROXY_LIMITS.maxBytes} bytes`],
    ['/streamed-huge.png', `larger than ${IMAGE_PROXY_LIMITS.maxBytes} bytes`],
    ['/missing.png', 'answered 404'],
  ])('answers 502 for %s (%s)', async (path, reason) => {
    const res = await asSent(await keyedFetch(signed(`${HOST}${path}?t=${crypto.randomUUID()}`)));
    expectError(res, 502, 'bad.gateway');
    expect(res.body.message).toContain(reason);
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
  });

  it('gives up on a slow host at the deadline (502)', async () => {
    const res = await asSent(await keyedFetch(signed(`${HOST}/slow.png?t=${crypto.randomUUID()}`)));
    expectError(res, 502, 'bad.gateway');
    expect(res.body.message).toContain(`within ${IMAGE_PROXY_LIMITS.timeoutMs} ms`);
  });
});

describe('GET /image-proxy: an image', () => {
  it('serves a PNG from this origin with nosniff, a sandboxing CSP, inline, and a bounded cache lifetime', async () => {
    const res = await keyedFetch(signed(`${HOST}/pixel.png?t=${crypto.randomUUID()}`));
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(Object.fromEntries(res.headers)).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(bytes.byteLength),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      'content-disposition': 'inline',
      'cross-origin-resource-policy': 'same-origin',
      'cache-control': `public, max-age=${IMAGE_PROXY_LIMITS.cacheSeconds}`,
    });
    // The host's cookie stays with the Worker: a viewer's browser gets nothing from the sender's host.
    expect(res.headers.get('Set-Cookie')).toBeNull();
  });

  it('follows a redirect to another allowed URL', async () => {
    const res = await keyedFetch(signed(`${HOST}/redirect-good?t=${crypto.randomUUID()}`));
    expect(res.status).toBe(200);
    expect([...new Uint8Array(await res.arrayBuffer()).subarray(0, 8)]).toEqual(PNG_SIGNATURE);
  });

  it('serves an SVG badge as SVG, under the sandboxing CSP (no script runs, even opened on its own)', async () => {
    const res = await keyedFetch(signed(`${HOST}/badge.svg?t=${crypto.randomUUID()}`));
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('image/svg+xml');
    expect(res.headers.get('Content-Security-Policy')).toContain('sandbox');
    expect(await res.text()).toContain('<svg');
  });

  it('asks the host once, then answers from the cache', async () => {
    const url = `${HOST}/once.png?t=${crypto.randomUUID()}`;
    const first = await keyedFetch(signed(url));
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const second = await keyedFetch(signed(url));
    expect(second.status).toBe(200);
    expect([...new Uint8Array(await second.arrayBuffer()).subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(await upstreamHits(url)).toBe(1);
  });
});

describe('the e2e harness’s loopback upstream (IMAGE_PROXY_LOOPBACK_UPSTREAM)', () => {
  const withLoopback: Env = { ...keyed, IMAGE_PROXY_LOOPBACK_UPSTREAM: 'http://127.0.0.1:9' };

  async function fetchAs(origin: string, path: string): Promise<Response> {
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(origin + path), withLoopback, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  }

  it('is ignored for a request that did not come to a loopback address (any deployed Worker’s)', async () => {
    const t = crypto.randomUUID();
    const res = await fetchAs(ORIGIN, signed(`${HOST}/pixel.png?t=${t}`));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await upstreamHits(`${HOST}/pixel.png?t=${t}`)).toBe(1);
    expect(await upstreamHits(`http://127.0.0.1:9/pixel.png?t=${t}`)).toBe(0);
  });

  it('sends the image request to the local server for a request to 127.0.0.1 (wrangler dev)', async () => {
    const t = crypto.randomUUID();
    const res = await fetchAs('http://127.0.0.1:8787', signed(`${HOST}/pixel.png?t=${t}`));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await upstreamHits(`http://127.0.0.1:9/pixel.png?t=${t}`)).toBe(1);
    expect(await upstreamHits(`${HOST}/pixel.png?t=${t}`)).toBe(0);
  });
});

describe('a post with images and an icon, with the key', () => {
  it('stores <img> through the proxy and the sender’s https icon as its proxied path; both load', async () => {
    const { roomId, hook } = await roomWithWebhook({ avatarUrl: `${HOST}/pixel.png`, allowOverrides: true });
    const post = async (body: unknown) => {
      const res = await keyedFetch(webhookPath(hook), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    await post({ message: `graph: ![CPU](${HOST}/pixel.png)\n\n![plain](http://img.example.com/pixel.png)` });
    await post({ message: 'own icon', iconUrl: `${HOST}/badge.svg` });
    await post({ message: 'private icon', iconUrl: 'https://127.0.0.1/x.png' });
    const res = await history(roomId);
    const [withImage, ownIcon, privateIcon] = res.body.entities as ChatMessage[];

    const imageSrc = signed(`${HOST}/pixel.png`);
    expect(withImage!.html).toBe(
      `<p>graph: <a href="${HOST}/pixel.png" rel="noopener noreferrer nofollow" target="_blank">` +
        `<img src="${imageSrc.replace('&', '&amp;')}" alt="CPU" loading="lazy"></a></p>\n` +
        '<p><a href="http://img.example.com/pixel.png" rel="noopener noreferrer nofollow" target="_blank">plain</a></p>\n',
    );
    expect(withImage!.sender.iconUrl).toBe(imageSrc);
    expect(ownIcon!.sender.iconUrl).toBe(signed(`${HOST}/badge.svg`));
    // Not fetchable: kept as posted, and the page shows the letter avatar (it loads only same-origin icons).
    expect(privateIcon!.sender.iconUrl).toBe('https://127.0.0.1/x.png');

    for (const src of [imageSrc, ownIcon!.sender.iconUrl!]) {
      const image = await keyedFetch(src);
      expect(image.status).toBe(200);
      expect(image.headers.get('Content-Type')).toMatch(/^image\//);
      await image.arrayBuffer();
    }
  });

  it('without the key (the default Worker here) keeps images as links and icons as posted', async () => {
    const { roomId, hook } = await roomWithWebhook({ avatarUrl: `${HOST}/pixel.png` });
    const res = await send('POST', webhookPath(hook), { token: null, json: { message: `![CPU](${HOST}/pixel.png)` } });
    expect(res.status).toBe(200);
    const [message] = (await history(roomId)).body.entities as ChatMessage[];
    expect(message!.html).toBe(`<p><a href="${HOST}/pixel.png" rel="noopener noreferrer nofollow" target="_blank">CPU</a></p>\n`);
    expect(message!.sender.iconUrl).toBe(`${HOST}/pixel.png`);
  });
});

it('signs with a purpose label: the signature is not a bare HMAC of the URL', async () => {
  const url = `${HOST}/pixel.png`;
  const key = new TextEncoder().encode(KEY);
  const bare = await webCryptoHmac(key, new TextEncoder().encode(url));
  expect(signImageUrl(key, url)).not.toBe(
    btoa(String.fromCharCode(...bare))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, ''),
  );
});
