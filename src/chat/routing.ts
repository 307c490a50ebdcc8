import type { WebhookMapping } from '../db/schema';

export interface RoutingConfig {
  /** The webhook's default room: used when no mapping matches. */
  roomId: string;
  mappings: readonly WebhookMapping[];
}

function matches(mapping: WebhookMapping, message: string, metadata: string | null): boolean {
  const subject = mapping.field === 'message' ? message : metadata;
  if (subject === null) return false;
  switch (mapping.match) {
    case 'exact':
      return subject === mapping.value;
    case 'contains':
      return subject.includes(mapping.value);
    case 'prefix':
      return subject.startsWith(mapping.value);
  }
}

/**
 * Rooms a posted message goes to, as Genesys routes by content: every room of every matching
 * mapping (each room once, in mapping order), or the webhook's own room when none matches.
 * Matching is case-sensitive on the text as posted.
 */
export function routeMessage(config: RoutingConfig, message: string, metadata: string | null): string[] {
  const targets = new Set<string>();
  for (const mapping of config.mappings) {
    if (!matches(mapping, message, metadata)) continue;
    for (const roomId of mapping.roomIds) targets.add(roomId);
  }
  return targets.size > 0 ? [...targets] : [config.roomId];
}
