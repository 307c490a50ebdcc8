/** Every permission a token can hold. ADMIN_TOKEN holds all of them. */
export const PERMISSIONS = [
  'analytics:conversationAggregate:view',
  'analytics:conversation:ingest',
  'analytics:settings:edit',
  'tokens:manage',
  'chat:admin',
  'chat:read',
  /** Posting into rooms as oneself, and editing and deleting one's own messages (chat/people-post). */
  'chat:write',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
