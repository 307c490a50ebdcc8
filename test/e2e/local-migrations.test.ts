/**
 * `npm run dev` applies the D1 migrations to the local database itself (scripts/dev/local-d1.ts, one
 * local runtime for every file) instead of through `wrangler d1 migrations apply --local` (one per
 * file). Whatever it leaves must be what wrangler's own apply leaves, so that `wrangler dev`, wrangler's
 * later applies and a deploy see the same database: the same schema, the same migrations recorded, in
 * the same order; a failing file leaves nothing of itself.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareLocalD1 } from '../../scripts/dev/local-d1';
import { ROOT, wranglerSync } from './support/dev-server';
import { withLocalD1 } from './support/local-d1';

const dir = mkdtempSync(path.join(tmpdir(), 'sb-local-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MIGRATION_FILES = readdirSync(path.join(ROOT, 'migrations'))
  .filter((f) => f.endsWith('.sql'))
  .sort();

interface SchemaRow {
  type: string;
  name: string;
  sql: string | null;
}

/** The schema (every object wrangler and SQLite keep, but the migration table's timestamps) and the recorded migrations. */
async function readDatabase(persistTo: string, id = 'DB'): Promise<{ schema: SchemaRow[]; migrations: string[] }> {
  return withLocalD1(persistTo, id, async (db) => {
    const schema = await db
      .prepare(`SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY type, name`)
      .all<SchemaRow>();
    const migrations = await db.prepare('SELECT name FROM d1_migrations ORDER BY id').all<{ name: string }>();
    return { schema: schema.results, migrations: migrations.results.map((r: { name: string }) => r.name) };
  });
}

/** Whitespace inside stored SQL text is the statement's own; compare it as SQLite keeps it, trimmed. */
const normalise = (rows: SchemaRow[]) => rows.map((r) => ({ ...r, sql: r.sql?.trim() ?? null }));

describe('npm run dev applies the migrations as wrangler does', () => {
  it('leaves the schema and the recorded migrations that `wrangler d1 migrations apply --local` leaves', async () => {
    const byWrangler = path.join(dir, 'wrangler');
    const byDev = path.join(dir, 'dev');
    wranglerSync(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', byWrangler]);
    const first = await prepareLocalD1({ persistTo: byDev, config: path.join(ROOT, 'wrangler.toml') });
    expect(first).toEqual({ applied: MIGRATION_FILES, conversations: 0 });

    const expected = await readDatabase(byWrangler);
    const actual = await readDatabase(byDev);
    expect(actual.migrations).toEqual(MIGRATION_FILES);
    expect(actual.migrations).toEqual(expected.migrations);
    expect(expected.schema.length).toBeGreaterThan(20);
    expect(normalise(actual.schema)).toEqual(normalise(expected.schema));

    // Applied again: nothing to do, for this script and for wrangler itself.
    expect(await prepareLocalD1({ persistTo: byDev, config: path.join(ROOT, 'wrangler.toml') })).toEqual({
      applied: [],
      conversations: 0,
    });
    expect(wranglerSync(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', byDev])).toContain('No migrations to apply');
  }, 120_000);

  it('applies a failing migration file not at all, and what came before it stays applied', async () => {
    const project = path.join(dir, 'broken');
    mkdirSync(path.join(project, 'migrations'), { recursive: true });
    for (const file of MIGRATION_FILES) copyFileSync(path.join(ROOT, 'migrations', file), path.join(project, 'migrations', file));
    // Its first statement succeeds, its second refers to a table that does not exist.
    writeFileSync(
      path.join(project, 'migrations', '9999_broken.sql'),
      'CREATE TABLE `broken_probe` (`x` integer);\n--> statement-breakpoint\nINSERT INTO `no_such_table` VALUES (1);\n',
    );
    writeFileSync(
      path.join(project, 'wrangler.toml'),
      'name = "broken"\nmain = "index.ts"\ncompatibility_date = "2026-04-01"\n\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "broken"\nmigrations_dir = "migrations"\n',
    );
    const persistTo = path.join(project, 'state');
    await expect(prepareLocalD1({ persistTo, config: path.join(project, 'wrangler.toml') })).rejects.toThrow(
      /migration 9999_broken\.sql failed \(nothing of it applied\).*no_such_table/,
    );
    const after = await readDatabase(persistTo);
    expect(after.migrations).toEqual(MIGRATION_FILES);
    expect(after.schema.map((r) => r.name)).not.toContain('broken_probe');
    expect(after.schema.map((r) => r.name)).toContain('conversations');
  }, 120_000);
});
