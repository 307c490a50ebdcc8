import { createApp } from './app';

export { RoomObject } from './chat/room-object';
export { WebhookGate } from './chat/webhook-gate';

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
