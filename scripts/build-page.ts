/**
 * Builds the pages' static assets (wrangler.toml [assets]) from src/chat/page/client and
 * src/admin-page/client:
 *   rooms/index.html      the page; the Worker serves it at /rooms/:id with its CSP
 *   assets/chat/room.js   the client, bundled with the shared protocol module
 *   assets/chat/room.css
 *   assets/chat/icons/<kind>.svg   the default sender icon of each webhook kind (a message's
 *                         `sender.iconUrl` when the webhook has no avatar of its own)
 *   admin/index.html      the admin page; the Worker serves it at /admin with its CSP
 *   assets/admin/admin.js, admin.css
 *   _headers              the asset server's headers for the files above
 * wrangler runs it ([build]) before `wrangler dev` and `wrangler deploy`; the tests' global setup
 * runs it before the Workers pool reads the assets.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { WEBHOOK_KINDS } from '../src/chat/limits';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLIENT = path.join(ROOT, 'src/chat/page/client');
const ADMIN_CLIENT = path.join(ROOT, 'src/admin-page/client');
export const PAGE_OUT_DIR = path.join(ROOT, 'dist/page');

/** One page's script and stylesheet (`<client>/main.ts`, `<client>/<name>.css`) as assets/<folder>/<name>.js and .css. */
async function bundlePage(client: string, folder: string, name: string, outdir: string, written: Set<string>): Promise<void> {
  const result = await build({
    entryPoints: [
      { in: path.join(client, 'main.ts'), out: `assets/${folder}/${name}` },
      { in: path.join(client, `${name}.css`), out: `assets/${folder}/${name}` },
    ],
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    tsconfig: path.join(client, 'tsconfig.json'),
    logLevel: 'warning',
    write: false,
  });
  for (const file of result.outputFiles) await writeIfChanged(file.path, file.contents, written);
}

/**
 * Writes only what differs from the file already there. Every `wrangler dev` runs this build when it
 * starts, and the e2e files start several side by side: an unchanged page leaves dist/page untouched, so
 * no running dev server sees its assets change and reloads under a test.
 */
async function writeIfChanged(file: string, contents: Uint8Array, written: Set<string>): Promise<void> {
  written.add(file);
  const before = await readFile(file).catch(() => undefined);
  if (before && Buffer.compare(before, contents) === 0) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, contents);
}

async function copyIfChanged(from: string, to: string, written: Set<string>): Promise<void> {
  await writeIfChanged(to, await readFile(from), written);
}

/**
 * Removes every file under `outdir` this build did not write: a file a page no longer has (the admin
 * page's script was once under assets/chat/) would otherwise stay in dist/page and be deployed with it.
 */
async function pruneOthers(outdir: string, written: Set<string>): Promise<void> {
  for (const entry of await readdir(outdir, { withFileTypes: true }).catch(() => [])) {
    const file = path.join(outdir, entry.name);
    if (entry.isDirectory()) await pruneOthers(file, written);
    else if (!written.has(file)) await rm(file, { force: true });
  }
}

/**
 * Both pages: the room page (rooms/index.html, assets/chat/room.*, the kinds' icons) and the admin
 * page (admin/index.html, assets/admin/admin.*); _headers (no-cache, nosniff) names both folders.
 * Files are overwritten in place, and only when they changed: a running `wrangler dev` never sees the
 * directory missing. `outdir` holds this build alone: any other file in it (an earlier build's) is removed.
 */
export async function buildPage(outdir = PAGE_OUT_DIR): Promise<void> {
  outdir = path.resolve(outdir);
  const written = new Set<string>();
  await Promise.all([bundlePage(CLIENT, 'chat', 'room', outdir, written), bundlePage(ADMIN_CLIENT, 'admin', 'admin', outdir, written)]);
  await copyIfChanged(path.join(CLIENT, 'index.html'), path.join(outdir, 'rooms/index.html'), written);
  await copyIfChanged(path.join(ADMIN_CLIENT, 'index.html'), path.join(outdir, 'admin/index.html'), written);
  await copyIfChanged(path.join(CLIENT, '_headers'), path.join(outdir, '_headers'), written);
  await copyIcons(path.join(outdir, 'assets/chat/icons'), written);
  await pruneOthers(outdir, written);
}

/** Every kind has its icon: the server names `/assets/chat/icons/<kind>.svg` without looking. */
async function copyIcons(to: string, written: Set<string>): Promise<void> {
  const from = path.join(CLIENT, 'icons');
  const icons = (await readdir(from)).filter((file) => file.endsWith('.svg'));
  const missing = WEBHOOK_KINDS.filter((kind) => !icons.includes(`${kind}.svg`));
  if (missing.length > 0) throw new Error(`no icon in ${from} for the webhook kinds ${missing.join(', ')}`);
  for (const icon of icons) await copyIfChanged(path.join(from, icon), path.join(to, icon), written);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  buildPage().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
