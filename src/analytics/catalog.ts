/**
 * The metric and dimension catalogue, as data. Ingest, validation and the query all read it;
 * no metric or dimension name is spelled anywhere else in src/, but for agg_user's column names
 * (db/packed-columns.ts, checked against this catalogue by rollups.ts).
 *
 * STORAGE FORMAT: the index of a dimension in DIMENSIONS and of a metric in METRICS is stored in
 * D1 (rollups and the raw observation codec). Append new entries at the end; never reorder.
 */

export const DIMENSIONS = [
  'conversationId',
  'originatingDirection',
  'divisionId',
  'purpose',
  'participantName',
  'userId',
  'mediaType',
  'direction',
  'ani',
  'dnis',
  'sessionId',
  'queueId',
  'wrapUpCode',
  'disconnectType',
] as const;

export type Dimension = (typeof DIMENSIONS)[number];
export const DIMENSION_INDEX: Readonly<Record<Dimension, number>> = Object.fromEntries(DIMENSIONS.map((d, i) => [d, i])) as Record<
  Dimension,
  number
>;

export type MetricKind = 'count' | 'timer' | 'calculated';
/** Which participant of a conversation emits the metric (calculated metrics: none). */
export type EmittingParticipant = 'acd' | 'agent' | 'ivr' | 'customer' | 'none';

export interface MetricDef {
  name: string;
  kind: MetricKind;
  participant: EmittingParticipant;
  /** Dimensions that never apply to this metric: ingest drops them, filters on them exclude it. */
  notApplicable: readonly Dimension[];
}

const ACD_NA = ['userId'] as const;
const AGENT_NA = [] as const;
const IVR_NA = ['queueId', 'userId', 'wrapUpCode'] as const;
const CUSTOMER_NA = ['queueId', 'userId', 'wrapUpCode'] as const;

function defs(participant: EmittingParticipant, notApplicable: readonly Dimension[], names: string[]): MetricDef[] {
  return names.map((name) => ({
    name,
    kind: name.startsWith('t') ? 'timer' : name.startsWith('n') ? 'count' : 'calculated',
    participant,
    notApplicable,
  }));
}

export const METRICS: readonly MetricDef[] = [
  ...defs('acd', ACD_NA, ['nOffered', 'tAcd', 'tWait', 'tAbandon', 'tShortAbandon', 'tFlowOut']),
  ...defs('agent', AGENT_NA, [
    'tAnswered',
    'nOverSla',
    'tAlert',
    'tNotResponding',
    'tTalk',
    'tTalkComplete',
    'tHeld',
    'tHeldComplete',
    'tAcw',
    'tHandle',
    'nTransferred',
    'nBlindTransferred',
    'nConsult',
    'nConsultTransferred',
    'tContacting',
    'tDialing',
    'nOutbound',
    'nOutboundAttempted',
    'nOutboundConnected',
    'nOutboundAbandoned',
    'tVoicemail',
  ]),
  ...defs('ivr', IVR_NA, ['tIvr']),
  ...defs('customer', CUSTOMER_NA, ['nConnected', 'tConnected']),
  // A queue-level ratio computed at query time from its components (see service-level.ts).
  { name: 'oServiceLevel', kind: 'calculated', participant: 'none', notApplicable: ['userId'] },
];

export const METRIC_NAMES: readonly string[] = METRICS.map((m) => m.name);
export const METRIC_INDEX: ReadonlyMap<string, number> = new Map(METRIC_NAMES.map((n, i) => [n, i]));

/** Metrics that are observed (ingested), as opposed to calculated at query time. */
export const OBSERVED_METRIC_NAMES: readonly string[] = METRICS.filter((m) => m.kind !== 'calculated').map((m) => m.name);
/** Observed metrics' indexes by name: what ingest stores (other names in a record are counted and skipped). */
export const OBSERVED_METRIC_INDEX: ReadonlyMap<string, number> = new Map(OBSERVED_METRIC_NAMES.map((n) => [n, METRIC_INDEX.get(n)!]));

export function metricIndex(name: string): number {
  const i = METRIC_INDEX.get(name);
  if (i === undefined) throw new Error(`unknown metric ${name}`);
  return i;
}

/** applies[metric][dimension]: whether the dimension can apply to the metric at all. */
export const APPLIES: readonly (readonly boolean[])[] = METRICS.map((m) => DIMENSIONS.map((d) => !m.notApplicable.includes(d)));

/** Components of oServiceLevel, by role. */
export const SERVICE_LEVEL = {
  metric: metricIndex('oServiceLevel'),
  answered: metricIndex('tAnswered'),
  overSla: metricIndex('nOverSla'),
  abandon: metricIndex('tAbandon'),
  shortAbandon: metricIndex('tShortAbandon'),
  flowOut: metricIndex('tFlowOut'),
} as const;

/** Values accepted at ingest for enumerated session and participant fields. */
export const MEDIA_TYPES = ['voice', 'chat', 'email', 'callback', 'message', 'screenshare', 'cobrowse', 'video'] as const;
export const DIRECTIONS = ['inbound', 'outbound'] as const;
export const PURPOSES = [
  'acd',
  'agent',
  'api',
  'botflow',
  'campaign',
  'customer',
  'dialer',
  'external',
  'fax',
  'group',
  'inbound',
  'ivr',
  'manual',
  'outbound',
  'station',
  'user',
  'voicemail',
  'workflow',
] as const;
/** Participants whose `userId` becomes the userId dimension. */
export const USER_PURPOSES: ReadonlySet<string> = new Set(['agent', 'user']);
