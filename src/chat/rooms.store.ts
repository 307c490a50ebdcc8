import { asc, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { messages, rooms, webhooks } from '../db/schema';
import type { ChatMessage } from './protocol';

export interface RoomView {
  id: string;
  name: string;
  topic: string | null;
  createdAt: string;
}

function view(row: typeof rooms.$inferSelect): RoomView {
  return { id: row.id, name: row.name, topic: row.topic, createdAt: row.createdAt };
}

export async function createRoom(db: Db, input: { name: string; topic?: string | null }): Promise<RoomView> {
  const now = new Date().toISOString();
  const row = { id: crypto.randomUUID(), name: input.name, topic: input.topic ?? null, createdAt: now, updatedAt: now };
  await db.insert(rooms).values(row);
  return view(row);
}

export async function listRooms(db: Db): Promise<RoomView[]> {
  return (await db.select().from(rooms).orderBy(asc(rooms.createdAt), asc(rooms.id))).map(view);
}

export async function getRoom(db: Db, id: string): Promise<RoomView | undefined> {
  const row = await db.select().from(rooms).where(eq(rooms.id, id)).get();
  return row && view(row);
}

export async function updateRoom(db: Db, id: string, patch: { name?: string; topic?: string | null }): Promise<RoomView | undefined> {
  const row = await db
    .update(rooms)
    .set({ ...patch, updatedAt: new Date().toISOString() })
    .where(eq(rooms.id, id))
    .returning()
    .get();
  return row && view(row);
}

/**
 * Ids among `ids` that are existing rooms. The ids go as one JSON parameter: a webhook may name 201 rooms
 * (its own and 20 mappings of 10), past D1's limit of 100 bound parameters per statement.
 */
export async function existingRoomIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const wanted = JSON.stringify([...new Set(ids)]);
  const rows = await db.select({ id: rooms.id }).from(rooms).where(sql`${rooms.id} IN (SELECT value FROM json_each(${wanted}))`);
  return new Set(rows.map((r) => r.id));
}

/** Webhooks that post to the room, as their default room or through a mapping. */
export async function webhooksTargetingRoom(db: Db, roomId: string): Promise<string[]> {
  const inMappings = sql`exists (select 1 from json_each(${webhooks.mappings}) as m, json_each(m.value, '$.roomIds') as r where r.value = ${roomId})`;
  const rows = await db
    .select({ id: webhooks.id })
    .from(webhooks)
    .where(or(eq(webhooks.roomId, roomId), inMappings));
  return rows.map((r) => r.id);
}

/** Deletes the room and its messages in one transaction. */
export async function deleteRoomRows(db: Db, id: string): Promise<void> {
  await db.batch([db.delete(messages).where(eq(messages.roomId, id)), db.delete(rooms).where(eq(rooms.id, id))]);
}

/** A row of D1's `messages` as history serves it: the same shape as the room's frames (protocol.ts). */
export function messageFromRow(row: typeof messages.$inferSelect): ChatMessage {
  return {
    id: row.id,
    roomId: row.roomId,
    seq: row.seq,
    webhookId: row.webhookId,
    markdown: row.markdown,
    html: row.html,
    metadata: row.metadata,
    sender: { name: row.senderName, iconUrl: row.senderIconUrl },
    level: row.level,
    createdAt: row.createdAt,
    personId: row.personId,
    editedAt: row.editedAt,
    deletedAt: row.deletedAt,
  };
}
