/**
 * The local D1 database that `wrangler dev` serves, opened once for `npm run dev`'s set-up: the
 * migrations not yet applied, then the count of stored conversations.
 *
 * Why not `wrangler d1 migrations apply --local`: it starts a local runtime for each migration file (21
 * of them, ~14 s on a fresh clone here, most of `npm run dev`'s time to serve). This opens one Miniflare
 * on the same file and applies them the way wrangler does, so that wrangler sees them as applied: each
 * file's statements and its row in `d1_migrations` in one batch (a transaction: a failing file leaves
 * nothing of itself), in the order of their numbers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { unstable_readConfig, unstable_splitSqlQuery } from 'wrangler';

/** Where `wrangler dev` keeps local state (its default `--persist-to`). */
const WRANGLER_STATE = '.wrangler/state';
/** wrangler's migrations table (wrangler.toml sets no `migrations_table`). */
const MIGRATIONS_TABLE = 'd1_migrations';

/** What this reads of a `[[d1_databases]]` entry of wrangler's config. */
interface D1Entry {
  binding: string;
  database_id?: string;
  preview_database_id?: string;
  migrations_dir?: string;
}

export interface LocalSetup {
  /** Names of the migration files applied now (empty when the database was up to date). */
  applied: string[];
  /** Conversations stored, after the migrations. */
  conversations: number;
}

export interface LocalD1Options {
  /** The D1 binding (default DB). */
  binding?: string;
  /** wrangler's `--persist-to` directory (default .wrangler/state, as `wrangler dev` without the flag). */
  persistTo?: string;
  /** The wrangler config (default wrangler.toml in the working directory). */
  config?: string;
}

/** Applies the unapplied migrations of a binding to its local database and counts its conversations. */
export async function prepareLocalD1(options: LocalD1Options = {}): Promise<LocalSetup> {
  const { binding = 'DB', persistTo = WRANGLER_STATE, config: configPath = 'wrangler.toml' } = options;
  const config = unstable_readConfig({ config: configPath });
  const databases: D1Entry[] = config.d1_databases;
  const database = databases.find((d) => d.binding === binding);
  if (!database) throw new Error(`${configPath} has no D1 binding ${binding}`);
  // The local database's key as wrangler dev derives it: the database id when one is set, else the binding.
  const id = database.preview_database_id ?? database.database_id ?? binding;
  const dir = path.resolve(path.dirname(configPath), database.migrations_dir ?? 'migrations');

  const mf = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response(null, { status: 404 }); } }',
    d1Databases: { [binding]: id },
    // wrangler keeps local D1 under <persist-to>/v3/d1.
    d1Persist: path.join(persistTo, 'v3', 'd1'),
  });
  try {
    const db = await mf.getD1Database(binding);
    // wrangler's statement, byte for byte: SQLite keeps the text in sqlite_master.
    await db
      .prepare(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE}(
\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,
\t\tname       TEXT UNIQUE,
\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`)
      .run();
    const done = new Set(
      (await db.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all<{ name: string }>()).results.map((r: { name: string }) => r.name),
    );
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.sql') && !done.has(f))
      .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    for (const file of files) {
      const statements = unstable_splitSqlQuery(readFileSync(path.join(dir, file), 'utf8'));
      try {
        await db.batch([
          ...statements.map((sql) => db.prepare(sql)),
          db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`).bind(file),
        ]);
      } catch (error) {
        throw new Error(`migration ${file} failed (nothing of it applied): ${(error as Error).message}`);
      }
    }
    const conversations = (await db.prepare('SELECT count(*) AS n FROM conversations').first<number>('n')) ?? 0;
    return { applied: files, conversations };
  } finally {
    await mf.dispose();
  }
}
