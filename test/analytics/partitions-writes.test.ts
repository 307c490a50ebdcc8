import { createScheduledController, env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ingestRouted } from '../../src/analytics/ingest/observations.store';
import { type ConversationRecord, parseIngestBody } from '../../src/analytics/ingest/record.schema';
import { analyticsStore, type Partition } from '../../src/analytics/partitions/partitions';
import { dropRetiredPartitions } from '../../src/analytics/partitions/retention';
import { DomainError } from '../../src/errors';
import worker from '../../src/index';
import { simulateConversations } from '../../scripts/simulator';
import { observationsFromRecords } from '../support/reference-aggregator';
import { queryOk } from './analytics-api';

/**
 * Writes across partitions (vitest.config.ts, project `partitions`): a batch per partition, each
 * atomic on its own; and retention, which drops a whole partition (P0, past the 365 days). Each test
 * file has its own storage, so these writes leave the comparisons of partitions.test.ts alone.
 */
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const store = analyticsStore(env);
const [P0, P1, P2, P3] = ['P0', 'P1', 'P2', 'P3'].map((name) => store.partitions.find((p) => p.name === name)!) as Partition[] as [
  Partition,
  Partition,
  Partition,
  Partition,
];

function simulated(days: number, conversations: number, seed: number, end: number): { raw: unknown[]; parsed: ConversationRecord[] } {
  const raw = [...simulateConversations({ days, conversations, seed, end: new Date(end) })];
  const parsed = parseIngestBody({ conversations: raw });
  if (!parsed.ok) throw new Error('simulated records are well formed');
  return { raw, parsed: parsed.conversations };
}

async function rows(d1: D1Database, table: string): Promise<number> {
  return (await d1.prepare(`SELECT count(*) AS n FROM ${table}`).first<number>('n'))!;
}

describe('atomicity is per partition', () => {
  it('a partition failing after another stored answers 503, and the same request again completes it', async () => {
    const { raw, parsed } = simulated(4, 60, 41, P2.start + 2 * DAY);
    const inP1 = parsed.filter((r) => r.conversationStart < P1.end);
    const inP2 = parsed.filter((r) => r.conversationStart >= P2.start);
    expect(inP1.length).toBeGreaterThan(0);
    expect(inP2.length).toBeGreaterThan(0);
    const failing = new Proxy(P2.d1, {
      get: (target, key) => (key === 'batch' ? () => Promise.reject(new Error('D1 is down')) : Reflect.get(target, key).bind(target)),
    });
    const first = ingestRouted([
      { database: P1, records: inP1 },
      { database: { name: 'P2', d1: failing }, records: inP2 },
    ]);
    await expect(first).rejects.toThrow(DomainError);
    await expect(first).rejects.toThrow(/bound for P2 could not be stored; those for P1 were/);
    expect(await rows(P1.d1, 'conversations')).toBe(inP1.length);
    expect(await rows(P2.d1, 'conversations')).toBe(0);

    const again = await ingestRouted([
      { database: P1, records: inP1 },
      { database: P2, records: inP2 },
    ]);
    const all = observationsFromRecords(raw as never).length;
    const inP1Observations = observationsFromRecords(raw.filter((_, i) => parsed[i]!.conversationStart < P1.end) as never).length;
    expect(again).toMatchObject({ conversations: parsed.length, duplicates: inP1Observations, observations: all - inP1Observations });
  });
});

describe('retention drops whole partitions', () => {
  it('P0, past the retention, is never read, and its rows are deleted in chunks by the scheduled handler', async () => {
    // Stored before it retired: written straight into P0, as ingest did back then.
    const oldEnd = P0.end - 50 * DAY;
    const { parsed } = simulated(2, 200, 43, oldEnd);
    const written = await ingestRouted([{ database: P0, records: parsed }]);
    expect(written.observations).toBeGreaterThan(0);
    const live = simulated(1, 20, 44, P3.start + DAY);
    await ingestRouted([{ database: P3, records: live.parsed }]);

    const old = await queryOk({ interval: `${iso(oldEnd - 2 * DAY)}/${iso(oldEnd)}`, granularity: 'P1D' });
    expect(old.results).toEqual([]);
    expect(old.source).toBe('rollup:agg_media@1440 partitions=');

    // One bounded chunk, then the budget is spent: the rest waits for the next run.
    const [partial] = await dropRetiredPartitions(env, Date.now(), { rowsPerStatement: 7, budgetMs: 0 });
    expect(partial).toEqual({ partition: 'P0', rowsDeleted: 7, empty: false });
    expect(await rows(P0.d1, 'conversations')).toBe(parsed.length - 7);

    // The Worker's own scheduled handler, as the cron of wrangler.toml runs it.
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: '23 * * * *' }), env);
    for (const table of ['conversations', 'agg_media', 'agg_queue', 'agg_user', 'agg_user_more', 'dim_values']) {
      expect(await rows(P0.d1, table), table).toBe(0);
    }
    expect(await P0.d1.prepare(`SELECT count(*) AS n FROM meta WHERE key LIKE 'span_class:%'`).first('n')).toBe(0);
    // The live partitions keep everything.
    expect(await rows(P3.d1, 'conversations')).toBe(live.parsed.length);
  });
});
