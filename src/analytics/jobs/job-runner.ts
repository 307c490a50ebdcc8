import { DurableObject } from 'cloudflare:workers';
import { runJob } from './run-job';

/** Time one alarm spends on a job's units before it hands over to the next alarm (other work runs between). */
const SLICE_MS = 5_000;

/**
 * One per aggregate job (by its id): runs the job's units from an alarm, so the work outlives the
 * request that submitted it and survives a restart (the alarm is stored; so is every answered unit,
 * in D1). An alarm that throws is retried by the runtime; runJob counts such failures.
 */
export class AggregateJobRunner extends DurableObject<Env> {
  /** Starts (or resumes) the job; idempotent. */
  async start(jobId: string): Promise<void> {
    await this.ctx.storage.put('job', jobId);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    const jobId = await this.ctx.storage.get<string>('job');
    if (jobId === undefined) return;
    if (await runJob(this.env, jobId, Date.now() + SLICE_MS)) await this.ctx.storage.setAlarm(Date.now());
    else await this.ctx.storage.deleteAll();
  }
}

export function jobRunner(env: Env, jobId: string) {
  return env.AGGREGATE_JOBS.getByName(jobId);
}
