import { Hono } from 'hono';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { ingestRecords } from './observations.store';
import { ingestBodySchema } from './record.schema';

export const ingestRoutes = new Hono<AppEnv>().post(
  '/api/v2/analytics/conversations/details/ingest',
  requirePermission('analytics:conversation:ingest'),
  jsonBody(ANALYTICS_LIMITS.ingestBodyBytes),
  validJson(ingestBodySchema),
  async (c) => {
    const { conversations } = c.req.valid('json');
    return c.json(await ingestRecords(c.env.DB, conversations));
  },
);
