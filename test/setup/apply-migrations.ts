import { applyD1Migrations, env } from 'cloudflare:test';
import { analyticsStore } from '../../src/analytics/partitions/partitions';

// Setup files run before each test file; applyD1Migrations only applies what is missing. Every
// analytics partition (ANALYTICS_PARTITIONS) gets the same migrations as DB, as wrangler applies them.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
for (const p of analyticsStore(env).partitions) if (p.name !== 'DB') await applyD1Migrations(p.d1, env.TEST_MIGRATIONS);
