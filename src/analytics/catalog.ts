/**
 * The metric and dimension catalogue, as data. Ingest, validation and the query all read it;
 * no metric or dimension name is spelled anywhere else in src/, but for agg_user's column names
 * (db/packed-columns.ts, checked against this catalogue by rollups.ts).
 *
 * STORAGE FORMAT: the index of a dimension in DIMENSIONS and of a metric in METRICS is stored in
 * D1 (rollups and the raw observation codec). Append new entries at the end; never reorder.
 */

/** Where in a conversation-detail record a dimension's value is read (docs/catalogue.md, "How a dimension applies"). */
export type DimensionLevel = 'conversation' | 'participant' | 'session' | 'segment' | 'derived';
/** How the record states the value: kept as text (booleans "true"/"false", integers in decimal). */
/** `properties`: segment properties `[{property, propertyType, value}]`, kept as `property\u0000value` each. */
export type FieldKind = 'string' | 'boolean' | 'integer' | 'strings' | 'integers' | 'properties';

export interface DimensionDef {
  name: string;
  level: DimensionLevel;
  /** The record field at its level (a list for multi-valued ones); `proposedAgents.agentRank` = a field of each element. */
  field?: string;
  kind?: FieldKind;
  /** Several values per observation (a list in the record): grouped under each, or joined when flattened. */
  multi?: true;
  /** Takes a `range` predicate (values compared as numbers). */
  numeric?: true;
  /** Accepted in filters only (Genesys' predicate enum has it; its groupBy enum does not). */
  filterOnly?: true;
  /** Stored for `property` predicates, never named as a dimension in a query. */
  hidden?: true;
  /**
   * Its values are about as many as conversations, contacts, agents or offers (ids, addresses, names,
   * per-offer lists): kept in the raw rows only, not in the dimension cube (rollups.ts), whose cells it
   * would multiply. A query on it reads the raw rows (docs/analytics-storage.md).
   */
  unbounded?: true;
}

type Named<N extends string> = DimensionDef & { name: N };
const c = <N extends string>(name: N, field: string, kind: FieldKind = 'string'): Named<N> => ({
  name,
  level: 'conversation',
  field,
  kind,
});
const p = <N extends string>(name: N, field: string = name): Named<N> => ({ name, level: 'participant', field, kind: 'string' });
const s = <N extends string>(name: N, field: string = name, kind: FieldKind = 'string'): Named<N> => ({
  name,
  level: 'session',
  field,
  kind,
});
const g = <N extends string>(name: N, field: string = name, kind: FieldKind = 'string'): Named<N> => ({
  name,
  level: 'segment',
  field,
  kind,
});
const derived = <N extends string>(name: N): Named<N> => ({ name, level: 'derived' });
const multi = <D extends DimensionDef>(d: D): D => ({ ...d, multi: true });
const numeric = <D extends DimensionDef>(d: D): D => ({ ...d, numeric: true });
const unbounded = <D extends DimensionDef>(d: D): D => ({ ...d, unbounded: true });

/**
 * Every groupBy and filter dimension of Genesys' conversation aggregate query, with where ingest reads
 * it. STORAGE FORMAT: a dimension's index here is stored in D1 (rollups and the observation codec), and
 * whether it is multi-valued is part of the codec. Append new entries at the end; never reorder.
 */
export const DIMENSION_DEFS = [
  unbounded(c('conversationId', 'conversationId')),
  c('originatingDirection', 'originatingDirection'),
  multi(c('divisionId', 'divisionIds', 'strings')),
  p('purpose'),
  unbounded(p('participantName')),
  p('userId'),
  s('mediaType'),
  s('direction'),
  unbounded(s('ani')),
  unbounded(s('dnis')),
  unbounded(s('sessionId')),
  g('queueId'),
  g('wrapUpCode'),
  g('disconnectType'),
  // Issue 23: the rest of Genesys' catalogue, in its (alphabetical) order.
  derived('activeRouting'),
  multi(s('activeSkillId', 'activeSkillIds', 'strings')),
  unbounded(s('addressFrom')),
  unbounded(s('addressTo')),
  s('agentAssistantId'),
  numeric(s('agentBullseyeRing', 'agentBullseyeRing', 'integer')),
  s('agentOwned', 'agentOwned', 'boolean'),
  multi(numeric(s('agentRank', 'proposedAgents.agentRank', 'integers'))),
  unbounded(multi(numeric(g('agentScore', 'scoredAgents.agentScore', 'integers')))),
  unbounded(s('assignerId')),
  s('authenticated', 'authenticated', 'boolean'),
  c('conversationInitiator', 'conversationInitiator'),
  derived('convertedFrom'),
  derived('convertedTo'),
  c('customerParticipation', 'customerParticipation', 'boolean'),
  s('deliveryStatus'),
  unbounded(multi(s('destinationAddress', 'destinationAddresses', 'strings'))),
  s('edgeId'),
  unbounded(multi(numeric(s('eligibleAgentCount', 'eligibleAgentCounts', 'integers')))),
  g('errorCode'),
  s('extendedDeliveryStatus'),
  unbounded(p('externalContactId')),
  numeric(derived('externalMediaCount')),
  unbounded(p('externalOrganizationId')),
  unbounded(c('externalTag', 'externalTag')),
  derived('firstQueue'),
  p('flaggedReason'),
  s('flowInType'),
  s('flowOutType'),
  g('groupId'),
  derived('interactionType'),
  s('journeyActionId'),
  s('journeyActionMapId'),
  numeric(s('journeyActionMapVersion', 'journeyActionMapVersion', 'integer')),
  unbounded(s('journeyCustomerId')),
  s('journeyCustomerIdType'),
  unbounded(s('journeyCustomerSessionId')),
  s('journeyCustomerSessionIdType'),
  multi(c('knowledgeBaseId', 'knowledgeBaseIds', 'strings')),
  numeric(s('mediaCount', 'mediaCount', 'integer')),
  s('messageType'),
  c('originatingSocialMediaPublic', 'originatingSocialMediaPublic', 'boolean'),
  s('outboundCampaignId'),
  unbounded(s('outboundContactId')),
  s('outboundContactListId'),
  unbounded(s('peerId')),
  unbounded(multi(s('proposedAgentId', 'proposedAgents.proposedAgentId', 'strings'))),
  s('provider'),
  unbounded(s('remote')),
  multi(s('removedSkillId', 'removedSkillIds', 'strings')),
  g('requestedLanguageId'),
  multi(s('requestedRouting', 'requestedRoutings', 'strings')),
  multi(g('requestedRoutingSkillId', 'requestedRoutingSkillIds', 'strings')),
  unbounded(s('roomId')),
  numeric(derived('routingPriority')),
  numeric(s('routingRing', 'routingRing', 'integer')),
  s('routingRule'),
  s('routingRuleType'),
  unbounded(multi(g('scoredAgentId', 'scoredAgents.scoredAgentId', 'strings'))),
  unbounded(s('selectedAgentId')),
  numeric(s('selectedAgentRank', 'selectedAgentRank', 'integer')),
  c('selfServed', 'selfServed', 'boolean'),
  unbounded(s('sessionDnis')),
  s('skillExpressionId'),
  unbounded(derived('stationId')),
  p('teamId'),
  s('usedRouting'),
  derived('videoPresent'),
  unbounded(multi(numeric(s('waitingInteractionCount', 'waitingInteractionCounts', 'integers')))),
  { ...unbounded(derived('canonicalExternalContactId')), filterOnly: true },
  { ...derived('reoffered'), filterOnly: true },
  // Segment properties ([{property, propertyType, value}]), for `property` predicates (query/filter.ts).
  { ...unbounded(multi(g('segmentProperty', 'properties', 'properties'))), hidden: true },
] as const satisfies readonly DimensionDef[];
const DEFS: readonly DimensionDef[] = DIMENSION_DEFS;

export type Dimension = (typeof DIMENSION_DEFS)[number]['name'];
/** Every stored dimension, in storage order (arrays of dimension values are indexed by this). */
export const DIMENSIONS: readonly Dimension[] = DIMENSION_DEFS.map((d) => d.name);
/** Dimensions a query's dimension predicates may name: Genesys' 85 (the hidden segment properties are reached by `property` predicates). */
export const FILTER_DIMENSIONS: readonly Dimension[] = DIMENSIONS.filter((_, i) => DEFS[i]!.hidden !== true);
/** Dimensions a query may group by (all but the filter-only ones). */
export const GROUP_BY_DIMENSIONS: readonly Dimension[] = DIMENSIONS.filter(
  (_, i) => DEFS[i]!.filterOnly !== true && DEFS[i]!.hidden !== true,
);
export const DIMENSION_INDEX: Readonly<Record<Dimension, number>> = Object.fromEntries(DIMENSIONS.map((d, i) => [d, i])) as Record<
  Dimension,
  number
>;
/** Per dimension index: multi-valued (its value in an observation is a list). */
export const MULTI_VALUED: readonly boolean[] = DEFS.map((d) => d.multi === true);
/** Per dimension index: numeric (takes `range`). */
export const NUMERIC: readonly boolean[] = DEFS.map((d) => d.numeric === true);
/** Per dimension index: values unbounded in number (DimensionDef.unbounded): raw rows only. */
export const UNBOUNDED: readonly boolean[] = DEFS.map((d) => d.unbounded === true);

/** `observation` = an `o*` value Genesys emits as a session metric (message counts…): answered with timer-like stats. */
export type MetricKind = 'count' | 'timer' | 'observation' | 'calculated';

export interface MetricDef {
  name: string;
  kind: MetricKind;
  /** The participant purposes whose sessions emit it (docs/catalogue.md; [] for calculated ones). */
  purposes: readonly string[];
  /** Dimensions that never apply to this metric: ingest drops them, filters on them exclude it. */
  notApplicable: readonly Dimension[];
}

// What never applies, by who emits the metric (seed rules 2–3; docs/catalogue.md). flowOutType applies only to tFlowOut and tCfcFlowOut.
const ACD_NA = ['userId', 'teamId', 'flowOutType'] as const;
const AGENT_NA = ['flowOutType'] as const;
// firstQueue says something about the metric's queueId: it never applies where queueId does not.
const IVR_NA = ['queueId', 'userId', 'wrapUpCode', 'teamId', 'flowOutType', 'firstQueue'] as const;
const CUSTOMER_NA = ['queueId', 'userId', 'wrapUpCode', 'teamId', 'flowOutType', 'firstQueue'] as const;
const AGENTS = ['agent', 'user'];

function kindOf(name: string): MetricKind {
  return name.startsWith('t') ? 'timer' : name.startsWith('n') ? 'count' : 'observation';
}

function defs(purposes: readonly string[], notApplicable: readonly Dimension[], names: string[]): MetricDef[] {
  return names.map((name) => ({ name, kind: kindOf(name), purposes, notApplicable }));
}

/**
 * Every metric of Genesys' conversation aggregate query (and the seed's tIvr). STORAGE FORMAT: a
 * metric's index here is stored in D1 (rollups and the observation codec). Append new entries at the
 * end; never reorder.
 */
export const METRICS: readonly MetricDef[] = [
  ...defs(['acd'], ACD_NA, ['nOffered', 'tAcd', 'tWait', 'tAbandon', 'tShortAbandon']),
  ...defs(['acd'], ['userId', 'teamId'], ['tFlowOut']),
  ...defs(AGENTS, AGENT_NA, [
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
  ]),
  ...defs(['customer', 'acd', 'agent', 'user'], AGENT_NA, ['nOutboundAttempted', 'nOutboundConnected', 'nOutboundAbandoned']),
  ...defs(['voicemail', ...AGENTS], AGENT_NA, ['tVoicemail']),
  ...defs(['ivr'], IVR_NA, ['tIvr']),
  ...defs(['customer', 'external'], CUSTOMER_NA, ['nConnected', 'tConnected']),
  // A queue-level ratio computed at query time from its components (see service-level.ts).
  { name: 'oServiceLevel', kind: 'calculated', purposes: [], notApplicable: ACD_NA },
  // Issue 23: the rest of Genesys' catalogue.
  ...defs(['acd'], ACD_NA, ['nCfcOffered', 'tCfcAcd', 'tCfcAbandon', 'tCallbackVirtualWait', 'tCallbackAbandon']),
  ...defs(['acd'], ['userId', 'teamId'], ['tCfcFlowOut']),
  ...defs(['acd', 'customer'], ACD_NA, ['nCallbackScheduled', 'oSkillExpressionApplications']),
  ...defs(AGENTS, AGENT_NA, [
    'tCfcAnswered',
    'tCallbackNotReached',
    'tCallbackConnect',
    'nCallbackAttempts',
    'nCallbackOverSla',
    'tActiveCallback',
    'tActiveCallbackComplete',
    'tFirstDial',
    'tFirstConnect',
    'tMonitoring',
    'tMonitoringComplete',
    'tCoaching',
    'tCoachingComplete',
    'tBarging',
    'tScreenMonitoring',
    'tPark',
    'tParkComplete',
    'tSnippetRecord',
    'tTransmitting',
    'tAgentVideoConnected',
    'tAgentResponseTime',
    'tAverageAgentResponseTime',
    'tUserResponseTime',
    'tFirstResponse',
    'tFirstEngagement',
    'nTakeover',
    'oMessageTurn',
    'oExternalMediaCount',
    'oExternalAudioMessageCount',
  ]),
  ...defs([...AGENTS, 'customer'], AGENT_NA, [
    'tAverageCustomerResponseTime',
    'nCobrowseSessions',
    'oMessageCount',
    'oMessageSegmentCount',
    'oMediaCount',
    'oAudioMessageCount',
  ]),
  ...defs(['ivr', 'botflow', 'workflow'], IVR_NA, ['nBotInteractions']),
  ...defs(['customer', 'external', 'acd', ...AGENTS], AGENT_NA, ['nConversations']),
  ...defs([...AGENTS, 'customer', 'external'], AGENT_NA, ['nError', 'nStateTransitionError']),
  // Calculated at query time: the configured target, and the callback service level (service-level.ts).
  { name: 'oServiceTarget', kind: 'calculated', purposes: [], notApplicable: ACD_NA },
  { name: 'oCallbackServiceLevel', kind: 'calculated', purposes: [], notApplicable: ACD_NA },
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

/** The other calculated metrics: the target, and the callback service level with its components by role. */
export const SERVICE_TARGET = metricIndex('oServiceTarget');
export const CALLBACK_SERVICE_LEVEL = {
  metric: metricIndex('oCallbackServiceLevel'),
  callbackConnected: metricIndex('tCallbackConnect'),
  callbackOverSla: metricIndex('nCallbackOverSla'),
  callbackAbandon: metricIndex('tCallbackAbandon'),
  callbackNotReached: metricIndex('tCallbackNotReached'),
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
