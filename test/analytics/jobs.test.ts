import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { simulateConversations } from '../../scripts/simulator';
import { send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type AggregateResponse,
  type ConversationRecord,
} from '../support/reference-aggregator';
import { ingestOk, QUERY, SERVICE_LEVEL } from './analytics-api';
import { runJob } from '../../src/analytics/jobs/run-job';

/**
 * Asynchronous aggregate jobs (analytics/jobs) through the Worker, its D1 and the AggregateJobRunner
 * Durable Object: submitted, polled, read page by page, compared with the reference aggregator. The
 * tests' Worker answers jobs in units of at most 60 stats entries (vitest.config.ts), so every job
 * here is split, by buckets and by shares of its groups, as a large export is.
 */
const JOBS = '/api/v2/analytics/conversations/aggregates/jobs';
const END = Date.parse('2014-03-12T00:00:00.000Z');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const INTERVAL = `${iso(END - 2 * DAY)}/${iso(END)}`;

let records: ConversationRecord[] = [];
let settings: unknown;

beforeAll(async () => {
  records = [...simulateConversations({ days: 2, conversations: 400, seed: 23, end: new Date(END) })] as ConversationRecord[];
  await ingestOk(records);
  settings = (await send('GET', SERVICE_LEVEL)).body;
});

async function submit(body: unknown): Promise<string> {
  const res = await send('POST', JOBS, { json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(Object.keys(res.body)).toEqual(['jobId']);
  return res.body.jobId as string;
}

/** Polls the job's state until it is no longer QUEUED or PENDING (the runner's alarm answers it). */
async function settle(jobId: string): Promise<Record<string, string>> {
  for (let i = 0; i < 300; i++) {
    const res = await send('GET', `${JOBS}/${jobId}`);
    expect(res.status).toBe(200);
    if (res.body.state !== 'QUEUED' && res.body.state !== 'PENDING') return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${jobId} did not finish`);
}

/** Every page, following cursors; each page's results and the cursor it gave. */
async function pages(jobId: string): Promise<{ results: AggregateResponse['results']; cursor?: string }[]> {
  const out: { results: AggregateResponse['results']; cursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const res = await send('GET', `${JOBS}/${jobId}/results${cursor ? `?cursor=${cursor}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(res.body);
    cursor = res.body.cursor;
  } while (cursor !== undefined);
  return out;
}

/** A group's buckets may come in several pages (units split by time): one entry per group again. */
function merged(all: AggregateResponse['results']): AggregateResponse {
  const byGroup = new Map<string, AggregateResponse['results'][number]>();
  for (const r of all) {
    const key = JSON.stringify(Object.entries(r.group).sort());
    const seen = byGroup.get(key);
    if (seen) seen.data.push(...r.data);
    else byGroup.set(key, { group: r.group, data: [...r.data] });
  }
  return { results: [...byGroup.values()] };
}

function expected(query: AggregateQuery): AggregateResponse {
  return aggregateObservations(observationsFromRecords(records), query, settings as never);
}

describe('asynchronous aggregate jobs', () => {
  const query: AggregateQuery = {
    interval: INTERVAL,
    granularity: 'PT1H',
    groupBy: ['queueId', 'userId'],
    metrics: ['nOffered', 'tAnswered', 'tHandle', 'tTalk', 'oServiceLevel', 'nConnected'],
  };

  it('answers a query split into many units exactly, in pages of pageSize groups chained by cursors', async () => {
    const jobId = await submit({ ...query, pageSize: 7 });
    const status = await settle(jobId);
    expect(status.state).toBe('FULFILLED');
    expect(Date.parse(status.completionDate!)).toBeGreaterThanOrEqual(Date.parse(status.submissionDate!));
    expect(Date.parse(status.expirationDate!)).toBeGreaterThan(Date.parse(status.completionDate!));
    const all = await pages(jobId);
    expect(all.length).toBeGreaterThan(3);
    for (const page of all) expect(page.results.length).toBeLessThanOrEqual(7);
    expect(all.at(-1)!.cursor).toBeUndefined();
    // No (group, interval) twice across pages.
    const seen = all.flatMap((p) => p.results.flatMap((r) => r.data.map((d) => JSON.stringify([r.group, d.interval]))));
    expect(new Set(seen).size).toBe(seen.length);
    const want = expected(query);
    // Far more stats entries than one unit may hold: the job had to split.
    expect(want.results.reduce((n, r) => n + r.data.reduce((m, d) => m + d.metrics.length, 0), 0)).toBeGreaterThan(600);
    expect(canonicalize(merged(all.flatMap((p) => p.results)), query.metrics, query)).toEqual(canonicalize(want, query.metrics, query));
  });

  it('answers as the synchronous query does when that one can (every metric, one bucket: split by groups only)', async () => {
    const body = { interval: INTERVAL, groupBy: ['userId'] };
    const jobId = await submit(body);
    const st = await settle(jobId);
    expect(st.state, JSON.stringify(st)).toBe('FULFILLED');
    const job = merged((await pages(jobId)).flatMap((p) => p.results));
    const sync = await send('POST', QUERY, { json: body });
    expect(sync.status).toBe(200);
    expect(canonicalize(job)).toEqual(canonicalize(sync.body));
    expect(canonicalize(job)).toEqual(canonicalize(expected(body as AggregateQuery)));
  });

  it('answers a raw-path job (a view) exactly when its units are cut by how far their reads got', async () => {
    const views = [{ target: 'tHandle', name: 'long', function: 'rangeBound', range: { gte: 300_000 } }];
    const body = { interval: INTERVAL, granularity: 'PT1H', groupBy: ['userId'], metrics: ['tHandle', 'tTalk'], views } as AggregateQuery;
    const jobId = await submit(body);
    const st = await settle(jobId);
    expect(st.state, JSON.stringify(st)).toBe('FULFILLED');
    const want = expected(body);
    // Many times the 60 entries a unit may hold here: split several times over.
    expect(want.results.reduce((n, r) => n + r.data.reduce((m, d) => m + d.metrics.length + (d.views?.length ?? 0), 0), 0)).toBeGreaterThan(
      600,
    );
    expect(canonicalize(merged((await pages(jobId)).flatMap((p) => p.results)), body.metrics, body)).toEqual(
      canonicalize(want, body.metrics, body),
    );
  });

  it('gives one empty page when nothing matches', async () => {
    const jobId = await submit({ interval: '2001-01-01T00:00:00Z/2001-01-02T00:00:00Z', metrics: ['nOffered'] });
    expect((await settle(jobId)).state).toBe('FULFILLED');
    expect(await pages(jobId)).toEqual([{ results: [] }]);
  });

  it('fails a ranked job too large for one unit, saying why (topN ranks whole groups: it is never split)', async () => {
    const jobId = await submit({ ...query, queryType: 'topN', sortMetric: { name: 'tHandle', function: 'sum' }, limit: 5 });
    const status = await settle(jobId);
    expect(status.state).toBe('FAILED');
    expect(status.errorMessage).toMatch(/more than 60 stats entries/);
    const res = await send('GET', `${JOBS}/${jobId}/results`);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/FAILED/);
  });

  it('refuses bad bodies and cursors with specific 4xx answers, and unknown ids with 404', async () => {
    const typo = await send('POST', JOBS, { json: { ...query, pagesize: 10 } });
    expect(typo.status).toBe(400);
    expect(typo.body.details[0].fieldName).toBe('pagesize');
    const page = await send('POST', JOBS, { json: { ...query, pageSize: 0 } });
    expect(page.status).toBe(400);
    expect(page.body.details[0].fieldName).toBe('pageSize');
    const interval = await send('POST', JOBS, { json: { ...query, interval: '2014-03-12/2014-03-10' } });
    expect(interval.status).toBe(400);
    const unknown = await send('GET', `${JOBS}/00000000-0000-4000-8000-000000000000`);
    expect(unknown.status).toBe(404);
    expect((await send('GET', `${JOBS}/not-a-job`)).status).toBe(404);
    const jobId = await submit({ ...query, pageSize: 10_000 });
    await settle(jobId);
    expect((await send('GET', `${JOBS}/${jobId}/results?cursor=p99999`)).status).toBe(400);
    expect((await send('GET', `${JOBS}/${jobId}/results?cursor=zzz`)).status).toBe(400);
    expect((await send('GET', `${JOBS}/${jobId}/results?page=2`)).status).toBe(400);
  });

  it('needs the aggregate view permission', async () => {
    const res = await send('POST', JOBS, { json: query, token: 'sbt_nobody' });
    expect(res.status).toBe(401);
  });
});

describe('job lifecycle', () => {
  const now = () => Date.now();
  /** A job row as the store writes it, not handed to any runner (as after a restart that lost its alarm). */
  async function insertJob(fields: { state: string; updatedAt: number; expiresAt?: number; pending?: unknown }): Promise<string> {
    const id = crypto.randomUUID();
    const body = {
      interval: INTERVAL,
      granularity: 'P1D',
      groupBy: [],
      views: [],
      queryType: 'groupBy',
      metrics: ['nOffered'],
      pageSize: 1000,
    };
    await env.DB.prepare(
      `INSERT INTO aggregate_jobs (id, query, state, pending, submitted_at, updated_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)`,
    )
      .bind(
        id,
        JSON.stringify(body),
        fields.state,
        JSON.stringify(fields.pending ?? [{ from: 0, to: 2, shares: 1, share: 0 }]),
        fields.updatedAt,
        fields.expiresAt ?? now() + DAY,
      )
      .run();
    return id;
  }

  it('resumes a job whose runner was lost (unchanged for 30 s) when its state is read, and answers it', async () => {
    const jobId = await insertJob({ state: 'PENDING', updatedAt: now() - 60_000 });
    const status = await settle(jobId);
    expect(status.state).toBe('FULFILLED');
    const body = { interval: INTERVAL, granularity: 'P1D', metrics: ['nOffered'] };
    expect(canonicalize(merged((await pages(jobId)).flatMap((p) => p.results)), body.metrics)).toEqual(
      canonicalize(expected(body), body.metrics),
    );
  });

  it('computes one unit at a time in an isolate, across jobs (objects of one class may share an isolate)', async () => {
    // Statements that read a unit's cells (a rollup read) or raw rows, through a D1 that forwards to the real one.
    let reading = 0;
    let most = 0;
    const counted = (sql: string) => /WITH r AS MATERIALIZED|FROM conversations/.test(sql);
    const statement = (sql: string, st: D1PreparedStatement): D1PreparedStatement =>
      new Proxy(st, {
        get(target, key) {
          if (key === 'bind') return (...values: unknown[]) => statement(sql, target.bind(...values));
          if (counted(sql) && (key === 'raw' || key === 'all' || key === 'first'))
            return async (...args: unknown[]) => {
              most = Math.max(most, ++reading);
              try {
                return await (target[key] as (...a: unknown[]) => Promise<unknown>)(...args);
              } finally {
                reading--;
              }
            };
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const DB = new Proxy(env.DB, {
      get(target, key) {
        if (key === 'prepare') return (sql: string) => statement(sql, target.prepare(sql));
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const units = [
      { from: 0, to: 1, shares: 1, share: 0 },
      { from: 1, to: 2, shares: 1, share: 0 },
    ];
    const ids = await Promise.all([1, 2, 3].map(() => insertJob({ state: 'PENDING', updatedAt: now(), pending: units })));
    const done = await Promise.all(ids.map((id) => runJob({ ...env, DB }, id, now() + 60_000, { cells: 100_000, bytes: 4 * 1024 * 1024 })));
    expect(done).toEqual([false, false, false]);
    expect(most).toBe(1);
    const body = { interval: INTERVAL, granularity: 'P1D', metrics: ['nOffered'] };
    for (const id of ids) {
      expect((await send('GET', `${JOBS}/${id}`)).body.state).toBe('FULFILLED');
      expect(canonicalize(merged((await pages(id)).flatMap((p) => p.results)), body.metrics)).toEqual(
        canonicalize(expected(body), body.metrics),
      );
    }
  });

  it('cancels an unfinished job (its state stays readable), and removes a finished one with its results', async () => {
    const queued = await insertJob({ state: 'QUEUED', updatedAt: now() });
    expect((await send('DELETE', `${JOBS}/${queued}`)).status).toBe(204);
    expect((await send('GET', `${JOBS}/${queued}`)).body.state).toBe('CANCELLED');
    expect((await send('GET', `${JOBS}/${queued}/results`)).status).toBe(409);

    const done = await submit({ interval: INTERVAL, metrics: ['nOffered'] });
    expect((await settle(done)).state).toBe('FULFILLED');
    expect((await send('DELETE', `${JOBS}/${done}`)).status).toBe(204);
    expect((await send('GET', `${JOBS}/${done}`)).status).toBe(404);
    const left = await env.DB.prepare('SELECT count(*) AS n FROM aggregate_job_pages WHERE job_id = ?1').bind(done).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it('reports an expired job as EXPIRED, without results, and removes expired jobs when another is submitted', async () => {
    const old = await insertJob({ state: 'FULFILLED', updatedAt: now() - 2 * DAY, expiresAt: now() - 1 });
    expect((await send('GET', `${JOBS}/${old}`)).body.state).toBe('EXPIRED');
    const res = await send('GET', `${JOBS}/${old}/results`);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/expired/);
    await settle(await submit({ interval: INTERVAL, metrics: ['nOffered'] }));
    expect((await send('GET', `${JOBS}/${old}`)).status).toBe(404);
  });

  it('answers 429 while 10 jobs are unfinished', async () => {
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await insertJob({ state: 'QUEUED', updatedAt: now(), pending: [] }));
    const res = await send('POST', JOBS, { json: { interval: INTERVAL, metrics: ['nOffered'] } });
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('5');
    for (const id of ids) expect((await send('DELETE', `${JOBS}/${id}`)).status).toBe(204);
    await settle(await submit({ interval: INTERVAL, metrics: ['nOffered'] }));
  });
});
