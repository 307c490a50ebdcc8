import { z } from 'zod';
import { DIRECTIONS, MEDIA_TYPES, OBSERVED_METRIC_NAMES, PURPOSES } from '../catalog';
import { ANALYTICS_LIMITS as L } from '../limits';
import { DATE_ISSUE, TOO_LARGE_ISSUE, describeInput } from '../../http/validate';
import { instantMs } from '../iso8601';

const MIN_INSTANT = Date.UTC(L.minYear, 0, 1);
const MAX_INSTANT = Date.UTC(L.maxYear + 1, 0, 1);

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

const conversationRecordSchema = z.object({
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
