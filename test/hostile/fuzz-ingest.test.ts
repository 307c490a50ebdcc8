/**
 * Fuzzing ingest. Each case gets its own UTC day (in 2950–2999, which no other test uses) and its own
 * conversation-id prefix, and posts a generated sequence of bodies: valid conversation-detail records
 * (odd Unicode ids and dimension values, every allowed date form, boundary metric values, records
 * re-sent so duplicates occur), the same with one fault anywhere, and the hostile bodies every route
 * gets. Each answer must be what a validator written from the README predicts (counts included);
 * afterwards the day's aggregates, read through both rollup tables and the raw rows, must equal the
 * test-only reference aggregator run over exactly the accepted records, and D1 must hold a row for
 * exactly the accepted conversations that carried metrics.
 */
import { env } from 'cloudflare:test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OBSERVED_METRIC_NAMES } from '../../src/analytics/catalog';

const OBSERVED = new Set(OBSERVED_METRIC_NAMES);
import {
  canonicalize,
  observationsFromRecords,
  referenceAggregate,
  type AggregateQuery,
  type ConversationRecord,
} from '../support/reference-aggregator';
import {
  acceptedContentType,
  anyJson,
  brokenJsonText,
  clip,
  deepNesting,
  invalidUtf8Body,
  mutateDeep,
  refusedContentType,
} from './support/arbitraries';
import {
  describe as describeBody,
  isPlainObject,
  jsonBody,
  makeBody,
  parsed,
  sendBody,
  transportVerdict,
  type Body,
  type Verdict,
} from './support/bodies';
import { call } from './support/client';
import { expectWellFormedAnswer, fuzz, fuzzTimeout } from './support/fuzz';
import { DAY } from './support/instants';
import { Check, checkRecord, materialize, recordArb, wrongFor, type CaseContext } from './support/records';

const INGEST = '/api/v2/analytics/conversations/details/ingest';
const QUERY = '/api/v2/analytics/conversations/aggregates/query';
const FIRST_DAY = Date.UTC(2950, 0, 1);

let cases = 0;
function nextCase(): CaseContext {
  const n = cases++;
  return { dayStart: FIRST_DAY + n * DAY, prefix: `fz${n.toString(36)}-` };
}

type Template = { kind: 'json'; value: unknown; contentType: string | undefined } | { kind: 'raw'; body: Body };

const templateArb: fc.Arbitrary<Template> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.array(recordArb, { minLength: 1, maxLength: 4 }), acceptedContentType)
      .map(([conversations, ct]) => ({ kind: 'json' as const, value: { conversations }, contentType: ct })),
  },
  {
    weight: 8,
    arbitrary: mutateDeep(
      fc.array(recordArb, { minLength: 1, maxLength: 3 }).map((conversations) => ({ conversations })),
      wrongFor,
    ).map((value) => ({ kind: 'json' as const, value, contentType: 'application/json' })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(recordArb, { maxLength: 1 }), refusedContentType)
      .map(([conversations, ct]) => ({ kind: 'json' as const, value: { conversations }, contentType: ct })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<unknown>({ conversations: [] }, { conversations: {} }, { conversations: null }, {}, [], null, 'conversations')
      .map((value) => ({ kind: 'json' as const, value, contentType: 'application/json' })),
  },
  { weight: 1, arbitrary: anyJson.map((value) => ({ kind: 'json' as const, value, contentType: 'application/json' })) },
  {
    weight: 1,
    arbitrary: deepNesting.map((raw) => ({ kind: 'json' as const, value: { conversations: raw }, contentType: 'application/json' })),
  },
  {
    weight: 1,
    arbitrary: brokenJsonText.map((t) => ({
      kind: 'raw' as const,
      body: makeBody(new TextEncoder().encode(t), 'application/json', 'broken json'),
    })),
  },
  {
    weight: 1,
    arbitrary: invalidUtf8Body.map((bytes) => ({ kind: 'raw' as const, body: makeBody(bytes, 'application/json', 'invalid utf-8') })),
  },
);

interface Case {
  ctx: CaseContext;
  bodies: Body[];
}

const caseArb: fc.Arbitrary<Case> = fc.array(templateArb, { minLength: 2, maxLength: 12 }).map((templates) => {
  const ctx = nextCase();
  const bodies = templates.map((t) => (t.kind === 'raw' ? t.body : jsonBody(materialize(t.value, ctx), t.contentType, 'ingest')));
  const c = { ctx, bodies };
  Object.defineProperty(c, fc.toStringMethod, {
    value: () => `case ${ctx.prefix} day ${new Date(ctx.dayStart).toISOString().slice(0, 10)}: ${bodies.map(describeBody).join(' | ')}`,
    enumerable: false,
  });
  return c;
});

function ingestVerdict(body: Body): Verdict | { ok: ConversationRecord[] } {
  const t = transportVerdict(body, 5 * 1024 * 1024);
  if (t) return t;
  const v = parsed(body);
  if (isPlainObject(v) && Array.isArray(v.conversations) && v.conversations.length > 1000)
    return { status: 413, codes: ['payload.too.large'] };
  const c = new Check();
  const root = c.obj(v);
  const records = c.list(root.conversations, Infinity, (r) => checkRecord(c, r));
  if (c.issues.size > 0 || !records) return { status: 400, codes: [...c.issues] };
  return { ok: records };
}

// -----------------------------------------------------------------------------------------------
// The property
// -----------------------------------------------------------------------------------------------

const METRICS = [...OBSERVED_METRIC_NAMES];

function queriesFor(day: string): { query: AggregateQuery; source: RegExp }[] {
  return [
    { query: { interval: day, granularity: 'PT15M', metrics: METRICS }, source: /^rollup:agg_media@/ },
    { query: { interval: day, granularity: 'PT1H', groupBy: ['queueId'], metrics: METRICS }, source: /^rollup:agg_queue@/ },
    { query: { interval: day, groupBy: ['userId', 'queueId', 'direction'], metrics: METRICS }, source: /^rollup:agg_user@/ },
    { query: { interval: day, groupBy: ['userId'] }, source: /^rollup:agg_user@/ },
    { query: { interval: day, groupBy: ['conversationId', 'wrapUpCode', 'sessionId'], metrics: METRICS }, source: /^raw$/ },
    {
      query: {
        interval: day,
        groupBy: ['ani', 'participantName'],
        metrics: METRICS,
        filter: {
          type: 'or',
          predicates: [
            { dimension: 'queueId', value: 'q\u0000' },
            { dimension: 'divisionId', operator: 'exists' },
          ],
          clauses: [
            {
              type: 'and',
              predicates: [
                { dimension: 'purpose', value: 'agent' },
                { dimension: 'disconnectType', operator: 'notExists' },
              ],
            },
          ],
        },
      },
      source: /^raw$/,
    },
  ];
}

describe('fuzzing ingest', { timeout: fuzzTimeout(300_000) }, () => {
  it('answers every generated ingest as the README says and stores exactly the observations of the accepted records', async () => {
    await fuzz(
      'ingest',
      caseArb,
      async ({ ctx, bodies }) => {
        const accepted: ConversationRecord[] = [];
        for (const body of bodies) {
          const what = `POST ingest ${describeBody(body)}`;
          const res = await sendBody('POST', INGEST, body);
          expectWellFormedAnswer(res, what);
          const verdict = ingestVerdict(body);
          const say = `${what} → ${res.status} ${clip(JSON.stringify(res.body) ?? '', 400)}`;
          if (!('ok' in verdict)) {
            expect(res.status, say).toBe(verdict.status);
            expect(verdict.codes, say).toContain(res.body.code);
            continue;
          }
          const before = observationsFromRecords(accepted).length;
          const after = observationsFromRecords([...accepted, ...verdict.ok]).length;
          const names = verdict.ok.flatMap((r) =>
            r.participants.flatMap((p) => p.sessions.flatMap((s) => (s.metrics ?? []).map((m) => m.name))),
          );
          const metricCount = names.filter((n) => OBSERVED.has(n)).length;
          const counts = new Map<string, number>();
          for (const n of names.filter((n) => !OBSERVED.has(n)).sort()) counts.set(n, (counts.get(n) ?? 0) + 1);
          const skipped = Object.fromEntries(counts); // not `obj[n] =`: a metric may be named __proto__
          // Conversations none of whose records names a catalogue metric, in the order they first appear.
          const observedIn = new Set(
            verdict.ok
              .filter((r) => r.participants.some((p) => p.sessions.some((s) => (s.metrics ?? []).some((m) => OBSERVED.has(m.name)))))
              .map((r) => r.conversationId),
          );
          const empty = [...new Set(verdict.ok.map((r) => r.conversationId))].filter((id) => !observedIn.has(id));
          expect(res.status, say).toBe(200);
          expect(res.body, say).toEqual({
            conversations: new Set(verdict.ok.map((r) => r.conversationId)).size,
            observations: after - before,
            duplicates: metricCount - (after - before),
            skippedMetrics: skipped,
            withoutObservations: { count: empty.length, conversationIds: empty.slice(0, 100) },
          });
          accepted.push(...verdict.ok);
        }

        const day = `${new Date(ctx.dayStart).toISOString()}/${new Date(ctx.dayStart + DAY).toISOString()}`;
        for (const { query, source } of queriesFor(day)) {
          const res = await call('POST', QUERY, { json: query });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(res.headers.get('Switchboard-Query-Source')).toMatch(source);
          expect(canonicalize(res.body, METRICS), JSON.stringify(query)).toEqual(
            canonicalize(referenceAggregate(accepted, query), METRICS),
          );
        }

        // D1: one row per accepted conversation of this case that carried a metric, and no other.
        const withMetrics = new Set(
          accepted
            .filter((r) => r.participants.some((p) => p.sessions.some((s) => (s.metrics ?? []).some((m) => OBSERVED.has(m.name)))))
            .map((r) => r.conversationId),
        );
        const rows = await env.DB.prepare('SELECT id FROM conversations WHERE substr(id, 1, ?1) = ?2')
          .bind(ctx.prefix.length, ctx.prefix)
          .all<{ id: string }>();
        expect(new Set(rows.results.map((r) => r.id))).toEqual(new Set([...withMetrics].filter((id) => id.startsWith(ctx.prefix))));
      },
      { numRuns: 100, timeLimitMs: 45_000 },
    );
  });
});
