import { describe, expect, it } from 'vitest';
import { expectError, send } from '../helpers';
import { postOk, roomWithWebhook, type WebhookBody } from './helpers';

/**
 * History that people can use (issue 25 item 7, server side): full-text search (`q`, D1's FTS5 index
 * kept by triggers, migration 0014), a metadata filter, a jump to a date (`since`) and newest-first
 * pages, all through GET /api/v1/rooms/{id}/messages on real D1, after the room flushed.
 */
type Entry = { seq: number; markdown: string; metadata: string | null; deletedAt?: string | null };

async function find(roomId: string, query: string): Promise<{ entities: Entry[]; nextAfter?: number; nextBefore?: number }> {
  const res = await send('GET', `/api/v1/rooms/${roomId}/messages?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
const seqs = (page: { entities: Entry[] }) => page.entities.map((e) => e.seq);

async function room(): Promise<{ roomId: string; hook: WebhookBody }> {
  const { roomId, hook } = await roomWithWebhook();
  await postOk(hook, 'Deploy **started** for api', 'deploy'); // 1
  await postOk(hook, 'Build #12 failed on `main`', 'ci'); // 2
  await postOk(hook, 'Déploiement terminé: api is live', 'deploy'); // 3
  await postOk(hook, 'Build #13 passed', 'ci'); // 4
  await postOk(hook, 'Disk full on db-1', 'alerts'); // 5
  return { roomId, hook };
}

describe('searching a room', () => {
  it('finds messages by their words (all of them, any order, accents folded), oldest first or newest first', async () => {
    const { roomId } = await room();
    expect(seqs(await find(roomId, 'q=build'))).toEqual([2, 4]);
    expect(seqs(await find(roomId, 'q=passed%20build'))).toEqual([4]);
    expect(seqs(await find(roomId, 'q=api'))).toEqual([1, 3]);
    // "deploiement" finds "Déploiement"; the markdown's ** and ` are not words.
    expect(seqs(await find(roomId, 'q=deploiement'))).toEqual([3]);
    expect(seqs(await find(roomId, 'q=started'))).toEqual([1]);
    expect(seqs(await find(roomId, 'q=build&order=desc'))).toEqual([4, 2]);
    // Metadata is searched too.
    expect(seqs(await find(roomId, 'q=alerts'))).toEqual([5]);
    expect((await find(roomId, 'q=nothing-like-this')).entities).toEqual([]);
  });

  it('filters by metadata, jumps to a date, and pages a search with before (newest first) or after', async () => {
    const { roomId } = await room();
    expect(seqs(await find(roomId, 'metadata=ci'))).toEqual([2, 4]);
    expect(seqs(await find(roomId, 'metadata=deploy&q=api'))).toEqual([1, 3]);
    const newest = await find(roomId, 'order=desc&limit=2');
    expect(seqs(newest)).toEqual([5, 4]);
    expect(newest.nextBefore).toBe(4);
    expect(seqs(await find(roomId, `order=desc&limit=2&before=${newest.nextBefore}`))).toEqual([3, 2]);
    const first = await find(roomId, 'metadata=deploy&limit=1');
    expect(seqs(first)).toEqual([1]);
    expect(seqs(await find(roomId, `metadata=deploy&limit=1&after=${first.nextAfter}`))).toEqual([3]);
    // Every message of this room was created just now: a date in the future finds none, one in the past all.
    expect(seqs(await find(roomId, `since=${new Date(Date.now() + 60_000).toISOString()}`))).toEqual([]);
    expect(seqs(await find(roomId, 'since=2001-01-01T00:00:00Z'))).toEqual([1, 2, 3, 4, 5]);
  });

  it('follows edits and deletions (the index is kept by triggers), and treats search syntax as text', async () => {
    const { roomId, hook } = await room();
    const path = (messageId: string) => `${new URL(hook.url).pathname}/messages/${messageId}`;
    const [fifth] = (await find(roomId, 'q=disk')).entities as (Entry & { id: string })[];
    expect((await send('PATCH', path(fifth!.id), { token: null, json: { message: 'Disk space recovered on db-1' } })).status).toBe(200);
    expect(seqs(await find(roomId, 'q=recovered'))).toEqual([5]);
    expect(seqs(await find(roomId, 'q=full'))).toEqual([]);
    expect((await send('DELETE', path(fifth!.id), { token: null })).status).toBe(200);
    expect(seqs(await find(roomId, 'q=recovered'))).toEqual([]);
    // FTS5 operators and quotes in the text are words or nothing, never a 500.
    for (const q of ['"', 'build OR', 'NEAR(build', '*', 'build AND NOT', ')))', '-build', 'build:']) {
      const res = await send('GET', `/api/v1/rooms/${roomId}/messages?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
    }
    expect(seqs(await find(roomId, `q=${encodeURIComponent('build OR')}`))).toEqual([]);
  });

  it('refuses a bad date, order or an over-long search with 400 naming the field', async () => {
    const { roomId } = await room();
    expectError(await send('GET', `/api/v1/rooms/${roomId}/messages?since=yesterday`), 400, 'invalid.value', 'since');
    expectError(await send('GET', `/api/v1/rooms/${roomId}/messages?order=up`), 400, 'invalid.value', 'order');
    expectError(await send('GET', `/api/v1/rooms/${roomId}/messages?q=${'x'.repeat(201)}`), 400, 'invalid.value', 'q');
  });
});
