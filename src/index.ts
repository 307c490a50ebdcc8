import { createApp } from './app';
import { backfillCubes } from './analytics/ingest/cube-backfill';
import { dropRetiredPartitions } from './analytics/partitions/retention';

// The Durable Object classes are exported by the Worker that routes to them (one deployable).
export { RoomObject } from './chat/room/room-object';
export { WebhookGate } from './chat/webhook-gate';
export { AggregateJobRunner } from './analytics/jobs/job-runner';

const app = createApp();

/** Time a scheduled run spends on cube backfills, after retention's 5 minutes (a run may last 15). */
const CUBE_BACKFILL_BUDGET_MS = 5 * 60_000;

export default {
  fetch: app.fetch,
  // The cron of wrangler.toml: analytics partitions past ANALYTICS_RETENTION_DAYS are emptied, and the
  // dimension cubes of databases from before it are filled, a chunk at a time (the next run goes on).
  async scheduled(controller, env) {
    for (const report of await dropRetiredPartitions(env, controller.scheduledTime)) console.log('analytics retention', report);
    for (const report of await backfillCubes(env, controller.scheduledTime, { budgetMs: CUBE_BACKFILL_BUDGET_MS })) {
      if (report.phase === 'refused') console.error(`dimension cube backfill refused: ${report.reason}`, report);
      else console.log('dimension cube backfill', report);
    }
  },
} satisfies ExportedHandler<Env>;
