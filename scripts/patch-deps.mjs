/**
 * Upstream fixes that the pinned versions lack, applied to node_modules by npm's `postinstall`.
 * Plain JavaScript: it runs right after `npm install`/`npm ci`, before anything else could compile it.
 *
 * @cloudflare/vitest-pool-workers 0.15.1 wraps each Durable Object and entrypoint class so that its
 * prototype is a Proxy, but installs that Proxy inside the constructor: every construction wraps the
 * previous wrapper (cloudflare/workers-sdk#15092). After N Durable Object instances or requests to
 * SELF, every property read runs N nested traps. In a runtime that runs many test files one after
 * another (vitest.config.ts) this made later files up to 55× slower: a CPU profile of the runtime
 * spent 19.7 of 20 s in that trap. Fixed upstream by installing the Proxy once (workers-sdk#15106),
 * in releases that need wrangler ≥ 4.87, which refuses Node 20. Applied here the same way.
 *
 * Already applied: nothing to do. Package not installed (a production install): nothing to do. The
 * text changed (another version pinned): fail, so whoever upgrades looks whether the fix is still needed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

const PATCHES = [
  {
    name: 'vitest-pool-workers: install the prototype Proxy once (workers-sdk#15092)',
    file: 'node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs',
    before: [
      'function createProxyPrototypeClass(superClass, getUnknownPrototypeKey) {',
      '\tfunction Class(...args) {',
      '\t\tClass.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {',
    ].join('\n'),
    after: [
      'function createProxyPrototypeClass(superClass, getUnknownPrototypeKey) {',
      '\tlet proxied = false; // switchboard scripts/patch-deps.mjs (workers-sdk#15092)',
      '\tfunction Class(...args) {',
      '\t\tif (!proxied) proxied = true, Class.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {',
    ].join('\n'),
  },
];

for (const patch of PATCHES) {
  const file = path.join(ROOT, patch.file);
  if (!existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  if (text.includes(patch.after)) continue;
  if (!text.includes(patch.before)) {
    console.error(
      `scripts/patch-deps.mjs: ${patch.name}: ${patch.file} no longer holds the text it fixes; check whether the fix is still needed.`,
    );
    process.exit(1);
  }
  writeFileSync(file, text.replace(patch.before, patch.after));
  console.log(`scripts/patch-deps.mjs: applied ${patch.name}`);
}
