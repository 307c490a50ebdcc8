import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../db/client';
import { settings } from '../../db/schema';
import { ANALYTICS_LIMITS } from '../limits';
import type { ServiceLevelSettings } from '../service-level';

const KEY = 'servicelevel';
const MAX_QUEUE_OVERRIDES = 10_000;
const MAX_MEDIA_TYPES = 20;

/** Used until an admin PUTs settings: short abandons count, flow-outs do not (Genesys' defaults), 80 %. */
export const DEFAULT_SERVICE_LEVEL: ServiceLevelSettings = {
  includeFlowOuts: false,
  includeShortAbandons: true,
  target: 0.8,
  queues: {},
};

const target = z.number().min(0).max(1);
const withTarget = z.strictObject({ target });
const MEDIA_TYPE = z.string().min(1).max(ANALYTICS_LIMITS.maxStringLength);
/** Targets per media type (`{"callback": {"target": 0.7}}`): any media type a record may carry. */
const mediaTypes = z
  .unknown()
  .refine((m) => typeof m !== 'object' || m === null || !Object.hasOwn(m, '__proto__'), {
    message: '"__proto__" is not a media type',
    path: ['__proto__'],
  })
  .pipe(z.record(MEDIA_TYPE, withTarget).refine((m) => Object.keys(m).length <= MAX_MEDIA_TYPES, `At most ${MAX_MEDIA_TYPES} media types`));

export const serviceLevelSettingsSchema = z.strictObject({
  includeFlowOuts: z.boolean(),
  includeShortAbandons: z.boolean(),
  target,
  mediaTypes: mediaTypes.optional(),
  queues: z
    .unknown()
    // zod drops a "__proto__" key of a record silently (a plain object cannot hold it as an entry): refuse it.
    .refine((queues) => typeof queues !== 'object' || queues === null || !Object.hasOwn(queues, '__proto__'), {
      message: '"__proto__" is not a queue id',
      path: ['__proto__'],
    })
    .pipe(
      z
        .record(
          z.string().min(1).max(ANALYTICS_LIMITS.maxStringLength),
          // A queue's own target, and its own per media type (as Genesys configures service level).
          z.strictObject({ target: target.optional(), mediaTypes: mediaTypes.optional() }),
        )
        .refine((q) => Object.keys(q).length <= MAX_QUEUE_OVERRIDES, `At most ${MAX_QUEUE_OVERRIDES} queue overrides`),
    )
    .default({}),
});

function buildRead(db: Db) {
  return db.select({ value: settings.value }).from(settings).where(eq(settings.key, KEY)).prepare();
}

/**
 * The read, built once per Db (one per D1 binding for the isolate's life): Drizzle's query
 * builder costs more CPU than the D1 round trip it prepares, and every query with oServiceLevel
 * makes this read.
 */
const reads = new WeakMap<Db, ReturnType<typeof buildRead>>();

export async function getServiceLevelSettings(db: Db): Promise<ServiceLevelSettings> {
  let read = reads.get(db);
  if (!read) reads.set(db, (read = buildRead(db)));
  const row = await read.get();
  return row ? (row.value as ServiceLevelSettings) : DEFAULT_SERVICE_LEVEL;
}

export async function putServiceLevelSettings(db: Db, value: ServiceLevelSettings): Promise<ServiceLevelSettings> {
  const updatedAt = new Date().toISOString();
  await db.insert(settings).values({ key: KEY, value, updatedAt }).onConflictDoUpdate({ target: settings.key, set: { value, updatedAt } });
  return value;
}
