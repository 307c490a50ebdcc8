/**
 * `npm run deploy`: one Worker, from a fresh account on.
 * 1. The D1 database: wrangler.toml carries no database_id until the first deploy. When it has none, the
 *    account's `switchboard` database is found (or created) and its id written into wrangler.toml
 *    (commit it: later deploys and `db:migrate:remote` use it).
 * 2. D1 migrations, applied remotely before the code that needs them goes live: to DB and to every
 *    analytics partition ANALYTICS_PARTITIONS names (docs/analytics-storage.md, "Partitions"), whose
 *    configuration is checked first (each a [[d1_databases]] binding with its database_id).
 * 3. `wrangler deploy`: the Worker with its three Durable Object classes and their migrations (wrangler.toml).
 * Arguments after `--` go to `wrangler deploy` (e.g. `npm run deploy -- --dry-run`: nothing is created,
 * migrated or uploaded).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { unstable_readConfig } from 'wrangler';
import { parsePartitions, parseRetentionDays } from '../src/analytics/partitions/partitions';

const CONFIG = 'wrangler.toml';
const DATABASE_NAME = 'switchboard';

function wrangler(args: string[], capture = false): string {
  const result = spawnSync('npx', ['wrangler', ...args], {
    encoding: 'utf8',
    stdio: capture ? ['inherit', 'pipe', 'inherit'] : 'inherit',
  });
  if (result.status !== 0) {
    if (capture) process.stdout.write(result.stdout ?? '');
    throw new Error(`wrangler ${args.join(' ')} failed`);
  }
  return result.stdout ?? '';
}

/** The id of the account's database of this name, or undefined. */
function findDatabase(): string | undefined {
  const list = JSON.parse(wrangler(['d1', 'list', '--json'], true)) as { name: string; uuid: string }[];
  return list.find((db) => db.name === DATABASE_NAME)?.uuid;
}

/** wrangler.toml's D1 block with `database_id` after its `database_name` line. */
function withDatabaseId(config: string, id: string): string {
  const line = `database_name = "${DATABASE_NAME}"`;
  if (!config.includes(line)) throw new Error(`${CONFIG} has no ${line} line`);
  return config.replace(line, `${line}\ndatabase_id = "${id}"`);
}

function ensureDatabaseId(): void {
  const config = readFileSync(CONFIG, 'utf8');
  if (/^database_id\s*=/m.test(config)) return;
  let id = findDatabase();
  if (!id) {
    console.log(`[deploy] creating the D1 database '${DATABASE_NAME}'`);
    wrangler(['d1', 'create', DATABASE_NAME]);
    id = findDatabase();
    if (!id) throw new Error(`the D1 database '${DATABASE_NAME}' was created but is not listed`);
  }
  writeFileSync(CONFIG, withDatabaseId(config, id));
  console.log(`[deploy] wrote database_id = "${id}" to ${CONFIG}: commit it`);
}

/**
 * The D1 bindings to migrate: DB, then each analytics partition's. Throws, naming what to fix, when
 * ANALYTICS_PARTITIONS or ANALYTICS_RETENTION_DAYS cannot be served (the Worker would refuse them at
 * its first analytics request) or a partition's binding is not ready to migrate remotely.
 */
function d1BindingsToMigrate(): string[] {
  const config = unstable_readConfig({ config: CONFIG });
  const vars = config.vars as Record<string, unknown>;
  parseRetentionDays(String(vars.ANALYTICS_RETENTION_DAYS ?? ''));
  const bindings = ['DB'];
  for (const { name } of parsePartitions(String(vars.ANALYTICS_PARTITIONS ?? ''))) {
    if (name === 'DB') continue;
    const d1 = config.d1_databases.find((db: { binding: string }) => db.binding === name) as
      | { database_id?: string; database_name?: string }
      | undefined;
    if (!d1) throw new Error(`ANALYTICS_PARTITIONS names ${name}, which has no [[d1_databases]] block in ${CONFIG}`);
    if (!d1.database_id) {
      throw new Error(
        `the D1 binding ${name} has no database_id: run \`npx wrangler d1 create ${d1.database_name ?? name}\` and add its id`,
      );
    }
    bindings.push(name);
  }
  return bindings;
}

function main(): void {
  const deployArgs = process.argv.slice(2);
  if (deployArgs.includes('--dry-run')) {
    d1BindingsToMigrate();
    wrangler(['deploy', ...deployArgs]);
    return;
  }
  ensureDatabaseId();
  for (const binding of d1BindingsToMigrate()) wrangler(['d1', 'migrations', 'apply', binding, '--remote']);
  wrangler(['deploy', ...deployArgs]);
}

try {
  main();
} catch (err) {
  console.error(`[deploy] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
