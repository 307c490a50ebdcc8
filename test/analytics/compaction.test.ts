import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPACTION_LAG_MS, COMPACTIONS, compactedKey } from '../../src/analytics/rollups';
import { simulateConversations } from '../../scripts/simulator';
import { observationsFromRecords, type ConversationRecord } from '../support/reference-aggregator';
import { ingestOk, queryOk } from './analytics-api';

/**
 * Compaction (rollups.ts Compaction, docs/analytics-storage.md): ingest writes each coarse resolution only
 * before its watermark, and its batches add the fine rows of past periods up into it. Answers are
 * compared with the raw rows' (a conversationId filter sends a query there), which share no code with it.
 */
const END = Date.parse('2012-07-04T00:00:00.000Z');
const DAY = 86_400_000;
const START = END - 3 * DAY;
const INTERVAL = `${new Date(START).toISOString()}/${new Date(END).toISOString()}`;
const RAW = { dimension: 'conversationId', operator: 'exists' };

let records: ConversationRecord[] = [];

const newest = (rs: ConversationRecord[]) => observationsFromRecords(rs).reduce((n, o) => Math.max(n, o.time), Number.NEGATIVE_INFINITY);

async function watermarks(): Promise<Map<string, number>> {
  const rows = await env.DB.prepare(`SELECT key, value FROM meta WHERE key LIKE 'compacted:%'`).all<{ key: string; value: number }>();
  return new Map(rows.results.map((r) => [r.key, r.value]));
}

/** The query, and the same one read from the raw rows (every observation has a conversationId). */
async function rolledAndRaw(
  body: Record<string, unknown>,
): Promise<{ rolled: Awaited<ReturnType<typeof queryOk>>; raw: Awaited<ReturnType<typeof queryOk>> }> {
  const filter = body.filter as { predicates: unknown[] } | undefined;
  const rawBody = { ...body, filter: { type: 'and', predicates: [...(filter?.predicates ?? []), RAW] } };
  return { rolled: await queryOk(body), raw: await queryOk(rawBody) };
}

const QUERIES: { body: Record<string, unknown>; source: string }[] = [
  { body: { interval: INTERVAL, granularity: 'P1D', groupBy: ['queueId'] }, source: 'rollup:agg_queue@1440' },
  { body: { interval: INTERVAL, granularity: 'PT1H', groupBy: ['queueId'] }, source: 'rollup:agg_queue@60' },
  { body: { interval: INTERVAL, granularity: 'PT30M' }, source: 'rollup:agg_media@30' },
  { body: { interval: INTERVAL, granularity: 'P1D', groupBy: ['userId'] }, source: 'rollup:agg_user@1440' },
  { body: { interval: INTERVAL, granularity: 'P1D', groupBy: ['wrapUpCode'] }, source: 'rollup:agg_dim@1440' },
  {
    body: {
      interval: INTERVAL,
      granularity: 'P1D',
      groupBy: ['requestedRoutingSkillId', 'teamId'],
      metrics: ['nOffered', 'tAnswered', 'tHandle'],
    },
    source: 'rollup:agg_proj@1440',
  },
];

beforeAll(async () => {
  records = [...simulateConversations({ days: 3, conversations: 900, seed: 31, end: new Date(END) })] as ConversationRecord[];
  // In time order, as a contact centre sends them: each batch moves the watermarks.
  for (let i = 0; i < records.length; i += 300) await ingestOk(records.slice(i, i + 300));
});

describe('compaction', () => {
  it('keeps each coarse resolution only before its watermark, the newest observation less the lag in whole periods', async () => {
    const marks = await watermarks();
    const limit = newest(records) - COMPACTION_LAG_MS;
    let checked = 0;
    for (const c of COMPACTIONS) {
      for (const res of c.coarse) {
        const period = res * 60_000;
        const w = marks.get(compactedKey(c.table, res));
        expect(w, `${c.table}@${res}`).toBe(Math.floor(limit / period) * period);
        const after = await env.DB.prepare(`SELECT count(*) AS n FROM ${c.table} WHERE res = ?1 AND slot >= ?2`)
          .bind(res, w)
          .first<number>('n');
        expect(after, `${c.table}@${res} past its watermark`).toBe(0);
        const before = await env.DB.prepare(`SELECT count(*) AS n FROM ${c.table} WHERE res = ?1 AND slot < ?2`)
          .bind(res, w)
          .first<number>('n');
        expect(before, `${c.table}@${res} before its watermark`).toBeGreaterThan(0);
        // The fine resolution has rows on both sides.
        const fine = await env.DB.prepare(`SELECT count(*) AS n FROM ${c.table} WHERE res = ?1 AND slot >= ?2`)
          .bind(c.fine, w)
          .first<number>('n');
        expect(fine, `${c.table}@${c.fine} past the watermark of ${res}`).toBeGreaterThan(0);
        checked++;
      }
    }
    expect(checked).toBe(COMPACTIONS.reduce((n, c) => n + c.coarse.length, 0));
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('answers a coarse query from the rows before the watermark and the fine rows after it, as the raw rows do', async () => {
    for (const { body, source } of QUERIES) {
      const { rolled, raw } = await rolledAndRaw(body);
      expect(rolled.source).toBe(source);
      expect(raw.source).toBe('raw');
      expect(rolled.results.length).toBeGreaterThan(0);
      expect(rolled.results, source).toEqual(raw.results);
    }
  });

  it('adds observations later than the watermark into the coarse rows directly, and the answers stay exact', async () => {
    const before = await watermarks();
    const dayOne = await env.DB.prepare(`SELECT sum(cnt) AS n FROM agg_queue WHERE res = 1440 AND slot = ?1`)
      .bind(START)
      .first<number>('n');
    // Conversations of the first day, sent after the others (their ids differ: another seed).
    const late = [...simulateConversations({ days: 1, conversations: 120, seed: 32, end: new Date(START + DAY) })] as ConversationRecord[];
    const stored = await ingestOk(late);
    expect(stored.observations).toBeGreaterThan(0);
    const dayOneAfter = await env.DB.prepare(`SELECT sum(cnt) AS n FROM agg_queue WHERE res = 1440 AND slot = ?1`)
      .bind(START)
      .first<number>('n');
    expect(dayOneAfter!).toBeGreaterThan(dayOne!);
    expect(await watermarks()).toEqual(before);
    for (const { body, source } of QUERIES) {
      const { rolled, raw } = await rolledAndRaw(body);
      expect(rolled.results, source).toEqual(raw.results);
    }
  });
});
