/** Chat limits and defaults in one place; the README's limits table is written from these. */
export const CHAT_LIMITS = {
  /** Webhook post: `message` in Unicode code points (never truncated: longer answers 413). */
  messageChars: 40_000,
  metadataChars: 4_000,
  /** Whole webhook body; room for a maximal message even if every character is JSON-escaped. */
  webhookBodyBytes: 512 * 1024,
  adminBodyBytes: 64 * 1024,
  nameChars: 100,
  /** A post's own sender name (`username`), where the webhook allows overrides: trimmed, in code points. */
  senderNameChars: 80,
  /** A webhook's `avatarUrl` and a post's own icon URL (`iconUrl`, `icon_url`, `avatar_url`): https only. */
  iconUrlChars: 2_048,
  topicChars: 500,
  mappings: 20,
  roomIdsPerMapping: 10,
  mappingValueChars: 1_000,
  idempotencyKeyChars: 255,
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
  /**
   * How long a claimed Idempotency-Key waits for its request to finish before a repeat may run. Short: a
   * repeat after it runs with the same attempt id, so the rooms recognise the message (never stored twice),
   * and a sender retrying after a crash waits this long at most.
   */
  idempotencyClaimMs: 15_000,
  wsTicketTtlMs: 60_000,
  historyDefault: 100,
  historyMax: 500,
  /** A history search's text (`q`): characters; its first 32 words are searched. */
  searchChars: 200,
  /** `tail=` on the room WebSocket: replay at most this many of the latest messages. */
  replayTailMax: 1_000,
  /**
   * Room WebSocket flow control (protocol.ts): UTF-8 bytes sent to a viewer and not yet acknowledged.
   * Over this when the room has a frame for it: closed with 4008. A viewer so holds at most this
   * plus one frame (≤ 64 Ki characters, or one larger message) in the runtime's send queue.
   */
  viewerBudgetBytes: 256 * 1024,
  /**
   * WebSockets one room holds (replaying ones included); one more: 503. 100 × (256 KiB + a frame of
   * at most 192 KiB) ≈ 44 MiB of queued frames at worst, inside a Durable Object's 128 MB.
   */
  viewersPerRoom: 100,
  /** A replay page: at most this many messages and about this many characters (one larger message goes alone). */
  replayPageMessages: 200,
  replayPageChars: 64 * 1024,
  /** A room WebSocket is closed with 4440 this long after it opened (reconnect with a fresh ticket or token). */
  socketLifetimeMs: 60 * 60 * 1000,
  /** WebSocket tickets one token may mint per wsTicketTtlMs (used or not); one more: 429. */
  wsTicketsPerToken: 30,
  /** A webhook's delivery log keeps its newest this many requests… */
  deliveryLogPerWebhook: 100,
  /** …and none older than this. */
  deliveryLogTtlMs: 7 * 24 * 60 * 60 * 1000,
  /** `GET /api/v1/webhooks/{id}/deliveries?limit=`: default and maximum. */
  deliveryLogPageDefault: 50,
  deliveryLogPageMax: 100,
  /** Viewer links (chat/viewer-links) one room holds; one more: 409. */
  viewerLinksPerRoom: 20,
  /** A viewer link's label ("Lobby TV"), trimmed, as long as a room's name may be. */
  viewerLinkLabelChars: 100,
  /** A viewer link's `lastUsedAt` is written at most this often (not on every history read). */
  viewerLinkLastUsedMs: 60_000,
} as const;

/**
 * People posting (chat:write), per token (an OAuth client's tokens share their client's): bursts of
 * 20 requests (posts, edits, deletes), 1 per second sustained. A person types; a script that needs
 * more is a webhook.
 */
export const PERSON_RATE_LIMIT: RateLimit = { burst: 20, perSecond: 1 };

/**
 * Token bucket per webhook counting room deliveries, not posts (rate-limit.ts): a post routed to k
 * rooms costs k tokens, so `burst` room deliveries at once, refilled at `perSecond`. A post costing
 * more than `burst` is admitted on a full bucket and leaves it in debt.
 */
export interface RateLimit {
  burst: number;
  perSecond: number;
}

/**
 * The documented default, as Mattermost's rate limiter: bursts of 100, 10 per second sustained, in
 * room deliveries (a single-room webhook: 100 posts, then 10 posts per second).
 */
export const DEFAULT_RATE_LIMIT: RateLimit = { burst: 100, perSecond: 10 };
export const RATE_LIMIT_MAX = { burst: 100_000, perSecond: 100_000 } as const;

export const WEBHOOK_KINDS = ['generic', 'jenkins', 'jira', 'github', 'bitbucket', 'salesforce', 'slack', 'discord'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export const WEBHOOK_PATH = '/webhooks/api/v1/webhook/';

/**
 * A viewer link is the room page's URL with the secret in the fragment (`/rooms/<id>#view=<secret>`):
 * browsers send neither the fragment nor, with the page's no-referrer policy, the URL to anyone, so the
 * secret reaches no server log; the page stores it and removes it from the address bar.
 */
export const VIEWER_LINK_PARAM = 'view';

export function viewerLinkUrl(origin: string, roomId: string, secret: string): string {
  return `${origin}/rooms/${roomId}#${VIEWER_LINK_PARAM}=${secret}`;
}

/** A webhook's icon when it has no `avatarUrl`: one per kind, served with the room page's assets. */
export function defaultIconUrl(kind: string): string {
  return `/assets/chat/icons/${kind}.svg`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Ids this service hands out are lower-case UUIDs from crypto.randomUUID(). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Length in Unicode code points, so an emoji counts as one character, as a person would count it. */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
