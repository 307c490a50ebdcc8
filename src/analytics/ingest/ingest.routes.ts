import { Hono } from 'hono';
import { validator } from 'hono/validator';
import { ApiError } from '../../http/api-error';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { issuesToError } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { type AnalyticsStore, analyticsStore, partitionFor, type Partition } from '../partitions/partitions';
import { ingestRouted, type RoutedRecords } from './observations.store';
import { fastIngestBody } from './record.fast';
import { asBatch, type ConversationRecord, parseIngestBody, type RefusedRecord } from './record.schema';

/** Refused records named in one answer (each in ErrorBody.errors[], its issues in details). */
const MAX_REFUSED_LISTED = 100;

/**
 * A batch with records that are not well formed is refused whole (nothing stored); the answer names
 * each such record — its index, its conversationId and what is wrong — in `errors[]`.
 */
function refusedError(refused: RefusedRecord[], total: number): ApiError {
  const errors = refused.slice(0, MAX_REFUSED_LISTED).map((r) => {
    const inner = issuesToError(r.issues);
    const which = `conversations[${r.index}]${r.conversationId === undefined ? '' : ` (${r.conversationId})`}`;
    return new ApiError(inner.status, inner.code, `${which} is refused: ${inner.message}`, inner.details).about(r.conversationId);
  });
  const first = errors[0]!;
  const more = refused.length > 1 ? ` (and ${refused.length - 1} more, listed in errors)` : '';
  const verb = refused.length === 1 ? 'is' : 'are';
  const message = `${refused.length} of ${total} conversations ${verb} not well formed; nothing of this request was stored. ${first.message}${more}`;
  return new ApiError(first.status, first.code, message, first.details, {}, errors);
}

/**
 * The records grouped by the partition holding their conversation: the one whose period holds its
 * conversationStart (the earliest, should a body carry a conversation twice), which a re-send
 * carries again, so a conversation always lands in the same database. A conversation starting where
 * no partition is kept (a gap of the configuration, or a partition past the retention) refuses the
 * whole body with 400 naming each such record, as a malformed one does: nothing is stored.
 */
function routeRecords(store: AnalyticsStore, records: ConversationRecord[], now: number): RoutedRecords[] {
  const starts = new Map<string, { start: number; index: number }>();
  records.forEach((r, index) => {
    const seen = starts.get(r.conversationId);
    if (!seen || r.conversationStart < seen.start) starts.set(r.conversationId, { start: r.conversationStart, index });
  });
  const placed = new Map<string, Partition>();
  const refused: ApiError[] = [];
  for (const [id, { start, index }] of starts) {
    const p = partitionFor(store, start, now);
    if ('refused' in p) {
      const field = `conversations[${index}].conversationStart`;
      const message = `conversations[${index}] (${id}) is refused: its conversationStart ${new Date(start).toISOString()} is not stored here: ${p.refused}`;
      refused.push(ApiError.invalidValue(field, message).about(id));
    } else placed.set(id, p);
  }
  if (refused.length > 0) {
    const first = refused[0]!;
    const more = refused.length > 1 ? ` (and ${refused.length - 1} more, listed in errors)` : '';
    const message = `${refused.length} of ${starts.size} conversations start outside the periods this service keeps; nothing of this request was stored. ${first.message}${more}`;
    throw new ApiError(400, 'invalid.value', message, first.details, {}, refused.slice(0, MAX_REFUSED_LISTED));
  }
  const routed = new Map<Partition, RoutedRecords>();
  for (const record of records) {
    const p = placed.get(record.conversationId)!;
    let group = routed.get(p);
    if (!group) routed.set(p, (group = { database: p, records: [] }));
    group.records.push(record);
  }
  return [...routed.values()];
}

/** A valid body takes the fast path; anything else is judged (and its error worded) by the zod schemas. */
const validIngestBody = validator('json', (value) => {
  const fast = fastIngestBody(asBatch(value));
  if (fast) return fast;
  const parsed = parseIngestBody(value);
  if (parsed.ok) return { conversations: parsed.conversations };
  if (parsed.refused.length) throw refusedError(parsed.refused, parsed.total);
  throw issuesToError(parsed.issues);
});

export const ingestRoutes = new Hono<AppEnv>().post(
  '/api/v2/analytics/conversations/details/ingest',
  requirePermission('analytics:conversation:ingest'),
  jsonBody(ANALYTICS_LIMITS.ingestBodyBytes),
  validIngestBody,
  async (c) => {
    const { conversations } = c.req.valid('json');
    return c.json(await ingestRouted(routeRecords(analyticsStore(c.env), conversations, Date.now())));
  },
);
