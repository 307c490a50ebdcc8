import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { simulateConversations } from '../../scripts/simulator';
import { ingestOk, queryOk } from './analytics-api';

/**
 * A database that held conversations before migration 0016 has a dimension cube lacking them. The
 * migration marks it (meta `cube:incomplete`), and queries the cube would answer read that
 * database's raw rows instead: the same answer, never the cube's partial one.
 */
const END = Date.parse('2012-03-04T00:00:00.000Z');
const DAY = 86_400_000;
const QUERY = {
  interval: `${new Date(END - 3 * DAY).toISOString()}/${new Date(END).toISOString()}`,
  granularity: 'P1D',
  groupBy: ['wrapUpCode'],
  metrics: ['tHandle', 'tTalk', 'nOffered'],
};

beforeAll(async () => {
  await ingestOk([...simulateConversations({ days: 3, conversations: 300, seed: 11, end: new Date(END) })]);
});

describe('a dimension cube that lacks earlier conversations', () => {
  it('is marked by the migration, and its queries read the raw rows, with the answer the whole cube gives', async () => {
    const whole = await queryOk(QUERY);
    expect(whole.source).toBe('rollup:agg_dim@1440');
    expect(whole.results.length).toBeGreaterThan(1);

    // The store as migration 0016 found it: conversations, an empty cube. Its last statement marks it.
    await env.DB.batch([env.DB.prepare('DELETE FROM agg_dim'), env.DB.prepare('DELETE FROM agg_mask')]);
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0016_'))!;
    const mark = migration.queries.find((q) => q.includes('cube:incomplete'))!;
    await env.DB.prepare(mark).run();
    expect(await env.DB.prepare(`SELECT value FROM meta WHERE key = 'cube:incomplete'`).first('value')).toBe(1);

    const fallback = await queryOk(QUERY);
    expect(fallback.source).toBe('raw (the dimension cube lacks earlier conversations)');
    expect(fallback.results).toEqual(whole.results);

    // Unmarked, the emptied cube would have answered with nothing.
    await env.DB.prepare(`DELETE FROM meta WHERE key = 'cube:incomplete'`).run();
    const partial = await queryOk(QUERY);
    expect(partial.source).toBe('rollup:agg_dim@1440');
    expect(partial.results).toEqual([]);
  });

  it('leaves a database that held nothing unmarked', async () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0016_'))!;
    const mark = migration.queries.find((q) => q.includes('cube:incomplete'))!;
    await env.DB.prepare('DELETE FROM conversations').run();
    await env.DB.prepare(mark).run();
    expect(await env.DB.prepare(`SELECT count(*) AS n FROM meta WHERE key = 'cube:incomplete'`).first('n')).toBe(0);
  });
});
