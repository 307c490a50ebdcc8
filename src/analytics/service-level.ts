/**
 * What the service levels need from one group and bucket: counts of their component metrics (oServiceLevel's
 * first five, oCallbackServiceLevel's last four).
 */
export interface ServiceLevelCounts {
  answered: number;
  overSla: number;
  abandon: number;
  shortAbandon: number;
  flowOut: number;
  callbackConnected: number;
  callbackOverSla: number;
  callbackAbandon: number;
  callbackNotReached: number;
}

export interface ServiceLevelOptions {
  includeFlowOuts: boolean;
  includeShortAbandons: boolean;
}

/** A target, and targets of its own per media type. */
export interface TargetSettings {
  target?: number;
  mediaTypes?: Record<string, { target: number }>;
}

/**
 * The org's service-level settings: the options, its target, its targets per media type, and per queue a
 * target and targets per media type (Genesys sets service level per queue and media type).
 */
export interface ServiceLevelSettings extends ServiceLevelOptions {
  target: number;
  mediaTypes?: Record<string, { target: number }>;
  queues: Record<string, TargetSettings>;
}

export interface ServiceLevelStats {
  ratio?: number;
  numerator: number;
  denominator: number;
  target: number;
}

export function emptyCounts(): ServiceLevelCounts {
  return {
    answered: 0,
    overSla: 0,
    abandon: 0,
    shortAbandon: 0,
    flowOut: 0,
    callbackConnected: 0,
    callbackOverSla: 0,
    callbackAbandon: 0,
    callbackNotReached: 0,
  };
}

/** Whether oServiceLevel's components were seen (its entry is written), and oCallbackServiceLevel's. */
export function hasServiceLevel(c: ServiceLevelCounts): boolean {
  return c.answered + c.overSla + c.abandon + c.shortAbandon + c.flowOut > 0;
}

export function hasCallbackServiceLevel(c: ServiceLevelCounts): boolean {
  return c.callbackConnected + c.callbackOverSla + c.callbackAbandon + c.callbackNotReached > 0;
}

const own = <T>(map: Record<string, T> | undefined, key: string | undefined): T | undefined =>
  map !== undefined && key !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;

/**
 * The target of a group (oServiceTarget): the most specific that is set of its queue's target for its media
 * type, its queue's target, the org's target for its media type, the org's target. A group not grouped by
 * queue has no queue; `mediaType` overrides the group's (oCallbackServiceLevel uses callback's).
 */
export function groupTarget(group: Record<string, string>, settings: ServiceLevelSettings, mediaType = group.mediaType): number {
  const queue = own(settings.queues, group.queueId);
  return own(queue?.mediaTypes, mediaType)?.target ?? queue?.target ?? own(settings.mediaTypes, mediaType)?.target ?? settings.target;
}

/**
 * oCallbackServiceLevel = (callbacks connected − connected over the callback service level) / (connected +
 * abandoned + not reached), against the callback target. UNCONFIRMED (docs/catalogue.md): Genesys does not
 * publish the formula.
 */
export function callbackServiceLevel(c: ServiceLevelCounts, target: number): ServiceLevelStats {
  const numerator = c.callbackConnected - c.callbackOverSla;
  const denominator = c.callbackConnected + c.callbackAbandon + c.callbackNotReached;
  return denominator > 0 ? { ratio: numerator / denominator, numerator, denominator, target } : { numerator, denominator, target };
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

/** The service level of a group, against its target (groupTarget). */
export function groupServiceLevel(
  counts: ServiceLevelCounts,
  group: Record<string, string>,
  settings: ServiceLevelSettings,
): ServiceLevelStats {
  return serviceLevel(counts, settings, groupTarget(group, settings));
}
