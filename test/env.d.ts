// Test-only bindings, added by vitest.config.ts (miniflare.bindings).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import('cloudflare:test').D1Migration[];
  }
}
