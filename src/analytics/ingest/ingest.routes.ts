import { Hono } from 'hono';
import { validator } from 'hono/validator';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { issuesToError } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { ingestRecords } from './observations.store';
import { fastIngestBody } from './record.fast';
import { ingestBodySchema } from './record.schema';

/** A valid body takes the fast path; anything else is judged (and its error worded) by the zod schema. */
const validIngestBody = validator('json', (value) => {
  const fast = fastIngestBody(value);
  if (fast) return fast;
  const parsed = ingestBodySchema.safeParse(value);
  if (!parsed.success) throw issuesToError(parsed.error.issues);
  return parsed.data;
});

export const ingestRoutes = new Hono<AppEnv>().post(
  '/api/v2/analytics/conversations/details/ingest',
  requirePermission('analytics:conversation:ingest'),
  jsonBody(ANALYTICS_LIMITS.ingestBodyBytes),
  validIngestBody,
  async (c) => {
    const { conversations } = c.req.valid('json');
    return c.json(await ingestRecords(c.env.DB, conversations));
  },
);
