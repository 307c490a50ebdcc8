import { createDb, type Db } from '../../db/client';
import { DomainError } from '../../errors';
import { ANALYTICS_LIMITS } from '../limits';
import { Aggregation } from '../query/aggregate';
import { analyticsStore, type Partition, readablePartitions } from '../partitions/partitions';
import { formatInterval, planBuckets } from '../query/interval';
import { prepareQuery } from '../query/prepare';
import type { AggregateJobQuery } from '../query/query.schema';
import { readInto } from '../query/query.store';
import { answerJson } from '../query/results-json';
import { QueryGate } from '../query/query-gate';
import { QueryTooLarge } from '../query/too-large';
import { DEFAULT_SERVICE_LEVEL, getServiceLevelSettings } from '../settings/service-level.settings';
import { fitToDensity, type JobUnit, pageRanges, splitUnit } from './job-units';
import { getJob, type Job, recordUnit, setState } from './jobs.store';

/** Bounds of one unit; `cells` may be lowered by the AGGREGATE_JOB_UNIT_CELLS variable (docs/limits.md). */
export interface UnitBounds {
  cells: number;
  bytes: number;
}

export function unitBounds(env: Env): UnitBounds {
  const configured = Number((env as { AGGREGATE_JOB_UNIT_CELLS?: string }).AGGREGATE_JOB_UNIT_CELLS);
  const cells =
    Number.isSafeInteger(configured) && configured > 0
      ? Math.min(configured, ANALYTICS_LIMITS.jobUnitCells)
      : ANALYTICS_LIMITS.jobUnitCells;
  return { cells, bytes: ANALYTICS_LIMITS.jobUnitBytes };
}

/**
 * Units computed at once in one isolate, across jobs. Each job has an object of its own, but objects of
 * one class may share an isolate and its 128 MB: a unit may hold a 16 MiB rollup read or raw pages and
 * 25,000 entries, and ten unfinished jobs' units at once could add up. The others wait their turn, however
 * many (at most the unfinished jobs, and a runner started again for a job whose runner seemed lost).
 */
const unitTurns = new QueryGate(1, Number.POSITIVE_INFINITY);

/** Failures of one unit (storage, not the query) before the job fails. */
const MAX_ATTEMPTS = 3;

/**
 * Answers a job's units one after another until none is left or `deadline` passes (the caller then
 * runs it again). Each answered unit is recorded with its pages in one batch, so a job interrupted
 * anywhere (a restart) resumes at the first unit not recorded. Returns whether units remain.
 */
export async function runJob(env: Env, id: string, deadline: number, bounds = unitBounds(env)): Promise<boolean> {
  const db = createDb(env.DB);
  for (;;) {
    const now = Date.now();
    let job = await getJob(db, id, now);
    if (!job || (job.state !== 'QUEUED' && job.state !== 'PENDING')) return false;
    if (job.state === 'QUEUED') {
      if (!(await setState(db, id, ['QUEUED'], 'PENDING', now))) return false;
      job = { ...job, state: 'PENDING' };
    }
    const [unit, ...rest] = job.pending;
    if (!unit) {
      await setState(db, id, ['PENDING'], 'FULFILLED', now);
      return false;
    }
    let pages: string[];
    let entries: number;
    // Never refused: the gate keeps no bound on its waiters.
    const leave = (await unitTurns.enter())!;
    try {
      ({ pages, entries } = await answerUnit(readablePartitions(analyticsStore(env), Date.now()), db, job.query, unit, bounds).finally(
        leave,
      ));
    } catch (err) {
      if (err instanceof QueryTooLarge) {
        const parts = splitUnit(unit, err.splits, job.query.queryType !== 'groupBy', err.progress);
        if (!parts) return fail(db, job, err.message);
        await setState(db, id, ['PENDING'], 'PENDING', now, { pending: [...parts, ...rest] });
      } else if (err instanceof DomainError && err.kind !== 'unavailable') {
        return fail(db, job, err.message);
      } else {
        console.error('aggregate job unit failed', id, err);
        if (job.attempts + 1 >= MAX_ATTEMPTS)
          return fail(db, job, 'The results could not be computed (storage unavailable); submit the job again.');
        await setState(db, id, ['PENDING'], 'PENDING', now, { attempts: job.attempts + 1 });
        throw err;
      }
      if (Date.now() >= deadline) return true;
      continue;
    }
    const bytes = pages.reduce((n, p) => n + p.length, 0);
    if (job.resultBytes + bytes > ANALYTICS_LIMITS.jobResultBytes) {
      return fail(
        db,
        job,
        `The results would be larger than ${ANALYTICS_LIMITS.jobResultBytes.toLocaleString('en-US')} bytes; narrow the query (a shorter interval, fewer groupBy dimensions or metrics, or a filter).`,
      );
    }
    // The units after it, cut to the density this one had (a raw-path export: fewer units read only to be split).
    const next = unit.shares === 1 ? fitToDensity(rest, entries, unit.to - unit.from, bounds.cells) : rest;
    if (!(await recordUnit(db, job, pages, next, Date.now()))) return false;
    if (Date.now() >= deadline) return true;
  }
}

async function fail(db: Db, job: Job, message: string): Promise<false> {
  await setState(db, job.id, ['QUEUED', 'PENDING'], 'FAILED', Date.now(), { errorMessage: message, pending: [] });
  return false;
}

/** One unit's `{group, data}` entries in answer order, as the JSON texts of its result pages, and its stats entries. */
async function answerUnit(
  partitions: Partition[],
  db: Db,
  query: AggregateJobQuery,
  unit: JobUnit,
  bounds: UnitBounds,
): Promise<{ pages: string[]; entries: number }> {
  const whole = planBuckets({ interval: query.interval, granularity: query.granularity, timeZone: query.timeZone });
  const interval = formatInterval(whole.boundaries[unit.from]!, whole.boundaries[unit.to]!);
  const { plan, spec, read, needsSettings } = prepareQuery(
    query,
    {
      maxGroups: ANALYTICS_LIMITS.maxGroups,
      maxCells: bounds.cells,
      ...(unit.shares > 1 ? { partition: { count: unit.shares, index: unit.share } } : {}),
    },
    interval,
  );
  const aggregation = new Aggregation(spec);
  await readInto(partitions, read, aggregation);
  const settings = needsSettings ? await getServiceLevelSettings(db) : DEFAULT_SERVICE_LEVEL;
  // Each entry's place in the answer's bytes: pages are cut there and decoded once each, never parsed
  // again (parsing a unit's answer into objects to write it out again was most of a job's garbage).
  const spans: number[] = [];
  const intervalOf = (b: number) => formatInterval(plan.boundaries[b]!, plan.boundaries[b + 1]!);
  const bytes = await answerJson(aggregation, settings, intervalOf, bounds.bytes, spans);
  const sizes = Array.from({ length: spans.length / 2 }, (_, i) => spans[2 * i + 1]! - spans[2 * i]!);
  const decoder = new TextDecoder();
  const pages = pageRanges(sizes, query.pageSize, ANALYTICS_LIMITS.jobPageBytes).map(
    ([first, end]) => `[${decoder.decode(bytes.subarray(spans[2 * first], spans[2 * end - 1]))}]`,
  );
  return { pages, entries: aggregation.entries };
}
