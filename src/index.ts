import { createApp } from './app';

// The Durable Object classes are exported by the Worker that routes to them (one deployable).
export { RoomObject } from './chat/room/room-object';
export { WebhookGate } from './chat/webhook-gate';
export { AggregateJobRunner } from './analytics/jobs/job-runner';

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
