import { z } from 'zod';
import { DIRECTIONS, MEDIA_TYPES, OBSERVED_METRIC_NAMES, PURPOSES } from '../catalog';
import { ANALYTICS_LIMITS as L } from '../limits';
import { DATE_ISSUE, TOO_LARGE_ISSUE } from '../../http/validate';

/** Strict ISO 8601 instant with `Z` or an offset: `2026-11-14T09:30:00.000Z`. Epoch ms, or undefined. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

export function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, Number(h), Number(mi), Number(s), Number(frac.slice(0, 3).padEnd(3, '0')));
  if (new Date(ms).getUTCDate() !== day) return undefined; // Feb 30 and friends
  let offset = 0;
  if (zone !== 'Z') {
    const digits = zone!.replace(':', '');
    const oh = Number(digits.slice(1, 3));
    const om = Number(digits.slice(3, 5));
    if (oh > 23 || om > 59) return undefined;
    offset = (digits[0] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return ms - offset;
}

const MIN_INSTANT = Date.UTC(L.minYear, 0, 1);
const MAX_INSTANT = Date.UTC(L.maxYear + 1, 0, 1);

/** An ISO 8601 instant, validated and turned into epoch ms at the boundary. */
const instant = z.string().transform((text, ctx) => {
  const ms = parseInstant(text);
  if (ms === undefined || ms < MIN_INSTANT || ms >= MAX_INSTANT) {
    ctx.addIssue({
      code: 'custom',
      message: `Dates must be ISO-8601 instants between ${L.minYear} and ${L.maxYear}, for example 2026-11-14T09:30:00.000Z; got ${JSON.stringify(text.slice(0, 40))}`,
      params: DATE_ISSUE,
    });
    return z.NEVER;
  }
  return ms;
});

const str = z.string().min(1).max(L.maxStringLength);

const metricSchema = z.object({
  name: z.enum(OBSERVED_METRIC_NAMES as [string, ...string[]], {
    error: (issue) => `Unknown metric ${JSON.stringify(issue.input)}. Allowable values are: ${OBSERVED_METRIC_NAMES.join(', ')}`,
  }),
  value: z.number().int().min(0).max(L.maxMetricValue),
  emitDate: instant,
});

const segmentSchema = z.object({
  segmentStart: instant,
  segmentEnd: instant.optional(),
  segmentType: str.optional(),
  queueId: str.optional(),
  wrapUpCode: str.optional(),
  disconnectType: str.optional(),
});

const sessionSchema = z.object({
  sessionId: str,
  mediaType: z.enum(MEDIA_TYPES),
  direction: z.enum(DIRECTIONS),
  ani: str.optional(),
  dnis: str.optional(),
  segments: z.array(segmentSchema).max(L.maxSegments).optional(),
  metrics: z.array(metricSchema).max(L.maxMetricsPerSession).optional(),
});

const participantSchema = z.object({
  participantId: str,
  participantName: str.optional(),
  purpose: z.enum(PURPOSES),
  userId: str.optional(),
  sessions: z.array(sessionSchema).max(L.maxSessions),
});

export const conversationRecordSchema = z.object({
  conversationId: str,
  conversationStart: instant,
  conversationEnd: instant.optional(),
  originatingDirection: z.enum(DIRECTIONS).optional(),
  divisionIds: z.array(str).max(L.maxParticipants).optional(),
  participants: z.array(participantSchema).max(L.maxParticipants),
});

/** Too many conversations is a size problem (413), checked before any record is validated. */
export const ingestBodySchema = z.preprocess(
  (body, ctx) => {
    const list = (body as { conversations?: unknown } | null)?.conversations;
    if (Array.isArray(list) && list.length > L.maxConversationsPerIngest) {
      ctx.addIssue({
        code: 'custom',
        path: ['conversations'],
        message: `At most ${L.maxConversationsPerIngest} conversations per request; got ${list.length}`,
        params: TOO_LARGE_ISSUE,
      });
      return z.NEVER;
    }
    return body;
  },
  z.object({ conversations: z.array(conversationRecordSchema) }),
);

export type ConversationRecord = z.output<typeof conversationRecordSchema>;
