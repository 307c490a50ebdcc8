import { createApp } from './app';
import { dropRetiredPartitions } from './analytics/partitions/retention';

// The Durable Object classes are exported by the Worker that routes to them (one deployable).
export { RoomObject } from './chat/room/room-object';
export { WebhookGate } from './chat/webhook-gate';
export { AggregateJobRunner } from './analytics/jobs/job-runner';

const app = createApp();

export default {
  fetch: app.fetch,
  // The cron of wrangler.toml: analytics partitions past ANALYTICS_RETENTION_DAYS are emptied, a chunk at a time.
  async scheduled(controller, env) {
    for (const report of await dropRetiredPartitions(env, controller.scheduledTime)) console.log('analytics retention', report);
  },
} satisfies ExportedHandler<Env>;
