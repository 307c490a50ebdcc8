/**
 * Migrations upgrade a database that already holds data, through wrangler's own `d1 migrations apply`
 * on a local D1 (the same path `npm run db:migrate:*` takes): the database is first brought to the
 * layout before 0003 (rollups with rowids, agg_user at 15/60/1440 minutes), filled, then migrated.
 * Every rollup row must survive, except agg_user's 15-minute cells, which 0003 drops on purpose
 * (agg_user keeps 60 and 1440 minutes; README "How it is stored and read"); 0004 then adds
 * agg_media's half hours, computed here independently from the quarter hours; 0005 packs agg_user
 * (one row per key, four columns per agent metric) and keeps only the agent metrics' cells; 0007 keeps
 * every webhook's id and settings and every message, and retires the old URLs (no posting secret).
 *
 * Only the migrations go through wrangler (what is tested); rows are written and read in one local
 * runtime on wrangler's own database file (`db`), each start of wrangler costing seconds.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unstable_splitSqlQuery } from 'wrangler';
import { METRICS } from '../../src/analytics/catalog';
import { AGG_USER_METRICS } from '../../src/db/packed-columns';
import { withLocalD1 } from './support/local-d1';

const ROOT = path.resolve(import.meta.dirname, '../..');
const WRANGLER = path.join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
const dir = mkdtempSync(path.join(tmpdir(), 'sb-migrations-'));
const migrationsDir = path.join(dir, 'migrations');
const persist = path.join(dir, 'state');
const DATABASE_ID = '00000000-0000-4000-8000-000000000000';

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function wrangler(...args: string[]): string {
  const run = spawnSync(
    process.execPath,
    [WRANGLER, ...args, '--local', '--persist-to', persist, '--config', path.join(dir, 'wrangler.toml')],
    {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    },
  );
  if (run.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

/** The database wrangler migrates (its local file for database_id, under --persist-to), opened in one local runtime. */
function db<T>(use: (d1: D1Database) => Promise<T>): Promise<T> {
  return withLocalD1(persist, DATABASE_ID, use);
}

/** Statements (split as wrangler's `d1 execute` splits them) in one batch. */
function execute(sql: string): Promise<unknown> {
  return db((d1) => d1.batch(unstable_splitSqlQuery(sql).map((statement) => d1.prepare(statement))));
}

async function query<T>(sql: string): Promise<T[]> {
  return (await queries<[T]>(sql))[0];
}

/** One result list per statement. */
function queries<T extends unknown[]>(...sql: string[]): Promise<{ [K in keyof T]: T[K][] }> {
  return db(async (d1) => {
    const out: unknown[][] = [];
    for (const statement of sql) out.push((await d1.prepare(statement).all()).results);
    return out as { [K in keyof T]: T[K][] };
  });
}

/** Copies the project's migrations up to and including `last` (file name prefix) into the temp config. */
function stageMigrationsThrough(last: string): void {
  mkdirSync(path.join(migrationsDir, 'meta'), { recursive: true });
  for (const file of readdirSync(path.join(ROOT, 'migrations'))) {
    if (file.endsWith('.sql') && file.slice(0, 4) <= last)
      copyFileSync(path.join(ROOT, 'migrations', file), path.join(migrationsDir, file));
  }
}

type Cell = { res: number; slot: number; metric: number; media: number; cnt: number; sum: number; mn: number; mx: number };
type QueueCell = Cell & { direction: number; queue: number };
type UserCell = QueueCell & { user: number };

// Hand-made rows in the old layout: every resolution, a few metrics, dimensions and sizes.
const mediaRows: Cell[] = [];
const queueRows: QueueCell[] = [];
const userRows: UserCell[] = [];
for (const res of [15, 60, 1440]) {
  for (let i = 0; i < 12; i++) {
    // Slots aligned as ingest writes them (the base is a multiple of 30 minutes); two neighbouring
    // quarter hours share metric and media, so 0004 has cells to add up.
    const cell = {
      res,
      slot: 1_762_999_200_000 + i * res * 60_000,
      metric: Math.floor(i / 2) % 5,
      media: 1 + (Math.floor(i / 2) % 2),
      cnt: i + 1,
      sum: 1000 * i,
      mn: i,
      mx: 50 * i,
    };
    mediaRows.push(cell);
    queueRows.push({ ...cell, direction: 1 + (i % 2), queue: 3 + (i % 4) });
    userRows.push({ ...cell, direction: 1 + (i % 2), queue: 3 + (i % 4), user: 10 + i });
  }
}

function insertSql(table: string, rows: object[]): string {
  const columns = Object.keys(rows[0]!);
  const values = rows.map((r) => `(${Object.values(r).join(', ')})`).join(', ');
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values};`;
}

const ORDER = 'ORDER BY res, slot, metric, media';

describe('migration 0003 on a database with data', () => {
  it('keeps every rollup row (agg_user without its 15-minute cells), clusters the rollups on their keys and keeps the raw store', async () => {
    writeFileSync(
      path.join(dir, 'wrangler.toml'),
      `name = "migration-check"\nmain = "x.js"\ncompatibility_date = "2026-04-01"\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "switchboard"\ndatabase_id = "${DATABASE_ID}"\nmigrations_dir = "migrations"\n`,
    );
    stageMigrationsThrough('0002');
    wrangler('d1', 'migrations', 'apply', 'DB');
    const conversation = `INSERT INTO conversations (id, first_emit, last_emit, version, data) VALUES ('c-old', 1763000000000, 1763000060000, 1, '{"kept":"as written"}');`;
    await execute(
      [insertSql('agg_media', mediaRows), insertSql('agg_queue', queueRows), insertSql('agg_user', userRows), conversation].join('\n'),
    );
    expect((await query<{ n: number }>('SELECT count(*) AS n FROM agg_user'))[0]!.n).toBe(36);

    stageMigrationsThrough('0003');
    wrangler('d1', 'migrations', 'apply', 'DB');

    const [media, queue, user, schema, autoIndexes, conversations] = await queries<
      [Cell, QueueCell, UserCell, { name: string; sql: string }, { n: number }, { data: string }]
    >(
      `SELECT res, slot, metric, media, cnt, sum, mn, mx FROM agg_media ${ORDER};`,
      `SELECT res, slot, metric, media, cnt, sum, mn, mx, direction, queue FROM agg_queue ${ORDER};`,
      `SELECT res, slot, metric, media, cnt, sum, mn, mx, direction, queue, user FROM agg_user ${ORDER};`,
      "SELECT name, sql FROM sqlite_schema WHERE name LIKE 'agg_%' ORDER BY name;",
      "SELECT count(*) AS n FROM sqlite_schema WHERE type = 'index' AND name LIKE 'sqlite_autoindex_agg_%';",
      "SELECT data FROM conversations WHERE id = 'c-old';",
    );
    expect(media).toEqual(mediaRows);
    expect(queue).toEqual(queueRows);
    expect(user).toEqual(userRows.filter((r) => r.res !== 15));
    const tables = schema.filter((s) => !s.name.startsWith('agg_user_by'));
    expect(tables.map((t) => t.name)).toEqual(['agg_media', 'agg_queue', 'agg_user']);
    for (const t of tables) expect(t.sql).toMatch(/WITHOUT ROWID\s*$/);
    // The by-user index is back; no automatic primary-key index remains beside the clustered tables.
    expect(schema.filter((s) => s.name.startsWith('agg_user_by')).map((s) => s.name)).toEqual(['agg_user_by_user']);
    expect(autoIndexes[0]!.n).toBe(0);
    expect(conversations).toEqual([{ data: '{"kept":"as written"}' }]);
  });

  it('0004 adds agg_media half hours built exactly from its quarter hours, leaving every other row as it was', async () => {
    const halfHours = new Map<string, Cell>();
    for (const r of mediaRows.filter((r) => r.res === 15)) {
      const slot = Math.floor(r.slot / 1_800_000) * 1_800_000;
      const key = `${slot}/${r.metric}/${r.media}`;
      const cell = halfHours.get(key);
      if (!cell) halfHours.set(key, { ...r, res: 30, slot });
      else
        halfHours.set(key, {
          ...cell,
          cnt: cell.cnt + r.cnt,
          sum: cell.sum + r.sum,
          mn: Math.min(cell.mn, r.mn),
          mx: Math.max(cell.mx, r.mx),
        });
    }
    // Two quarter hours share a half hour at least once, so the test adds something up.
    expect(halfHours.size).toBeLessThan(12);

    stageMigrationsThrough('0004');
    wrangler('d1', 'migrations', 'apply', 'DB');

    const byKey = (a: Cell, b: Cell) => a.res - b.res || a.slot - b.slot || a.metric - b.metric || a.media - b.media;
    const [media, queueCount, userCount] = await queries<[Cell, { n: number }, { n: number }]>(
      `SELECT res, slot, metric, media, cnt, sum, mn, mx FROM agg_media ${ORDER};`,
      'SELECT count(*) AS n FROM agg_queue;',
      'SELECT count(*) AS n FROM agg_user;',
    );
    expect(media).toEqual([...mediaRows, ...halfHours.values()].sort(byKey));
    expect(queueCount[0]!.n).toBe(queueRows.length);
    expect(userCount[0]!.n).toBe(userRows.filter((r) => r.res !== 15).length);
  });

  it('0005 packs agg_user: every cell of an agent metric kept exactly in its row, the other metrics left out', async () => {
    // The agent metrics of 0005 are the columns of agg_user (db/packed-columns.ts).
    const packed = new Set<string>(AGG_USER_METRICS);
    const agent = (metric: number) => packed.has(METRICS[metric]!.name);
    const first = METRICS.findIndex((m) => packed.has(m.name));
    const last = METRICS.length - 1 - [...METRICS].reverse().findIndex((m) => packed.has(m.name));
    // Cells as today's ingest writes them: several metrics per (res, slot, media, direction, queue,
    // user), among them the first and last agent metric, metrics of other participants (user 0, as
    // stored), a count whose values are not 1, an agent metric without a userId (user 0).
    const cells: UserCell[] = [];
    const base = 1_763_000_000_000 - (1_763_000_000_000 % 86_400_000);
    for (const res of [60, 1440]) {
      for (let i = 0; i < 6; i++) {
        const slot = base + (i % 3) * res * 60_000;
        const key = { res, slot, media: 1 + (i % 2), direction: 1, queue: 3 + (i % 2), user: i === 5 ? 0 : 10 + (i % 3) };
        for (const metric of [first, first + 1, 0, 1, first + 4 + i, last, METRICS.length - 2]) {
          if (
            cells.some(
              (c) =>
                c.res === res &&
                c.slot === key.slot &&
                c.media === key.media &&
                c.queue === key.queue &&
                c.user === key.user &&
                c.metric === metric,
            )
          )
            continue;
          if (metric === last && i % 2 === 1) continue;
          cells.push({
            ...key,
            metric,
            cnt: 1 + i + metric,
            sum: 1000 * (i + 1) + metric,
            mn: i + metric,
            mx: 500 + i * metric,
            direction: 1,
          });
        }
      }
    }
    expect(cells.some((c) => !agent(c.metric))).toBe(true);
    await execute(`DELETE FROM agg_user; ${insertSql('agg_user', cells)}`);

    stageMigrationsThrough('0005');
    wrangler('d1', 'migrations', 'apply', 'DB');

    const [rows, schema, queueCount] = await queries<[Record<string, number | null>, { name: string; sql: string }, { n: number }]>(
      'SELECT * FROM agg_user ORDER BY res, slot, media, direction, queue, user;',
      "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'agg_user' ORDER BY name;",
      'SELECT count(*) AS n FROM agg_queue;',
    );
    const agentMetrics = METRICS.flatMap((m, metric) => (AGG_USER_METRICS.some((n) => n === m.name) ? [{ metric, name: m.name }] : []));
    expect(Object.keys(rows[0]!)).toEqual([
      'res',
      'slot',
      'media',
      'direction',
      'queue',
      'user',
      ...agentMetrics.flatMap(({ name }) => [`${name}_cnt`, `${name}_sum`, `${name}_mn`, `${name}_mx`]),
    ]);
    expect(Object.keys(rows[0]!).length).toBeLessThanOrEqual(100);
    // Unpivoted: one cell per metric a row holds; a metric it lacks is 0, 0, NULL, NULL.
    const unpivoted: UserCell[] = [];
    for (const row of rows) {
      for (const { metric, name } of agentMetrics) {
        const [cnt, sum, mn, mx] = ['cnt', 'sum', 'mn', 'mx'].map((c) => row[`${name}_${c}`]);
        if (cnt === 0) {
          expect([sum, mn, mx]).toEqual([0, null, null]);
          continue;
        }
        unpivoted.push({
          res: row.res!,
          slot: row.slot!,
          metric,
          media: row.media!,
          cnt: cnt!,
          sum: sum!,
          mn: mn!,
          mx: mx!,
          direction: row.direction!,
          queue: row.queue!,
          user: row.user!,
        });
      }
    }
    const byKey = (a: UserCell, b: UserCell) =>
      a.res - b.res ||
      a.slot - b.slot ||
      a.media - b.media ||
      a.direction - b.direction ||
      a.queue - b.queue ||
      a.user - b.user ||
      a.metric - b.metric;
    expect(unpivoted.sort(byKey)).toEqual(cells.filter((c) => agent(c.metric)).sort(byKey));
    expect(schema.map((s) => s.name)).toEqual(['agg_user', 'agg_user_by_user']);
    expect(schema[0]!.sql).toMatch(/PRIMARY KEY\(`res`, `slot`, `media`, `direction`, `queue`, `user`\)\s*\) WITHOUT ROWID\s*$/);
    expect(schema[1]!.sql).toContain('(`user`,`res`,`slot`)');
    expect(queueCount[0]!.n).toBe(queueRows.length);
  });

  it('0007 keeps every webhook (id, settings) and message as they were, and gives none a posting secret (old URLs retired)', async () => {
    const hook = {
      id: '0d6f0000-0000-4000-8000-000000000001',
      id_hash: 'ab'.repeat(32),
      name: 'old hook',
      kind: 'github',
      room_id: '9c1d0000-0000-4000-8000-000000000002',
      active: 1,
      mappings: '[{"field":"metadata","match":"exact","value":"prod","roomIds":["9c1d0000-0000-4000-8000-000000000002"]}]',
      rate_burst: 20,
      rate_per_second: 2.5,
      secret: 'shared hmac secret',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
    };
    const message = {
      id: '3e2a0000-0000-4000-8000-000000000003',
      room_id: hook.room_id,
      seq: 1,
      webhook_id: hook.id,
      markdown: '**old**',
      html: '<p><strong>old</strong></p>\n',
      metadata: null,
      created_at: '2026-01-01T00:00:01.000Z',
    };
    const sqlValue = (v: unknown) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
    const insert = (table: string, row: Record<string, unknown>) =>
      `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.values(row).map(sqlValue).join(', ')});`;
    await execute(
      [
        `INSERT INTO rooms (id, name, topic, created_at, updated_at) VALUES ('${hook.room_id}', 'room', NULL, '${hook.created_at}', '${hook.created_at}');`,
        insert('webhooks', hook),
        insert('messages', message),
      ].join('\n'),
    );

    stageMigrationsThrough('0007');
    wrangler('d1', 'migrations', 'apply', 'DB');

    const [hooks, messages, indexes] = await queries<[Record<string, unknown>, Record<string, unknown>, { name: string; sql: string }]>(
      'SELECT * FROM webhooks;',
      'SELECT * FROM messages;',
      "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'webhooks' AND sql IS NOT NULL ORDER BY name;",
    );
    const { id_hash: _retired, ...kept } = hook;
    expect(hooks).toEqual([{ ...kept, post_secret: null, post_secret_hash: null }]);
    expect(messages).toEqual([message]);
    expect(indexes.map((i) => i.name)).toEqual(['webhooks_post_secret_hash', 'webhooks_room_id']);
    expect(indexes[0]!.sql).toMatch(/^CREATE UNIQUE INDEX/);
  });
});

describe('migration 0020 on a database with data', () => {
  it('sets each compaction watermark just past the last slot its resolution holds, and 0 where it holds none', async () => {
    stageMigrationsThrough('0019');
    wrangler('d1', 'migrations', 'apply', 'DB');
    // Cube rows of two dimensions and a projection's, keyed by dim or proj first (the migration seeks each).
    const day = 86_400_000;
    const cube = [
      { dim: 12, slot: 1_762_992_000_000 + 3 * day },
      { dim: 66, slot: 1_762_992_000_000 + 5 * day },
    ];
    await execute(
      [
        ...cube.map(
          (c) =>
            `INSERT INTO agg_dim (dim, res, slot, metric, media, value, cnt, sum, mn, mx) VALUES (${c.dim}, 1440, ${c.slot}, 1, 1, 7, 1, 5, 0, 0), (${c.dim}, 60, ${c.slot}, 1, 1, 7, 1, 5, 0, 0);`,
        ),
        `INSERT INTO agg_proj (proj, res, slot, metric, media, v0, v1, v2, v3, cnt, sum, mn, mx) VALUES (1, 1440, ${cube[0]!.slot}, 1, 1, 2, 3, 4, 5, 1, 5, 0, 0);`,
      ].join('\n'),
    );
    stageMigrationsThrough('0020');
    wrangler('d1', 'migrations', 'apply', 'DB');
    const marks = await query<{ key: string; value: number }>("SELECT key, value FROM meta WHERE key LIKE 'compacted:%' ORDER BY key;");
    const past = (rows: Cell[], res: number) => Math.max(...rows.filter((r) => r.res === res).map((r) => r.slot)) + res * 60_000;
    // agg_media's half hours are 0004's, from its quarter hours: the last one starts at the half hour holding the last quarter hour.
    const lastQuarter = Math.max(...mediaRows.filter((r) => r.res === 15).map((r) => r.slot));
    const lastHalf = Math.floor(lastQuarter / 1_800_000) * 1_800_000;
    expect(Object.fromEntries(marks.map((m) => [m.key, m.value]))).toEqual({
      'compacted:agg_media:1440': past(mediaRows, 1440),
      'compacted:agg_media:60': past(mediaRows, 60),
      'compacted:agg_media:30': lastHalf + 1_800_000,
      'compacted:agg_queue:1440': past(queueRows, 1440),
      'compacted:agg_queue:60': past(queueRows, 60),
      // agg_user holds the 0005 test's cells: its last day starts 2 days after that test's base day.
      'compacted:agg_user:1440': 1_763_000_000_000 - (1_763_000_000_000 % 86_400_000) + 3 * 86_400_000,
      'compacted:agg_user_more:1440': 0,
      'compacted:agg_dim:1440': cube[1]!.slot + day,
      'compacted:agg_mask:1440': 0,
      'compacted:agg_proj:1440': cube[0]!.slot + day,
    });
  });
});
