// The image proxy's settings (src/chat/image-proxy), optional: without them images stay links.
declare namespace Cloudflare {
  interface Env {
    /**
     * Key signing image URLs (wrangler secret; .dev.vars locally, written by npm run dev). At least 32
     * characters. Typed as `wrangler types` writes it from the .dev.vars that npm run dev makes (so
     * `wrangler dev` finds the generated types current), but an unset secret is absent at run time:
     * read it only through proxyKey() (sign.ts), which treats absent or short as none.
     */
    IMAGE_PROXY_KEY: string;
    /**
     * Test-only (the e2e harness): an http origin on this machine that answers for every image host,
     * honoured only when the request itself came to a loopback address, which a deployed Worker never sees.
     */
    IMAGE_PROXY_LOOPBACK_UPSTREAM?: string;
  }
}
