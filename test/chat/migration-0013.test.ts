import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { roomStub } from '../../src/chat/stubs';
import { history, postOk, roomWithWebhook, webhookPath } from './helpers';
import { send } from '../helpers';

/**
 * Migration 0013 (message edits and deletes, people's messages, the delivery log) on the layout
 * before it, with messages in it: the columns are added (version 0, the rest null) and the rows
 * read as unedited webhook messages. A room object's own log from before gets the columns when it
 * starts (room-log.ts), and its messages can then be edited. Storage is this file's own.
 */

const MIGRATION = '0013_message_edits_deliveries.sql';

async function columns(table: string): Promise<string[]> {
  const { results } = await env.DB.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all<{ name: string }>();
  return results.map((r) => r.name);
}

describe('migration 0013 (message edits, people, delivery log)', () => {
  it('applies to the 0012 layout with messages in it, which read as unedited webhook messages', async () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name === MIGRATION);
    expect(migration, 'migration 0013 is among the applied migrations').toBeDefined();
    const after = await columns('messages');
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'before 0013');
    expect((await history(roomId)).status).toBe(200); // in D1

    // Back to 0012.
    await env.DB.batch([
      env.DB.prepare('DROP TABLE webhook_deliveries'),
      env.DB.prepare('ALTER TABLE messages DROP COLUMN person_id'),
      env.DB.prepare('ALTER TABLE messages DROP COLUMN edited_at'),
      env.DB.prepare('ALTER TABLE messages DROP COLUMN deleted_at'),
      env.DB.prepare('ALTER TABLE messages DROP COLUMN version'),
    ]);
    expect(await columns('messages')).not.toContain('version');
    await env.DB.prepare(
      `INSERT INTO messages (id, room_id, seq, webhook_id, markdown, html, metadata, created_at, sender_name, sender_icon_url, level)
       VALUES ('legacy-2', ?, 2, ?, 'older', '<p>older</p>', NULL, ?, 'Old', NULL, 'info')`,
    )
      .bind(roomId, hook.id, new Date().toISOString())
      .run();

    await env.DB.batch(migration!.queries.map((q) => env.DB.prepare(q)));

    expect(await columns('messages')).toEqual(after);
    expect(await columns('webhook_deliveries')).toContain('status');
    const { results } = await env.DB.prepare(
      'SELECT seq, person_id, edited_at, deleted_at, version FROM messages WHERE room_id = ? ORDER BY seq',
    )
      .bind(roomId)
      .all();
    expect(results).toEqual([
      { seq: 1, person_id: null, edited_at: null, deleted_at: null, version: 0 },
      { seq: 2, person_id: null, edited_at: null, deleted_at: null, version: 0 },
    ]);
    const h = await history(roomId);
    expect(
      h.body.entities.map((m: { seq: number; webhookId: string; personId: null; editedAt: null; deletedAt: null }) => m),
    ).toMatchObject([
      { seq: 1, webhookId: hook.id, personId: null, editedAt: null, deletedAt: null },
      { seq: 2, webhookId: hook.id, personId: null, editedAt: null, deletedAt: null },
    ]);
  });
});

describe('a room object’s log from before edits', () => {
  it('gets the columns when it starts, and its messages can be edited', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const [m] = await postOk(hook, 'old');
    await runInDurableObject(roomStub(env, roomId), (_, state) => {
      const sql = state.storage.sql;
      for (const c of ['person_id', 'edited_at', 'deleted_at', 'version']) sql.exec(`ALTER TABLE log DROP COLUMN ${c}`);
      sql.exec('DROP TABLE edits');
      sql.exec('DROP TABLE message_keys');
    });
    await runInDurableObject(roomStub(env, roomId), (_, state) => state.abort('restart with the old layout')).catch(() => undefined);
    const res = await send('PATCH', `${webhookPath(hook)}/messages/${m!.messageId}`, { token: null, json: { message: 'new' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toMatchObject({ seq: 1, markdown: 'new', editedAt: expect.any(String) });
    expect((await history(roomId)).body.entities).toMatchObject([{ seq: 1, markdown: 'new', editedAt: expect.any(String) }]);
  });
});
