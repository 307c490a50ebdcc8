import { Hono } from 'hono';
import type { AppEnv } from '../http/context';
import { ingestRoutes } from './ingest/ingest.routes';
import { jobsRoutes } from './jobs/jobs.routes';
import { queryRoutes } from './query/query.routes';
import { settingsRoutes } from './settings/settings.routes';

export const analyticsRoutes = new Hono<AppEnv>()
  .route('/', ingestRoutes)
  .route('/', queryRoutes)
  .route('/', jobsRoutes)
  .route('/', settingsRoutes);
