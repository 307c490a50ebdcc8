import { env } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIMENSION_INDEX, DIMENSIONS, METRIC_INDEX, METRIC_NAMES } from '../../src/analytics/catalog';
import { DomainError } from '../../src/errors';
import { ANALYTICS_LIMITS } from '../../src/analytics/limits';
import { Aggregation } from '../../src/analytics/query/aggregate';
import { compileFilter } from '../../src/analytics/query/filter';
import { prepareQuery } from '../../src/analytics/query/prepare';
import { aggregateQuerySchema } from '../../src/analytics/query/query.schema';
import { readInto } from '../../src/analytics/query/query.store';
import { answerJson } from '../../src/analytics/query/results-json';
import { DEFAULT_SERVICE_LEVEL } from '../../src/analytics/settings/service-level.settings';
import { simulateConversations } from '../../scripts/simulator';
import { ADMIN_TOKEN, BASE, expectError } from '../helpers';
import { observationsFromRecords, type ConversationRecord } from '../support/reference-aggregator';
import { ingestOk, QUERY, query, queryOk } from './analytics-api';
import { CONVERSATION_ID_SQL } from '../../src/analytics/ingest/conversation-key';

/**
 * Issue 22 item 3: one view-only token could make the Worker build a 158 MB answer for seconds while
 * every other request waited. Answers are bounded in stats entries and bytes while they are computed,
 * raw reads in conversations, and long loops pause so that other requests are served meanwhile.
 */
const END = Date.parse('2015-05-20T00:00:00.000Z');
const DAY = 86_400_000;
const DAYS = 4;
const iso = (ms: number) => new Date(ms).toISOString();
const WHOLE = `${iso(END - DAYS * DAY)}/${iso(END)}`;
/** Where the bulk copies for the raw-scan bound lie: a year later, apart from everything else. */
const BULK_SHIFT = 365 * DAY;

let records: ConversationRecord[] = [];
let observationCount = 0;

beforeAll(async () => {
  records = [...simulateConversations({ days: DAYS, conversations: 3_000, seed: 7, end: new Date(END) })] as ConversationRecord[];
  for (let i = 0; i < records.length; i += 1_000) await ingestOk(records.slice(i, i + 1_000));
  observationCount = observationsFromRecords(records).length;
});

/**
 * Raw rows only (no rollups): `copies` copies of every stored conversation, each under a new id
 * (the encoding names its own conversation by the row's id) and moved by `shift` ms.
 */
async function copyConversations(copies: number, shift: number, tag: string): Promise<number> {
  const res = await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
     INSERT INTO conversations (id, first_emit, last_emit, span_class, version, data)
     SELECT c.cid || ?3 || n.i, c.first_emit + ?2, c.last_emit + ?2, c.span_class, 1, c.data
     FROM (SELECT ${CONVERSATION_ID_SQL} AS cid, * FROM conversations) c CROSS JOIN n WHERE c.cid NOT LIKE '%-copy-%' AND c.cid NOT LIKE '%-bulk-%'`,
  )
    .bind(copies, shift, tag)
    .run();
  return res.meta.changes;
}

describe('answers are bounded in stats entries', () => {
  it('a raw query that would hold more than maxAnswerCells entries answers 413 naming the bound', async () => {
    // Each copy is a new conversationId group: grouped by it at PT1M, nearly every observation is an entry of its own.
    const copies = Math.ceil((1.5 * ANALYTICS_LIMITS.maxAnswerCells) / observationCount);
    expect(copies * records.length).toBeLessThan(ANALYTICS_LIMITS.maxGroups);
    await copyConversations(copies, 0, '-copy-');
    const res = await query({ interval: WHOLE, granularity: 'PT1M', groupBy: ['conversationId'] });
    expectError(res, 413, 'payload.too.large');
    expect(res.body.message).toContain(`more than ${ANALYTICS_LIMITS.maxAnswerCells.toLocaleString('en-US')} stats entries`);
    expect(res.body.message).toMatch(/Narrow the query: a shorter interval, a coarser granularity, fewer groupBy dimensions/);
  });

  it('the same data in coarser buckets and fewer groups still answers', async () => {
    const res = await queryOk({ interval: WHOLE, granularity: 'P1D', groupBy: ['queueId'], metrics: ['nOffered', 'tHandle'] });
    expect(res.results.length).toBeGreaterThan(0);
  });
});

describe('answers are bounded in bytes', () => {
  /** A small aggregation's answer, with and without a byte bound. */
  async function answer(maxBytes?: number) {
    const aggregation = new Aggregation({ groupBy: ['queueId'], filter: compileFilter(undefined), maxGroups: 100, maxCells: 100 });
    const dims = (queue: string) => {
      const values: (string | undefined)[] = new Array(DIMENSIONS.length).fill(undefined);
      values[DIMENSION_INDEX.mediaType] = 'voice';
      values[DIMENSION_INDEX.queueId] = queue;
      return values;
    };
    const tHandle = METRIC_INDEX.get('tHandle')!;
    aggregation.add(0, tHandle, dims('q-"one"'), 1, 5, 5, 5, 5);
    aggregation.add(1, tHandle, dims('q-two 😀'), 2, 30, 10, 20);
    return new TextDecoder().decode(await answerJson(aggregation, DEFAULT_SERVICE_LEVEL, (b) => `bucket ${b}`, maxBytes));
  }

  it('an answer exactly at maxBytes is written; one byte less is refused with 413 as it is written', async () => {
    const text = await answer();
    const length = new TextEncoder().encode(JSON.stringify(JSON.parse(text))).length;
    expect(await answer(length)).toBe(text);
    const refused = await answer(length - 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).kind).toBe('too-large');
    expect((refused as DomainError).message).toContain(`larger than ${(length - 1).toLocaleString('en-US')} bytes`);
  });
});

describe('raw reads are bounded in conversations', () => {
  it('a raw query reading more than maxRawConversations answers 413; a narrower one answers', async () => {
    const copies = Math.ceil((ANALYTICS_LIMITS.maxRawConversations + 1) / records.length);
    expect(await copyConversations(copies, BULK_SHIFT, '-bulk-')).toBe(copies * records.length);
    const bulk = `${iso(END + BULK_SHIFT - DAYS * DAY)}/${iso(END + BULK_SHIFT)}`;
    // No rollup or projection keeps wrapUpCode with userId: the raw rows are read.
    const res = await query({ interval: bulk, groupBy: ['wrapUpCode', 'userId'], metrics: ['tHandle'] });
    expectError(res, 413, 'payload.too.large');
    expect(res.body.message).toContain(`more than ${ANALYTICS_LIMITS.maxRawConversations.toLocaleString('en-US')} conversations`);
    expect(res.body.message).toContain('Narrow the query');

    const hour = `${iso(END + BULK_SHIFT - DAY)}/${iso(END + BULK_SHIFT - DAY + 3_600_000)}`;
    const narrow = await queryOk({ interval: hour, groupBy: ['wrapUpCode', 'userId'], metrics: ['tHandle'] });
    expect(narrow.source).toBe('raw');
    expect(narrow.results.length).toBeGreaterThan(0);
  });
});

describe('raw reads are bounded in bytes', () => {
  /** Where the large rows lie: two years later, apart from the copies above. */
  const FAT_SHIFT = 2 * BULK_SHIFT;
  const fatDay = `${iso(END + FAT_SHIFT - DAY)}/${iso(END + FAT_SHIFT)}`;

  it('a raw query over more encoded bytes than maxRawBytes answers 413 before decoding any of them', async () => {
    const rowBytes = 1024 * 1024;
    const rows = Math.floor(ANALYTICS_LIMITS.maxRawBytes / rowBytes) + 1;
    // Few conversations, each far larger than any ingest writes; the blob is no valid encoding, so
    // reading a single row would answer 500, not 413: the refusal comes from the estimate alone.
    const one = await env.DB.prepare('SELECT first_emit, last_emit, span_class FROM conversations LIMIT 1').first<{
      first_emit: number;
      last_emit: number;
      span_class: number;
    }>();
    const dayStart = END + FAT_SHIFT - DAY;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO conversations (id, first_emit, last_emit, span_class, version, data)
       SELECT 'fat-' || i, ?2, ?3, ?4, 1, zeroblob(?5) FROM n`,
    )
      .bind(rows, dayStart + 1_000, dayStart + 1_000 + (one!.last_emit - one!.first_emit), one!.span_class, rowBytes)
      .run();
    expect(rows).toBeLessThan(ANALYTICS_LIMITS.maxRawConversations);

    const res = await query({ interval: fatDay, granularity: 'P1D', groupBy: ['wrapUpCode', 'userId'], metrics: ['tHandle'] });
    expectError(res, 413, 'payload.too.large');
    expect(res.body).toMatchObject({
      status: 413,
      code: 'payload.too.large',
      message:
        'The query would read more than 67,108,864 bytes of raw observations (conversations carrying many observations each; ' +
        'they are read when the rollups cannot answer). Narrow the query: a shorter interval, a coarser granularity, fewer ' +
        'groupBy dimensions or metrics, or a filter. Or submit it as an asynchronous aggregate job ' +
        '(POST /api/v2/analytics/conversations/aggregates/jobs), which answers in pages.',
      errors: [],
    });
    expect(ANALYTICS_LIMITS.maxRawBytes).toBe(64 * 1024 * 1024);
    // The rollups never held these rows: the same day from them answers, with nothing.
    expect((await queryOk({ interval: fatDay, granularity: 'P1D', groupBy: ['queueId'], metrics: ['tHandle'] })).results).toEqual([]);
    await env.DB.prepare(`DELETE FROM conversations WHERE id LIKE 'fat-%'`).run();
  });

  it('pages cut by bytes read every conversation once: the answer equals the one read in whole pages', async () => {
    // Six hours: ~1,000 conversations with the copies above, one or two a page.
    const interval = `${iso(END - DAY)}/${iso(END - DAY + 6 * 3_600_000)}`;
    const body = aggregateQuerySchema.parse({ interval, granularity: 'PT1H', groupBy: ['wrapUpCode', 'userId'] });
    const answer = async (rawPageBytes?: number) => {
      const { spec, read, plan } = prepareQuery(body);
      const aggregation = new Aggregation(spec);
      const result = await readInto(env.DB, { ...read, ...(rawPageBytes ? { rawPageBytes } : {}) }, aggregation);
      const intervalOf = (b: number) => `${plan.boundaries[b]}/${plan.boundaries[b + 1]}`;
      return { result, text: new TextDecoder().decode(await answerJson(aggregation, DEFAULT_SERVICE_LEVEL, intervalOf)) };
    };
    const whole = await answer();
    // About two conversations a page (each ~600 bytes), and a row larger than the budget alone.
    for (const pageBytes of [1_500, 1]) {
      const cut = await answer(pageBytes);
      expect(cut.result.conversations).toBe(whole.result.conversations);
      expect(cut.result.bytes).toBe(whole.result.bytes);
      expect(cut.text).toBe(whole.text);
    }
    expect(whole.result.conversations).toBeGreaterThan(100);
  });
});

describe('a large query does not hold other requests', () => {
  const post = (body: unknown) =>
    exports.default.fetch(
      new Request(BASE + QUERY, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );

  it('a request sent while a large query adds and writes its cells is answered before it', async () => {
    const order: string[] = [];
    // From a rollup: one D1 statement, then thousands of cells added and written, no I/O in between.
    const metrics = METRIC_NAMES.filter((m) => m !== 'oServiceLevel');
    const large = post({ interval: WHOLE, granularity: 'PT15M', groupBy: ['queueId', 'direction'], metrics }).then(async (res) => {
      const text = await res.text();
      order.push('large');
      return { status: res.status, text, source: res.headers.get('Switchboard-Query-Source') };
    });
    // D1 answers in the order asked: once these come back, the large query's statement has been
    // answered too, and its cells are being added (or, without pauses, the whole answer is done).
    for (let i = 0; i < 3; i++) await env.DB.prepare('SELECT 1').run();
    const cheap = post({ interval: 'not an interval' }).then(async (res) => {
      await res.text();
      order.push('cheap');
      return res.status;
    });
    const [big, small] = await Promise.all([large, cheap]);
    expect(big.status).toBe(200);
    expect(big.source).toBe('rollup:agg_queue@15');
    expect(JSON.parse(big.text).results.length).toBeGreaterThan(0);
    expect(small).toBe(400);
    expect(order).toEqual(['cheap', 'large']);
  });
});

describe('groups per observation (multi-valued dimensions)', () => {
  const HOUR = '2003-09-09T10:00:00.000Z/2003-09-09T11:00:00.000Z';
  beforeAll(async () => {
    // 11 divisions × 10 requested skills: 110 groups for its observation when grouped by both.
    await ingestOk([
      {
        conversationId: 'fan-out',
        conversationStart: '2003-09-09T10:00:00.000Z',
        divisionIds: Array.from({ length: 11 }, (_, i) => `d${i}`),
        participants: [
          {
            participantId: 'p',
            purpose: 'acd',
            sessions: [
              {
                sessionId: 's',
                mediaType: 'voice',
                segments: [
                  {
                    segmentStart: '2003-09-09T10:00:00.000Z',
                    queueId: 'q',
                    requestedRoutingSkillIds: Array.from({ length: 10 }, (_, i) => `s${i}`),
                  },
                ],
                metrics: [{ name: 'nOffered', value: 1, emitDate: '2003-09-09T10:00:00.000Z' }],
              },
            ],
          },
        ],
      },
    ]);
  });

  it(`answers up to ${ANALYTICS_LIMITS.maxGroupsPerObservation} groups for one observation, 413 beyond, and flattened always`, async () => {
    expect((await queryOk({ interval: HOUR, groupBy: ['divisionId'], metrics: ['nOffered'] })).results).toHaveLength(11);
    expect((await queryOk({ interval: HOUR, groupBy: ['requestedRoutingSkillId'], metrics: ['nOffered'] })).results).toHaveLength(10);
    const both = await query({ interval: HOUR, groupBy: ['divisionId', 'requestedRoutingSkillId'], metrics: ['nOffered'] });
    expectError(both, 413, 'payload.too.large');
    expect(both.body.message).toContain('flattenMultivaluedDimensions');
    const flat = await queryOk({
      interval: HOUR,
      groupBy: ['divisionId', 'requestedRoutingSkillId'],
      metrics: ['nOffered'],
      flattenMultivaluedDimensions: true,
    });
    expect(flat.results).toHaveLength(1);
  });
});
