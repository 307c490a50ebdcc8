/**
 * scripts/build-page.ts into a directory of its own (Node, no server): the pages' files where the Worker and
 * wrangler.toml's [assets] expect them, an unchanged file left untouched by a second build (a running
 * `wrangler dev` sees no change), and a file an earlier build left that this one does not write removed
 * (the admin page's script once lived under assets/chat/: a stale copy would be deployed with dist/page).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPage } from '../../scripts/build-page';
import { WEBHOOK_KINDS } from '../../src/chat/limits';

const out = mkdtempSync(path.join(tmpdir(), 'sb-page-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Every file under `dir`, relative to it, sorted. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('the page build', () => {
  it('writes both pages and the kinds’ icons, leaves unchanged files alone, and removes what it no longer writes', async () => {
    // What an older build left: the admin page's assets in the room page's folder, and a file of no page.
    for (const stale of ['assets/chat/admin.js', 'assets/chat/admin.css', 'assets/old/gone.js']) {
      mkdirSync(path.dirname(path.join(out, stale)), { recursive: true });
      writeFileSync(path.join(out, stale), 'stale');
    }
    await buildPage(out);
    const expected = [
      '_headers',
      'admin/index.html',
      'assets/admin/admin.css',
      'assets/admin/admin.js',
      'assets/chat/room.css',
      'assets/chat/room.js',
      ...WEBHOOK_KINDS.map((kind) => `assets/chat/icons/${kind}.svg`),
      'rooms/index.html',
    ].sort();
    expect(files(out)).toEqual(expected);

    const mtimes = () => expected.map((file) => statSync(path.join(out, file)).mtimeMs);
    const before = mtimes();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await buildPage(out);
    expect(files(out)).toEqual(expected);
    expect(mtimes()).toEqual(before);
  });
});
