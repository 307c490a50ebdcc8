import { z } from 'zod';
import { DIRECTIONS, MEDIA_TYPES, OBSERVED_METRIC_NAMES, PURPOSES } from '../catalog';
import { ANALYTICS_LIMITS as L } from '../limits';
import { DATE_ISSUE, TOO_LARGE_ISSUE, describeInput } from '../../http/validate';
import { parseDateTime } from '../query/interval';

const MIN_INSTANT = Date.UTC(L.minYear, 0, 1);
const MAX_INSTANT = Date.UTC(L.maxYear + 1, 0, 1);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The decimal number in text[from, to), or -1 if any of it is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * `yyyy-MM-ddTHH:mm:ss.SSSZ`, the form nearly every record uses, without the general parser's regex
 * (it was a tenth of ingest's CPU); undefined for anything else, which parseDateTime then judges.
 */
function canonicalInstant(text: string): number | undefined {
  if (text.length !== 24 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':' || text[19] !== '.' || text[23] !== 'Z') {
    return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const millis = digits(text, 20, 23);
  // A non-digit makes its field -1, out of every range below.
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millis < 0) {
    return undefined;
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 ? (leap ? 29 : 28) : DAYS_IN_MONTH[month - 1]!)) return undefined;
  // Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const days = era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
  return days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis;
}

/** Epoch ms of an ISO 8601 instant, or why it is not one (record.fast.ts uses it too). */
export function instantMs(text: string): number | string {
  return canonicalInstant(text) ?? parseDateTime(text);
}

/** An ISO 8601 instant, validated and turned into epoch ms at the boundary. */
const instant = z.string().transform((text, ctx) => {
  const ms = instantMs(text);
  if (typeof ms === 'string' || ms < MIN_INSTANT || ms >= MAX_INSTANT) {
    const why = typeof ms === 'string' ? ms : `years ${L.minYear} to ${L.maxYear} only`;
    ctx.addIssue({
      code: 'custom',
      message: `Dates must be ISO-8601 instants, for example 2026-11-14T09:30:00.000Z; ${JSON.stringify(text.slice(0, 40))}: ${why}`,
      params: DATE_ISSUE,
    });
    return z.NEVER;
  }
  return ms;
});

const str = z.string().min(1).max(L.maxStringLength);

const metricSchema = z.object({
  name: z.enum(OBSERVED_METRIC_NAMES as [string, ...string[]], {
    error: (issue) => `Unknown metric ${describeInput(issue.input)}. Allowable values are: ${OBSERVED_METRIC_NAMES.join(', ')}`,
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
