/**
 * Builds the admin page's static assets from src/chat/admin-page/client into the same directory as
 * the room page (scripts/build-page.ts, wrangler.toml [assets]):
 *   admin/index.html        the page; the Worker serves it at /admin with its CSP
 *   assets/chat/admin.js    the client
 *   assets/chat/admin.css
 * Under /assets/chat/ so that the room page's _headers (no-cache, nosniff) apply to them too.
 * wrangler runs it ([build]) after build-page.ts; the tests' global setup runs it too.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { PAGE_OUT_DIR } from './build-page';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLIENT = path.join(ROOT, 'src/chat/admin-page/client');

/** Files are overwritten in place, never the directory removed: the room page's files stay. */
export async function buildAdminPage(outdir = PAGE_OUT_DIR): Promise<void> {
  await build({
    entryPoints: [
      { in: path.join(CLIENT, 'main.ts'), out: 'assets/chat/admin' },
      { in: path.join(CLIENT, 'admin.css'), out: 'assets/chat/admin' },
    ],
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    tsconfig: path.join(CLIENT, 'tsconfig.json'),
    logLevel: 'warning',
  });
  await mkdir(path.join(outdir, 'admin'), { recursive: true });
  await copyFile(path.join(CLIENT, 'index.html'), path.join(outdir, 'admin/index.html'));
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  buildAdminPage().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
