/**
 * The Worker as the workers-pool tests run it. vitest-pool-workers runs one Worker, and
 * `runInDurableObject` reaches only classes it exports, so rooms run here beside the main Worker
 * (vitest.config.ts binds ROOMS to this class) instead of in the rooms Worker they are deployed in
 * (src/chat/rooms-worker). The same class either way; the e2e tests run the two Workers as deployed.
 */
export { default, WebhookGate } from '../../src/index';
export { RoomObject } from '../../src/chat/room-object';
