import { z } from 'zod';
import { ANALYTICS_LIMITS as L } from '../limits';
import { DATE_ISSUE, TOO_LARGE_ISSUE, describeInput } from '../../http/validate';
import { instantMs } from '../iso8601';
import type { FieldKind } from '../catalog';
import { OBJECT_LISTS, RECORD_FIELDS, type RecordLevel } from './record-fields';

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

/**
 * An optional field: absent, or null as serialisers of Genesys' SDK models write an unset field
 * (Python's `to_dict`, for one); both come out absent.
 */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

/**
 * Forward compatible: any metric name is well formed (flow metrics such as nFlow, metrics Genesys adds
 * later); names outside the catalogue are counted in the answer and not stored (to-observations.ts).
 */
const metricSchema = z.object({
  name: str,
  value: z
    .number({ error: (issue) => `Metric values are whole numbers of milliseconds or counts; got ${describeInput(issue.input)}` })
    .int()
    .min(0)
    .max(L.maxMetricValue),
  emitDate: instant,
});

const integer = z.number().int();
const FIELD: Record<FieldKind, z.ZodType> = {
  string: str,
  boolean: z.boolean(),
  integer,
  strings: z.array(str).max(L.maxListLength),
  integers: z.array(integer).max(L.maxListLength),
  // Segment properties as Genesys writes them; a value may be empty.
  properties: z
    .array(z.object({ property: str, propertyType: optional(str), value: optional(z.string().max(L.maxStringLength)) }))
    .max(L.maxListLength),
};

/** The fields a level's dimensions are read from (record-fields.ts), each optional, with its kind's schema. */
function readFields(level: RecordLevel): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const { field, kind } of RECORD_FIELDS[level]) shape[field] = optional(FIELD[kind]);
  for (const list of OBJECT_LISTS[level]) {
    const item: Record<string, z.ZodType> = {};
    for (const { field, kind } of list.items) item[field] = optional(FIELD[kind]);
    shape[list.field] = optional(z.array(z.object(item)).max(L.maxListLength));
  }
  return shape;
}

/** The fields dimensions are read from: typed loosely (to-observations reads them by name). */
type ReadFields = { [field: string]: unknown };

const segmentSchema = z.object({
  segmentStart: instant,
  segmentEnd: optional(instant),
  segmentType: optional(str),
  ...readFields('segment'),
});

const sessionSchema = z.object({
  sessionId: str,
  // Enumerations are kept as sent: values Genesys adds later (or retired ones) are dimension values like any other.
  // Records written before 2017 have sessions without a direction: the dimension is absent for them.
  mediaType: str,
  segments: optional(z.array(segmentSchema).max(L.maxSegments)),
  metrics: optional(z.array(metricSchema).max(L.maxMetricsPerSession)),
  ...readFields('session'),
});

const participantSchema = z.object({
  participantId: str,
  purpose: str,
  sessions: z.array(sessionSchema).max(L.maxSessions),
  ...readFields('participant'),
});

const conversationRecordSchema = z.object({
  conversationId: str,
  conversationStart: instant,
  conversationEnd: optional(instant),
  participants: z.array(participantSchema).max(L.maxParticipants),
  ...readFields('conversation'),
});

/**
 * One conversation, as `GET /api/v2/analytics/conversations/{conversationId}/details` answers it
 * (its `conversationId` at the top, no `conversations`), is a batch of that one record: a user who
 * exported a single conversation sends the file as it is. Any other body is returned unchanged.
 */
export function asBatch(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return 'conversationId' in body && !('conversations' in body) ? { conversations: [body] } : body;
}

const SHAPES =
  'Expected the records in "conversations" (a details query\'s answer or an async details job\'s results page), ' +
  'or one conversation with its conversationId at the top level';

/**
 * The body: a details-query answer `{conversations}`, an async details job's results page
 * `{conversations, cursor, dataAvailabilityDate}` (their other keys are ignored) or one record
 * (`asBatch`). Too many conversations is a size problem (413), checked before any record is validated.
 */
const envelope = <T extends z.ZodType>(record: T) =>
  z.preprocess(
    (input, ctx) => {
      const body = asBatch(input);
      const list = (body as { conversations?: unknown } | null)?.conversations;
      if (!Array.isArray(list)) {
        // Named for what was sent: "expected array, received undefined" told a user nothing.
        const got =
          typeof body !== 'object' || body === null
            ? describeInput(body)
            : Array.isArray(body)
              ? 'a JSON array'
              : list === undefined
                ? 'no "conversations"'
                : `"conversations" as ${describeInput(list)}`;
        ctx.addIssue({ code: 'custom', path: ['conversations'], message: `${SHAPES}; got ${got}` });
        return z.NEVER;
      }
      if (list.length > L.maxConversationsPerIngest) {
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
    z.object({ conversations: z.array(record) }),
  );

/** The whole body at once (tests and tools); the route uses parseIngestBody, which says which records fail. */
export const ingestBodySchema = envelope(conversationRecordSchema) as z.ZodType<{ conversations: ConversationRecord[] }>;
const envelopeSchema = envelope(z.unknown());

type Parsed = z.output<typeof conversationRecordSchema>;
type Segment = z.output<typeof segmentSchema> & ReadFields;
type Session = Omit<z.output<typeof sessionSchema>, 'segments'> & { segments?: Segment[] } & ReadFields;
type Participant = Omit<z.output<typeof participantSchema>, 'sessions'> & { sessions: Session[] } & ReadFields;
/** A validated record: its structural fields typed, the fields dimensions are read from by name. */
export type ConversationRecord = Omit<Parsed, 'participants'> & { participants: Participant[] } & ReadFields;

/** A record that is not well formed: its place in the body, its id when it has one, and what is wrong. */
export interface RefusedRecord {
  index: number;
  conversationId?: string;
  issues: z.core.$ZodIssue[];
}

export type ParsedIngestBody =
  | { ok: true; conversations: ConversationRecord[] }
  | { ok: false; issues: z.core.$ZodIssue[]; refused: RefusedRecord[]; total: number };

/**
 * Validates the envelope, then each record on its own, so that a refusal names every record that is
 * not well formed (a batch stays all or nothing: one refused record refuses the body).
 */
export function parseIngestBody(body: unknown): ParsedIngestBody {
  const outer = envelopeSchema.safeParse(body);
  if (!outer.success) return { ok: false, issues: outer.error.issues, refused: [], total: 0 };
  const list = outer.data.conversations;
  const conversations: ConversationRecord[] = [];
  const refused: RefusedRecord[] = [];
  for (let index = 0; index < list.length; index++) {
    const parsed = conversationRecordSchema.safeParse(list[index]);
    if (parsed.success) {
      conversations.push(parsed.data as ConversationRecord);
      continue;
    }
    // Named by its id when that is a plausible one (a refused id may be the very thing that is wrong).
    const id = (list[index] as { conversationId?: unknown } | null)?.conversationId;
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ['conversations', index, ...issue.path] }));
    const named = typeof id === 'string' && id.length > 0 && id.length <= L.maxStringLength;
    refused.push({ index, ...(named ? { conversationId: id } : {}), issues });
  }
  if (refused.length) return { ok: false, issues: refused.flatMap((r) => r.issues), refused, total: list.length };
  return { ok: true, conversations };
}
