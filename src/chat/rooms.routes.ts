import { Hono } from 'hono';
import { z } from 'zod';
import { ApiError } from '../http/api-error';
import { requirePermission } from '../http/auth';
import type { AppEnv } from '../http/context';
import { jsonBody } from '../http/json-body';
import { validJson } from '../http/validate';
import { roomNotFound, storeUnavailable } from './chat-errors';
import { roomStub } from './stubs';
import { CHAT_LIMITS } from './limits';
import { uuidParam } from './params';
import { createRoom, deleteRoomRows, getRoom, listRooms, updateRoom, webhooksTargetingRoom } from './rooms.store';

const name = z.string().trim().min(1).max(CHAT_LIMITS.nameChars);
const topic = z.string().trim().max(CHAT_LIMITS.topicChars).nullable();

const createRoomSchema = z.strictObject({ name, topic: topic.optional() });
const patchRoomSchema = z
  .strictObject({ name: name.optional(), topic: topic.optional() })
  .refine((p) => p.name !== undefined || p.topic !== undefined, { message: 'Give name and/or topic to change.' });

const roomId = uuidParam('No room has this id.');
const admin = requirePermission('chat:admin');

export const roomsRoutes = new Hono<AppEnv>()
  .post('/api/v1/rooms', admin, jsonBody(CHAT_LIMITS.adminBodyBytes), validJson(createRoomSchema), async (c) => {
    return c.json(await createRoom(c.var.db, c.req.valid('json')), 201);
  })
  .get('/api/v1/rooms', admin, async (c) => c.json({ entities: await listRooms(c.var.db) }))
  .get('/api/v1/rooms/:id', admin, roomId, async (c) => {
    const room = await getRoom(c.var.db, c.req.param('id'));
    if (!room) throw roomNotFound();
    return c.json(room);
  })
  .patch('/api/v1/rooms/:id', admin, roomId, jsonBody(CHAT_LIMITS.adminBodyBytes), validJson(patchRoomSchema), async (c) => {
    const room = await updateRoom(c.var.db, c.req.param('id'), c.req.valid('json'));
    if (!room) throw roomNotFound();
    return c.json(room);
  })
  /** Refused while a webhook posts to the room; otherwise viewers are disconnected and messages go too. */
  .delete('/api/v1/rooms/:id', admin, roomId, async (c) => {
    const id = c.req.param('id');
    if (!(await getRoom(c.var.db, id))) throw roomNotFound();
    const users = await webhooksTargetingRoom(c.var.db, id);
    if (users.length > 0) {
      throw new ApiError(
        409,
        'conflict',
        `Webhooks post to this room (${users.join(', ')}); delete them or point them elsewhere first.`,
        users.map((webhookId) => ({ errorCode: 'conflict', fieldName: webhookId })),
      );
    }
    try {
      await roomStub(c.env, id).purge(id);
    } catch (err) {
      console.error('room purge failed', err);
      throw storeUnavailable('The room could not be deleted now. Retry later.');
    }
    await deleteRoomRows(c.var.db, id);
    return c.body(null, 204);
  });
