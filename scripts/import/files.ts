/** Which files an import reads, and in what order. */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

export type FileFormat = 'json' | 'ndjson';

const FORMATS: Record<string, FileFormat> = { '.json': 'json', '.ndjson': 'ndjson', '.jsonl': 'ndjson' };

export function formatOf(file: string): FileFormat | undefined {
  return FORMATS[path.extname(file).toLowerCase()];
}

/** Names in code-point order, not the locale's: the same tree is read in the same order on every machine. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

async function walk(dir: string, found: string[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => byName(a.name, b.name));
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    // Symbolic links are not followed: a link back up the tree would never end.
    if (entry.isDirectory()) await walk(full, found);
    else if (entry.isFile() && formatOf(entry.name)) found.push(full);
  }
}

/**
 * The files to read: each path given, in the order given, a directory's readable files found recursively
 * in name order. A file reached twice (named and inside a named directory) is read once.
 */
export async function listFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    const found: string[] = [];
    if ((await stat(p)).isDirectory()) await walk(p, found);
    else found.push(p);
    for (const file of found) {
      const real = await realpath(file);
      if (seen.has(real)) continue;
      seen.add(real);
      files.push(file);
    }
  }
  return files;
}
