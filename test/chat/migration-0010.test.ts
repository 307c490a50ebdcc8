import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { RoomObject } from '../../src/chat/room/room-object';
import { roomStub } from '../../src/chat/stubs';
import type { ChatMessage } from '../../src/chat/protocol';
import { history, post, roomWithWebhook } from './helpers';

/**
 * Migration 0010 (sender and level) on the layout before it, with rows in it: the columns are added
 * and every earlier message is given its webhook's name and kind icon, level info; a message whose
 * webhook is gone gets 'Webhook' and no icon. Storage is this file's own, so the test can take the
 * tables back to their 0009 layout first. The room objects' own logs get the same treatment
 * (room-log.ts, room-object.ts): their rows from before have a sender once the object starts.
 */

const MIGRATION = '0010_message_sender_level.sql';

async function columns(table: string): Promise<string[]> {
  const { results } = await env.DB.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all<{ name: string }>();
  return results.map((r) => r.name);
}

describe('migration 0010 (message sender and level)', () => {
  it('adds the columns to the 0009 layout and backfills every earlier message from its webhook', async () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name === MIGRATION);
    expect(migration, 'migration 0010 is among the applied migrations').toBeDefined();
    const after = { messages: await columns('messages'), webhooks: await columns('webhooks') };

    // Back to 0009: the columns 0010 added are dropped.
    await env.DB.batch([
      env.DB.prepare('ALTER TABLE messages DROP COLUMN sender_name'),
      env.DB.prepare('ALTER TABLE messages DROP COLUMN sender_icon_url'),
      env.DB.prepare('ALTER TABLE messages DROP COLUMN level'),
      env.DB.prepare('ALTER TABLE webhooks DROP COLUMN avatar_url'),
      env.DB.prepare('ALTER TABLE webhooks DROP COLUMN allow_overrides'),
    ]);
    expect(await columns('messages')).not.toContain('sender_name');

    const now = new Date().toISOString();
    const hook = (id: string, name: string, kind: string) =>
      env.DB.prepare(
        `INSERT INTO webhooks (id, post_secret, post_secret_hash, name, kind, room_id, active, mappings, rate_burst, rate_per_second, secret, created_at, updated_at)
         VALUES (?, NULL, NULL, ?, ?, 'room-1', 1, '[]', 100, 10, NULL, ?, ?)`,
      ).bind(id, name, kind, now, now);
    const message = (id: string, seq: number, webhookId: string) =>
      env.DB.prepare(
        `INSERT INTO messages (id, room_id, seq, webhook_id, markdown, html, metadata, created_at) VALUES (?, 'room-1', ?, ?, 'm', '<p>m</p>', NULL, ?)`,
      ).bind(id, seq, webhookId, now);
    await env.DB.batch([
      hook('hook-ci', 'Jenkins CI', 'jenkins'),
      hook('hook-alerts', 'Prod alerts', 'generic'),
      message('m1', 1, 'hook-ci'),
      message('m2', 2, 'hook-alerts'),
      message('m3', 3, 'hook-gone'),
    ]);

    // The statements wrangler applies (the test setup reads the same files).
    await env.DB.batch(migration!.queries.map((q) => env.DB.prepare(q)));

    // Re-added columns come last: the same columns, whatever the order.
    expect({ messages: (await columns('messages')).sort(), webhooks: (await columns('webhooks')).sort() }).toEqual({
      messages: [...after.messages].sort(),
      webhooks: [...after.webhooks].sort(),
    });
    const { results } = await env.DB.prepare('SELECT id, sender_name, sender_icon_url, level FROM messages ORDER BY seq').all();
    expect(results).toEqual([
      { id: 'm1', sender_name: 'Jenkins CI', sender_icon_url: '/assets/chat/icons/jenkins.svg', level: 'info' },
      { id: 'm2', sender_name: 'Prod alerts', sender_icon_url: '/assets/chat/icons/generic.svg', level: 'info' },
      { id: 'm3', sender_name: 'Webhook', sender_icon_url: null, level: 'info' },
    ]);
    const hooks = await env.DB.prepare('SELECT id, avatar_url, allow_overrides FROM webhooks ORDER BY id').all();
    expect(hooks.results).toEqual([
      { id: 'hook-alerts', avatar_url: null, allow_overrides: 0 },
      { id: 'hook-ci', avatar_url: null, allow_overrides: 0 },
    ]);
  });
});

describe('a room object’s rows from before senders', () => {
  it('are named from their webhook when the object starts, replayed and flushed with that sender', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'Nightly', kind: 'jenkins' });
    expect((await post(hook, { message: 'old one' })).status).toBe(200);
    expect((await post(hook, { message: 'old two', level: 'warning' })).status).toBe(200);
    expect((await history(roomId)).status).toBe(200); // flushed: no flush runs on its own meanwhile
    const stub = roomStub(env, roomId);
    const seen = await runInDurableObject(stub, async (instance: RoomObject, state) => {
      // As a log written before this change holds them: no sender, no level, not yet in D1.
      state.storage.sql.exec('UPDATE log SET sender_name = NULL, sender_icon_url = NULL, level = NULL, flushed = 0');
      const internals = instance as unknown as {
        log: { pageAfter(seq: number, rows: number, chars: number): ChatMessage[] };
        backfillSenders(): Promise<void>;
      };
      const before = internals.log.pageAfter(0, 10, 100_000).map((m) => [m.sender, m.level]);
      // What the object's start does (blockConcurrencyWhile in its constructor).
      await internals.backfillSenders();
      const after = internals.log.pageAfter(0, 10, 100_000).map((m) => [m.sender, m.level]);
      return { before, after };
    });
    // Not in D1 either, as rows not flushed yet: the next flush writes them.
    await env.DB.prepare('DELETE FROM messages WHERE room_id = ?').bind(roomId).run();
    expect(seen.before).toEqual([
      [{ name: 'Webhook', iconUrl: null }, 'info'],
      [{ name: 'Webhook', iconUrl: null }, 'info'],
    ]);
    expect(seen.after).toEqual([
      [{ name: 'Nightly', iconUrl: '/assets/chat/icons/jenkins.svg' }, 'info'],
      [{ name: 'Nightly', iconUrl: '/assets/chat/icons/jenkins.svg' }, 'info'],
    ]);
    const res = await history(roomId);
    expect(res.body.entities.map((m: ChatMessage) => [m.markdown, m.sender.name, m.level])).toEqual([
      ['old one', 'Nightly', 'info'],
      ['old two', 'Nightly', 'info'],
    ]);
  });

  it('flushed to D1 before they are named, take their webhook’s name there too', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'Deploys' });
    expect((await post(hook, { message: 'legacy' })).status).toBe(200);
    expect((await history(roomId)).status).toBe(200); // flushed: no flush runs on its own meanwhile
    await runInDurableObject(roomStub(env, roomId), async (_instance: RoomObject, state) => {
      state.storage.sql.exec('UPDATE log SET sender_name = NULL, sender_icon_url = NULL, level = NULL, flushed = 0');
    });
    await env.DB.prepare('DELETE FROM messages WHERE room_id = ?').bind(roomId).run();
    const res = await history(roomId);
    expect(res.body.entities).toMatchObject([
      { markdown: 'legacy', sender: { name: 'Deploys', iconUrl: '/assets/chat/icons/generic.svg' }, level: 'info' },
    ]);
  });
});
