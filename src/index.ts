import { createApp } from './app';

// RoomObject is served by the rooms Worker (src/chat/rooms-worker), bound as ROOMS by script_name.
export { WebhookGate } from './chat/webhook-gate';

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
