import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { aggregateJobPages, aggregateJobs } from '../../db/schema';
import { ANALYTICS_LIMITS } from '../limits';
import type { AggregateJobQuery } from '../query/query.schema';
import type { JobUnit } from './job-units';

/** Genesys' job states; EXPIRED is not stored, it is read from the expiry. */
export type JobState = 'QUEUED' | 'PENDING' | 'FULFILLED' | 'FAILED' | 'CANCELLED' | 'EXPIRED';
export const UNFINISHED: JobState[] = ['QUEUED', 'PENDING'];

export interface Job {
  id: string;
  query: AggregateJobQuery;
  state: JobState;
  errorMessage: string | null;
  pending: JobUnit[];
  pages: number;
  resultBytes: number;
  attempts: number;
  submittedAt: number;
  updatedAt: number;
  completedAt: number | null;
  expiresAt: number;
}

function job(row: typeof aggregateJobs.$inferSelect, now: number): Job {
  const expired = row.expiresAt <= now;
  return {
    ...row,
    query: row.query as AggregateJobQuery,
    pending: row.pending as JobUnit[],
    state: expired ? 'EXPIRED' : (row.state as JobState),
  };
}

export async function unfinishedJobs(db: Db, now: number): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)` })
    .from(aggregateJobs)
    .where(and(inArray(aggregateJobs.state, UNFINISHED), sql`${aggregateJobs.expiresAt} > ${now}`));
  return row?.n ?? 0;
}

export async function createJob(db: Db, query: AggregateJobQuery, units: JobUnit[], now: number): Promise<Job> {
  const [row] = await db
    .insert(aggregateJobs)
    .values({
      id: crypto.randomUUID(),
      query,
      state: 'QUEUED',
      pending: units,
      submittedAt: now,
      updatedAt: now,
      expiresAt: now + ANALYTICS_LIMITS.jobTtlMs,
    })
    .returning();
  return job(row!, now);
}

export async function getJob(db: Db, id: string, now: number): Promise<Job | undefined> {
  const row = await db.query.aggregateJobs.findFirst({ where: eq(aggregateJobs.id, id) });
  return row ? job(row, now) : undefined;
}

export async function readPage(db: Db, id: string, page: number): Promise<string | undefined> {
  const row = await db.query.aggregateJobPages.findFirst({
    where: and(eq(aggregateJobPages.jobId, id), eq(aggregateJobPages.page, page)),
    columns: { results: true },
  });
  return row?.results;
}

/**
 * Records one answered unit: its pages appended, the units left, in one batch (a transaction), and
 * only while the job is still PENDING (a cancel in between wins; the caller stops). False when it was not.
 */
export async function recordUnit(db: Db, job: Job, pages: string[], pending: JobUnit[], now: number): Promise<boolean> {
  const bytes = pages.reduce((n, p) => n + p.length, 0);
  const update = db
    .update(aggregateJobs)
    .set({ pending, pages: job.pages + pages.length, resultBytes: job.resultBytes + bytes, attempts: 0, updatedAt: now })
    .where(and(eq(aggregateJobs.id, job.id), eq(aggregateJobs.state, 'PENDING'), eq(aggregateJobs.pages, job.pages)))
    .returning({ id: aggregateJobs.id });
  const inserts = pages.map((results, i) => db.insert(aggregateJobPages).values({ jobId: job.id, page: job.pages + i, results }));
  // The update first: when it matches nothing, the pages are inserted under numbers no reader sees
  // (pages counts them) and are overwritten by the next writer; so they are deleted at once instead.
  const [updated] = await db.batch([update, ...inserts]);
  if (updated.length === 0) {
    await db.delete(aggregateJobPages).where(and(eq(aggregateJobPages.jobId, job.id), sql`${aggregateJobPages.page} >= ${job.pages}`));
    return false;
  }
  return true;
}

/** Moves a job to another state (from one of `from`); false when it was in none of them. */
export async function setState(
  db: Db,
  id: string,
  from: JobState[],
  to: Exclude<JobState, 'EXPIRED'>,
  now: number,
  extra: { errorMessage?: string; pending?: JobUnit[]; attempts?: number } = {},
): Promise<boolean> {
  const finished = to === 'FULFILLED' || to === 'FAILED' || to === 'CANCELLED';
  const rows = await db
    .update(aggregateJobs)
    .set({
      state: to,
      updatedAt: now,
      ...extra,
      ...(finished ? { completedAt: now, expiresAt: now + ANALYTICS_LIMITS.jobTtlMs } : {}),
    })
    .where(and(eq(aggregateJobs.id, id), inArray(aggregateJobs.state, from)))
    .returning({ id: aggregateJobs.id });
  return rows.length > 0;
}

export async function deletePages(db: Db, id: string): Promise<void> {
  await db.delete(aggregateJobPages).where(eq(aggregateJobPages.jobId, id));
}

/** Removes a job and its results. */
export async function deleteJob(db: Db, id: string): Promise<void> {
  await db.batch([
    db.delete(aggregateJobPages).where(eq(aggregateJobPages.jobId, id)),
    db.delete(aggregateJobs).where(eq(aggregateJobs.id, id)),
  ]);
}

/** Deletes up to `limit` expired jobs and their pages (called on submission: storage never holds many). */
export async function purgeExpired(db: Db, now: number, limit = 20): Promise<void> {
  const expired = await db.select({ id: aggregateJobs.id }).from(aggregateJobs).where(lt(aggregateJobs.expiresAt, now)).limit(limit);
  if (expired.length === 0) return;
  const ids = expired.map((r) => r.id);
  await db.batch([
    db.delete(aggregateJobPages).where(inArray(aggregateJobPages.jobId, ids)),
    db.delete(aggregateJobs).where(inArray(aggregateJobs.id, ids)),
  ]);
}
