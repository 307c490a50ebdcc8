import { Hono } from 'hono';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson } from '../../http/validate';
import { getServiceLevelSettings, putServiceLevelSettings, serviceLevelSettingsSchema } from './service-level.settings';

const PATH = '/api/v2/analytics/settings/servicelevel';

export const settingsRoutes = new Hono<AppEnv>()
  .get(PATH, requirePermission('analytics:conversationAggregate:view'), async (c) => {
    return c.json(await getServiceLevelSettings(c.var.db));
  })
  .put(PATH, requirePermission('analytics:settings:edit'), jsonBody(1024 * 1024), validJson(serviceLevelSettingsSchema), async (c) => {
    return c.json(await putServiceLevelSettings(c.var.db, c.req.valid('json')));
  });
