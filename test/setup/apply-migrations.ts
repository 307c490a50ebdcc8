import { applyD1Migrations, env } from 'cloudflare:test';
import { afterEach } from 'vitest';
import { analyticsStore } from '../../src/analytics/partitions/partitions';
import { settleBackground } from '../hostile/support/background';

/**
 * Runs before each test file. Files of a project share one workerd (isolate: false in vitest.config.ts:
 * a runtime per file cost ~2 s of a file's ~2.5), so each file starts from empty tables here instead:
 * every row the previous file left is deleted, the schema stays (migrations are applied once), and the rows a
 * migration seeds in an empty database are seeded again (0020's compaction watermarks).
 */
async function migratedAndEmpty(db: D1Database): Promise<void> {
  await applyD1Migrations(db, env.TEST_MIGRATIONS);
  const { results } = await db
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
         AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'messages\\_fts%' ESCAPE '\\' AND name <> 'd1_migrations'`,
    )
    .all<{ name: string }>();
  await db.batch([
    ...results.map(({ name }) => db.prepare(`DELETE FROM "${name}"`)),
    // What migration 0020 gives an empty database: every compaction watermark at 0.
    ...[...env.TEST_MIGRATIONS].filter((m) => m.name.startsWith('0020_')).flatMap((m) => m.queries.map((q) => db.prepare(q))),
  ]);
}

await migratedAndEmpty(env.DB);
for (const p of analyticsStore(env).partitions) if (p.name !== 'DB') await migratedAndEmpty(p.d1);

// The direct client's requests leave their waitUntil work running (test/hostile/support/background.ts):
// it ends with the test that started it.
afterEach(settleBackground);
