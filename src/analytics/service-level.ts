/** What the service level needs from one group and bucket: counts of its component metrics. */
export interface ServiceLevelCounts {
  answered: number;
  overSla: number;
  abandon: number;
  shortAbandon: number;
  flowOut: number;
}

export interface ServiceLevelOptions {
  includeFlowOuts: boolean;
  includeShortAbandons: boolean;
}

/** The org's service-level settings: the options, its target, and targets of its own per queue. */
export interface ServiceLevelSettings extends ServiceLevelOptions {
  target: number;
  queues: Record<string, { target: number }>;
}

export interface ServiceLevelStats {
  ratio?: number;
  numerator: number;
  denominator: number;
  target: number;
}

export function emptyCounts(): ServiceLevelCounts {
  return { answered: 0, overSla: 0, abandon: 0, shortAbandon: 0, flowOut: 0 };
}

/**
 * oServiceLevel = (answered − answered over SLA) / denominator, where the denominator follows the
 * seed's table: answered + abandoned, plus flow-outs when included, minus short abandons when they
 * are excluded. With a zero denominator the ratio is undefined and left out (numerator and
 * denominator still say why).
 */
export function serviceLevel(counts: ServiceLevelCounts, options: ServiceLevelOptions, target: number): ServiceLevelStats {
  const numerator = counts.answered - counts.overSla;
  let denominator = counts.answered + counts.abandon;
  if (options.includeFlowOuts) denominator += counts.flowOut;
  if (!options.includeShortAbandons) denominator -= counts.shortAbandon;
  return denominator > 0 ? { ratio: numerator / denominator, numerator, denominator, target } : { numerator, denominator, target };
}

/** The service level of a group: with its queue's own target where it is grouped by a queue that has one. */
export function groupServiceLevel(
  counts: ServiceLevelCounts,
  group: Record<string, string>,
  settings: ServiceLevelSettings,
): ServiceLevelStats {
  const queueId = group.queueId;
  const override = queueId !== undefined && Object.hasOwn(settings.queues, queueId) ? settings.queues[queueId] : undefined;
  const target = override?.target ?? settings.target;
  return serviceLevel(counts, settings, target);
}
