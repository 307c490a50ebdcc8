/**
 * The metrics agg_user keeps packed (migration 0005), in column order: four columns each, named by
 * packedColumns. STORAGE FORMAT: these are the catalogue's agent metrics (analytics/catalog.ts), and
 * analytics/rollups.ts refuses to load when the two differ; a new agent metric is new columns, by a
 * migration, added here at the end.
 */
export const AGG_USER_METRICS = [
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
] as const;

/** The count, sum, min and max columns of one metric in a packed rollup table. */
export function packedColumns(metric: string): { cnt: string; sum: string; mn: string; mx: string } {
  return { cnt: `${metric}_cnt`, sum: `${metric}_sum`, mn: `${metric}_mn`, mx: `${metric}_mx` };
}
