/**
 * A database that was never migrated: what plain `npx wrangler dev` on a fresh clone serves (nothing
 * applies migrations there; `npm run dev` does), or a deploy whose migrations were skipped. Every route
 * that needs a table answers 503 naming the missing table and the command that creates it, never a bare
 * 500; routes that need no table still answer. This file runs in a runtime of its own (the `workers`
 * project: storage isolated per file), so it may drop tables.
 */
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { INGEST, QUERY } from '../analytics/analytics-api';
import { conversation } from '../analytics/builders';

/** The advice every such answer gives, in the words a reader would copy. */
function expectMigrationAdvice(message: string, table: string): void {
  expect(message).toContain(`it has no table ${table}`);
  expect(message).toContain('npm run dev');
  expect(message).toContain('npx wrangler d1 migrations apply DB --local');
  expect(message).toContain('--remote');
}

/** Drops every table the migrations made, children before parents (foreign keys). */
async function dropEverything(db: D1Database): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const { results } = await db
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
           AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'messages\\_fts\\_%' ESCAPE '\\'`,
      )
      .all<{ name: string }>();
    if (results.length === 0) return;
    for (const { name } of results)
      await db
        .prepare(`DROP TABLE IF EXISTS "${name}"`)
        .run()
        .catch(() => undefined);
  }
  throw new Error('tables left after ten rounds of dropping');
}

describe('a database without its tables', () => {
  it('answers 503 naming the one missing table and how to migrate', async () => {
    const { token } = await createToken(['chat:admin']);
    expect((await send('GET', '/api/v1/rooms', { token })).status).toBe(200);
    await env.DB.exec('DROP TABLE tokens');

    const res = await send('GET', '/api/v1/rooms', { token });
    expectError(res, 503, 'service.unavailable');
    expectMigrationAdvice(res.body.message, 'tokens');
  });

  it('answers 503 on every kind of route when nothing was ever migrated, and still serves what needs no table', async () => {
    await dropEverything(env.DB);
    const interval = '2026-11-01T00:00:00.000Z/2026-11-02T00:00:00.000Z';
    const oneConversation = conversation({
      start: '2026-11-01T10:00:00.000Z',
      participants: [{ purpose: 'agent', userId: 'agent-1', sessions: [{ metrics: [['tTalk', 60_000, '2026-11-01T10:01:00.000Z']] }] }],
    });
    const attempts: [string, Promise<Awaited<ReturnType<typeof send>>>][] = [
      ['create a room', send('POST', '/api/v1/rooms', { json: { name: 'first room' } })],
      ['list webhooks', send('GET', '/api/v1/webhooks')],
      ['post to a webhook', send('POST', `/webhooks/api/v1/webhook/${crypto.randomUUID()}`, { json: { message: 'hello' } })],
      ['query', send('POST', QUERY, { json: { interval, metrics: ['nOffered'] } })],
      ['ingest', send('POST', INGEST, { json: { conversations: [oneConversation] } })],
    ];
    for (const [what, pending] of attempts) {
      const res = await pending;
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(503);
      expectError(res, 503, 'service.unavailable');
      expect(res.body.message, what).toMatch(/it has no table \w+/);
      expectMigrationAdvice(res.body.message, /it has no table (\w+)/.exec(res.body.message)![1]!);
    }
    // The admin page is static: it opens, and tells its reader what the API answers.
    const page = await send('GET', '/admin', { token: null });
    expect(page.status).toBe(200);
  });
});
