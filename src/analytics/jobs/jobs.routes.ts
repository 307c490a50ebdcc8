import { Hono } from 'hono';
import { z } from 'zod';
import { ApiError } from '../../http/api-error';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson, validQuery } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { planBuckets } from '../query/interval';
import { aggregateJobSchema } from '../query/query.schema';
import { jobRunner } from './job-runner';
import { wholeAnswer } from './job-units';
import {
  createJob,
  deleteJob,
  deletePages,
  getJob,
  type Job,
  purgeExpired,
  readPage,
  setState,
  UNFINISHED,
  unfinishedJobs,
} from './jobs.store';

/*
 * Asynchronous aggregate jobs, as Genesys has them (the SDK's postAnalyticsConversationsAggregatesJobs,
 * getAnalyticsConversationsAggregatesJob, getAnalyticsConversationsAggregatesJobResults,
 * deleteAnalyticsConversationsAggregatesJob): submit a query, poll its state, read the results page by
 * page. A job answers any size of result (no group limit): AggregateJobRunner answers it in units.
 */

const JOBS = '/api/v2/analytics/conversations/aggregates/jobs';
const view = requirePermission('analytics:conversationAggregate:view');
/** A job unchanged this long while unfinished has lost its runner (a restart): it is started again when looked at. */
const STALE_MS = 30_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const cursorQuery = z.strictObject({
  cursor: z
    .string()
    .regex(/^p[1-9][0-9]{0,8}$/, { error: 'cursor must be a value a previous page of results gave' })
    .optional(),
});

function jobNotFound(): ApiError {
  return ApiError.notFound('No aggregate job has this id (or it expired and was removed).');
}

async function findJob(c: { var: AppEnv['Variables']; req: { param(name: 'id'): string } }): Promise<Job> {
  const id = c.req.param('id');
  const job = UUID.test(id) ? await getJob(c.var.db, id, Date.now()) : undefined;
  if (!job) throw jobNotFound();
  return job;
}

/** Genesys' AsyncQueryStatus. */
function status(job: Job) {
  return {
    state: job.state,
    ...(job.errorMessage ? { errorMessage: job.errorMessage } : {}),
    expirationDate: new Date(job.expiresAt).toISOString(),
    submissionDate: new Date(job.submittedAt).toISOString(),
    ...(job.completedAt !== null ? { completionDate: new Date(job.completedAt).toISOString() } : {}),
  };
}

export const jobsRoutes = new Hono<AppEnv>()
  .post(JOBS, view, jsonBody(ANALYTICS_LIMITS.queryBodyBytes), validJson(aggregateJobSchema), async (c) => {
    const query = c.req.valid('json');
    const now = Date.now();
    // Validates the interval, granularity and time zone now (a 400 here, not a failed job later).
    const plan = planBuckets({ interval: query.interval, granularity: query.granularity, timeZone: query.timeZone });
    await purgeExpired(c.var.db, now);
    if ((await unfinishedJobs(c.var.db, now)) >= ANALYTICS_LIMITS.maxUnfinishedJobs) {
      throw new ApiError(
        429,
        'too.many.requests',
        `${ANALYTICS_LIMITS.maxUnfinishedJobs} aggregate jobs are still running; wait for one to finish (or cancel one) before submitting another.`,
        [],
        { 'Retry-After': '5' },
      );
    }
    const job = await createJob(c.var.db, query, wholeAnswer(plan.boundaries.length - 1), now);
    // Stored before it is started: a failure to start leaves a QUEUED job that the next look at it starts.
    await jobRunner(c.env, job.id)
      .start(job.id)
      .catch((err: unknown) => console.error('aggregate job not started', job.id, err));
    return c.json({ jobId: job.id }, 202);
  })
  .get(`${JOBS}/:id`, view, async (c) => {
    const job = await findJob(c);
    if (UNFINISHED.includes(job.state) && Date.now() - job.updatedAt > STALE_MS) {
      await jobRunner(c.env, job.id)
        .start(job.id)
        .catch((err: unknown) => console.error('aggregate job not restarted', job.id, err));
    }
    return c.json(status(job));
  })
  .get(`${JOBS}/:id/results`, view, validQuery(cursorQuery), async (c) => {
    const job = await findJob(c);
    if (job.state !== 'FULFILLED') {
      throw new ApiError(
        409,
        'conflict',
        job.state === 'EXPIRED'
          ? 'The job expired; its results are gone. Submit it again.'
          : `The job is ${job.state}; results are available once its state is FULFILLED.`,
      );
    }
    const { cursor } = c.req.valid('query');
    const page = cursor === undefined ? 0 : Number(cursor.slice(1));
    if (page >= Math.max(job.pages, 1))
      throw new ApiError(400, 'invalid.value', 'No page of this job has this cursor.', [
        { errorCode: 'invalid.value', fieldName: 'cursor' },
      ]);
    const results = job.pages === 0 ? '[]' : await readPage(c.var.db, job.id, page);
    if (results === undefined) throw jobNotFound();
    // Genesys' ConversationAsyncAggregateQueryResponse; the last page has no cursor.
    const next = page + 1 < job.pages ? `,"cursor":"p${page + 1}"` : '';
    return c.body(`{"results":${results}${next}}`, 200, { 'Content-Type': 'application/json' });
  })
  /** An unfinished job is cancelled (its state stays readable until it expires); a finished one is removed with its results. */
  .delete(`${JOBS}/:id`, view, async (c) => {
    const job = await findJob(c);
    if (await setState(c.var.db, job.id, UNFINISHED, 'CANCELLED', Date.now(), { pending: [] })) await deletePages(c.var.db, job.id);
    else await deleteJob(c.var.db, job.id);
    return c.body(null, 204);
  });
