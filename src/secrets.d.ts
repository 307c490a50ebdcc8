// Secrets are not in wrangler.toml, so `wrangler types` only sees them when a .dev.vars exists.
// Declaring them here keeps the generated types complete on a fresh clone.
declare namespace Cloudflare {
  interface Env {
    /** Bearer token holding every permission (wrangler secret; .dev.vars locally). */
    ADMIN_TOKEN: string;
  }
}
