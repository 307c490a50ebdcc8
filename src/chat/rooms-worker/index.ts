/**
 * Entry of the rooms Worker, `switchboard-rooms` (its config is the wrangler.toml beside this file):
 * the RoomObject class and nothing else. The main Worker binds ROOMS to it by `script_name`.
 *
 * Why a Worker of its own: a room sends every message to every viewer, and each send leaves runtime
 * objects that outlive a scavenge, so at 200 posts/s a room's isolate runs a full mark-compact every
 * 1-2 s. That pause grows with the isolate's live heap: in the main Worker's isolate (hono, zod,
 * drizzle, marked, the analytics engine: 7 MB, 76,000 objects) it was 6-13 ms, and it set the p99 of
 * POST start to the last of 100 viewers. Here the heap is this class and the frame encoder. README,
 * "Benchmarks", has the measurements.
 */
export { RoomObject } from '../room-object';

export default {
  fetch: () => new Response('Not found.', { status: 404 }),
} satisfies ExportedHandler<Env>;
