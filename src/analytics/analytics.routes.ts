import { Hono } from 'hono';
import type { AppEnv } from '../http/context';

export const analyticsRoutes = new Hono<AppEnv>();
