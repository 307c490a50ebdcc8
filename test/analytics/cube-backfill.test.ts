import { createScheduledController, env } from 'cloudflare:test';
import { describe, expect, it, vi } from 'vitest';
import { backfillCube, EMPTYING_DELETES_SQL } from '../../src/analytics/ingest/cube-backfill';
import { CUBE_GENERATION } from '../../src/analytics/rollups';
import worker from '../../src/index';
import { simulateConversations } from '../../scripts/simulator';
import { send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
} from '../support/reference-aggregator';
import { ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';

/**
 * The dimension cube's backfill (src/analytics/ingest/cube-backfill.ts): a store marked
 * `cube:incomplete` by migration 0016 gets its conversations added to the cube, while ingest goes on
 * (new conversations, and new observations of conversations already added or still waiting), and then
 * answers cube queries from the cube again, as the reference aggregator does over every record.
 */
const END = Date.parse('2013-06-10T00:00:00.000Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const interval = `${new Date(END - 3 * DAY).toISOString()}/${new Date(END).toISOString()}`;
const QUERIES: AggregateQuery[] = [
  { interval, granularity: 'P1D', groupBy: ['wrapUpCode'], metrics: ['tHandle', 'tTalk', 'nOffered', 'tAcw'] },
  { interval, granularity: 'PT1H', groupBy: ['mediaType', 'teamId'], metrics: ['tHandle', 'nConnected'] },
  { interval, granularity: 'P1D', groupBy: ['divisionId'], flattenMultivaluedDimensions: true, metrics: ['nOffered', 'tAnswered'] },
  {
    interval,
    granularity: 'P1D',
    groupBy: ['mediaType'],
    filter: { type: 'and', predicates: [{ dimension: 'requestedRoutingSkillId', operator: 'notExists' }] },
    metrics: ['nOffered', 'tWait'],
  },
  // Agent quarter hours, kept with the cube since migration 0018: packed, agg_user_more's and agg_queue's metrics.
  { interval, granularity: 'PT15M', groupBy: ['userId'], metrics: ['tHandle', 'tTalk', 'tMonitoring', 'nConversations', 'nOffered'] },
  // Declared projections, kept with the cube since migration 0019.
  { interval, granularity: 'PT1H', groupBy: ['requestedRoutingSkillId', 'teamId'], metrics: ['nOffered', 'tAnswered', 'tHandle'] },
  { interval, granularity: 'P1D', groupBy: ['queueId', 'wrapUpCode'], metrics: ['tHandle', 'tAcw'] },
] as AggregateQuery[];
const FROM_CUBE = /^rollup:(agg_dim@(1440|60)|agg_user@15|agg_proj@(1440|60))$/;
const RAW = 'raw (the dimension cube lacks earlier conversations)';

/** The record without its last participant: its observations arrive later, with the whole record. */
function withoutLastParticipant(record: ConversationRecord): ConversationRecord {
  return { ...record, participants: record.participants.slice(0, -1) };
}

/**
 * A marked store as migration 0019 leaves one: rows from before migration 0017 (in_cube NULL) and rows of
 * earlier generations of the cube (1: no quarter hours per agent; 2: no projections).
 */
async function markedAsBeforeTheCube(): Promise<void> {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0019_'))!.queries.filter((q) => q.includes('`meta`'));
  // What the cube holds stays: cells of ingests since 0016, which the backfill must not count twice.
  await env.DB.batch([
    env.DB.prepare('UPDATE conversations SET in_cube = CASE rowid % 3 WHEN 1 THEN 1 WHEN 2 THEN 2 END'),
    ...migration.map((q) => env.DB.prepare(q)),
  ]);
}

/** 200 simulated conversations ingested into emptied tables, then the store marked as before the cube. */
async function storedThenMarked(seed: number): Promise<ConversationRecord[]> {
  const records = [...simulateConversations({ days: 3, conversations: 200, seed, end: new Date(END - HOUR) })] as ConversationRecord[];
  await emptied();
  await ingestOk(records);
  await markedAsBeforeTheCube();
  return records;
}

/** The analytics tables emptied (the tests of this file share one database). */
async function emptied(): Promise<void> {
  const tables = ['conversations', 'agg_dim', 'agg_mask', 'agg_proj', 'agg_media', 'agg_queue', 'agg_user', 'agg_user_more'];
  await env.DB.batch(tables.map((t) => env.DB.prepare(`DELETE FROM ${t}`)));
}

async function metaKeys(): Promise<string[]> {
  const { results } = await env.DB.prepare(`SELECT key FROM meta WHERE key LIKE 'cube:%' ORDER BY key`).all<{ key: string }>();
  return results.map((r) => r.key);
}

async function expectAnswers(records: ConversationRecord[], source: RegExp | string): Promise<void> {
  const settings = (await send('GET', SERVICE_LEVEL)).body;
  const observations = observationsFromRecords(records);
  for (const query of QUERIES) {
    const real = await queryOk(query);
    const label = JSON.stringify(query);
    if (typeof source === 'string') expect(real.source, label).toBe(source);
    else expect(real.source, label).toMatch(source);
    const expected = aggregateObservations(observations, query, settings);
    expect(expected.results.length, label).toBeGreaterThan(0);
    const order = query.metrics!;
    expect(canonicalize({ results: real.results }, order, query), label).toEqual(canonicalize(expected, order, query));
  }
}

describe('the dimension cube of a store from before it', () => {
  it('has one generation per migration that marks it (a mark without a new generation is refused: see below)', () => {
    // The backfill re-adds only rows of earlier generations (in_cube IS NOT CUBE_GENERATION) after emptying.
    const marking = env.TEST_MIGRATIONS.filter((m) => m.queries.some((q) => q.includes("'cube:incomplete', 1")));
    expect(marking.map((m) => m.name.slice(0, 4))).toEqual(['0016', '0018', '0019']);
    expect(marking.length).toBe(CUBE_GENERATION);
  });

  it('is emptied and filled by the backfill while ingest goes on, then answers from the cube as the reference does', async () => {
    const records = [
      ...simulateConversations({ days: 3, conversations: 600, seed: 21, end: new Date(END - HOUR) }),
    ] as ConversationRecord[];
    const early = records.slice(0, 300);
    const late = records.slice(300);
    // Half of the early conversations are stored without their last participant for now.
    const partial = early.map((r, i) => (i % 2 === 0 && r.participants.length > 1 ? withoutLastParticipant(r) : r));
    await ingestOk(partial);
    await markedAsBeforeTheCube();
    expect(await metaKeys()).toEqual(['cube:incomplete']);
    await expectAnswers(partial, RAW);

    const db = { name: 'DB', d1: env.DB };
    const step = () => backfillCube(db, Date.now(), 40);
    // A run with no time left still takes one step: here, one chunk of the cube's rows deleted.
    const first = (await step())!;
    expect(first.phase).toBe('emptying');
    expect(first.rowsDeleted).toBe(5_000);
    // The check that no conversation holds the current generation (a full read of them) is made once, not per run.
    expect(await metaKeys()).toEqual(['cube:checked', 'cube:incomplete']);
    // New conversations while the cube is emptied: left for the backfill.
    await ingestOk(late.slice(0, 100));
    let report = first;
    let runs = 1;
    while (report.phase === 'emptying') {
      report = (await step())!;
      runs++;
    }
    expect(await env.DB.prepare('SELECT count(*) AS n FROM agg_dim').first('n')).toBeGreaterThan(0);
    expect(report).toMatchObject({ phase: 'filling', conversationsAdded: 40 });
    expect(await metaKeys()).toEqual(['cube:backfill', 'cube:incomplete']);

    // While it fills: the rest of the partial conversations (some added already, most not), and new ones.
    await ingestOk(early);
    await ingestOk(late.slice(100));
    await expectAnswers([...early, ...late], RAW);
    let added = report.conversationsAdded;
    while (report.phase !== 'whole') {
      report = (await step())!;
      added += report.conversationsAdded;
      if (++runs > 100) throw new Error('the backfill does not end');
    }
    // Every conversation stored before FILLING was added once: the early 300 and the 100 sent while emptying.
    expect(added).toBe(400);
    expect(await metaKeys()).toEqual([]);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM conversations WHERE in_cube IS NOT 3').first('n')).toBe(0);
    expect(await step()).toBeUndefined();
    await expectAnswers([...early, ...late], FROM_CUBE);

    // A store that never lacked anything answers the same: ingest alone, into an emptied store.
    await emptied();
    await ingestOk([...early, ...late]);
    await expectAnswers([...early, ...late], FROM_CUBE);
  });

  it('runs from the scheduled handler, as the cron of wrangler.toml does, and leaves a whole cube alone', async () => {
    const records = await storedThenMarked(22);
    await expectAnswers(records, RAW);
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: '23 * * * *' }), env);
    expect(await metaKeys()).toEqual([]);
    await expectAnswers(records, FROM_CUBE);
    const cells = await env.DB.prepare('SELECT count(*) AS n, sum(cnt) AS c FROM agg_dim').first();
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: '23 * * * *' }), env);
    expect(await env.DB.prepare('SELECT count(*) AS n, sum(cnt) AS c FROM agg_dim').first()).toEqual(cells);
  });

  it('refuses to empty a cube marked without a new generation, and queries keep answering from the raw rows', async () => {
    const records = [
      ...simulateConversations({ days: 3, conversations: 200, seed: 24, end: new Date(END - HOUR) }),
    ] as ConversationRecord[];
    await emptied();
    await ingestOk(records);
    // Migration 0019's marking statements without the generation it raised: every row still says the current one.
    const marking = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0019_'))!.queries.filter((q) => q.includes('`meta`'));
    await env.DB.batch(marking.map((q) => env.DB.prepare(q)));
    const cubeRows = () =>
      env.DB.prepare('SELECT (SELECT count(*) FROM agg_dim) + (SELECT count(*) FROM agg_proj) AS n').first<number>('n');
    const before = await cubeRows();
    expect(before).toBeGreaterThan(0);
    const errors: unknown[][] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args));
    try {
      await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: '23 * * * *' }), env);
    } finally {
      spy.mockRestore();
    }
    expect(
      errors.some(([message, report]) => String(message).includes('CUBE_GENERATION') && (report as { phase: string }).phase === 'refused'),
    ).toBe(true);
    expect(await cubeRows()).toBe(before);
    expect(await metaKeys()).toEqual(['cube:incomplete']);
    await expectAnswers(records, RAW);
  });

  it('deletes nothing for a run that read "emptying" before an overlapping run began to fill', async () => {
    const records = await storedThenMarked(23);
    const db = { name: 'DB', d1: env.DB };
    // One run empties the cube and fills its first chunk.
    let report = (await backfillCube(db, Date.now(), 50))!;
    while (report.phase === 'emptying') report = (await backfillCube(db, Date.now(), 50))!;
    expect(report).toMatchObject({ phase: 'filling', conversationsAdded: 50 });
    const cubeRows = async () =>
      Promise.all(
        ['agg_dim', 'agg_mask', 'agg_proj', 'agg_user WHERE res = 15', 'agg_user_more WHERE res = 15'].map((t) =>
          env.DB.prepare(`SELECT count(*) AS n FROM ${t}`).first<number>('n'),
        ),
      );
    const filled = await cubeRows();
    expect(filled.every((n) => n! > 0)).toBe(true);
    // The other run, which read the phase before that, goes on with the deletes it planned: each deletes nothing.
    for (const sql of EMPTYING_DELETES_SQL) expect((await env.DB.prepare(sql).bind('cube:backfill').run()).meta.changes).toBe(0);
    expect(await cubeRows()).toEqual(filled);
    while (report.phase !== 'whole') report = (await backfillCube(db, Date.now(), 50))!;
    await expectAnswers(records, FROM_CUBE);
  });
});
