import { Hono } from 'hono';
import { validator } from 'hono/validator';
import { ApiError } from '../../http/api-error';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { issuesToError } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { ingestRecords } from './observations.store';
import { fastIngestBody } from './record.fast';
import { parseIngestBody, type RefusedRecord } from './record.schema';

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

/** A valid body takes the fast path; anything else is judged (and its error worded) by the zod schemas. */
const validIngestBody = validator('json', (value) => {
  const fast = fastIngestBody(value);
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
    return c.json(await ingestRecords(c.env.DB, conversations));
  },
);
