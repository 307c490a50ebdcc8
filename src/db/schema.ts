import { sql } from 'drizzle-orm';
import { check, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { AGG_USER_METRICS, packedColumns } from './packed-columns';

// ---------------------------------------------------------------------------------------------
// Access tokens. Only the SHA-256 of a token is kept; the token itself is shown once on creation.
// ---------------------------------------------------------------------------------------------
export const tokens = sqliteTable(
  'tokens',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    permissions: text('permissions', { mode: 'json' }).$type<string[]>().notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    revokedAt: text('revoked_at'),
    /** The last request it authenticated, within LAST_USED_RESOLUTION_MS (http/last-used.ts); null: never. */
    lastUsedAt: text('last_used_at'),
  },
  (t) => [uniqueIndex('tokens_token_hash').on(t.tokenHash)],
);

/** Org settings as JSON documents by key (e.g. `servicelevel`). */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value', { mode: 'json' }).notNull(),
  updatedAt: text('updated_at').notNull(),
});

// ---------------------------------------------------------------------------------------------
// Conversation observations.
//
// `conversations` is the raw store: one row per conversation holding every observation derived
// from it (a compact binary BLOB, see analytics/ingest/observation-codec.ts; a TEXT column keeps a
// BLOB as is). It is the idempotency index (an observation's key lives in its conversation's row)
// and the source for queries that the rollups cannot answer. Rows are found by time through `first_emit`.
// ---------------------------------------------------------------------------------------------
export const conversations = sqliteTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    firstEmit: integer('first_emit').notNull(),
    lastEmit: integer('last_emit').notNull(),
    /** Bumped on every write; ingest uses it to detect a concurrent writer (optimistic lock). */
    version: integer('version').notNull(),
    data: text('data').notNull(),
    /**
     * Bit length of last_emit − first_emit (analytics/span-class.ts): raw reads scan each class from
     * its own longest span before the interval, so one far-flung conversation widens only its class.
     * Filled by hand-written migration 0006 for earlier rows.
     */
    spanClass: integer('span_class').notNull().default(0),
    /**
     * The generation of the dimension cube that holds every observation of this conversation
     * (analytics/rollups.ts CUBE_GENERATION; NULL: none). Read only in a database marked `cube:incomplete`
     * (migrations 0016, 0018), whose rows from before are NULL or an earlier generation until the cube's
     * backfill (analytics/ingest/cube-backfill.ts) adds them; elsewhere every row is in the cube, whatever it holds.
     */
    inCube: integer('in_cube'),
  },
  (t) => [index('conversations_span_first_emit').on(t.spanClass, t.firstEmit)],
);

/** Dictionary of dimension values used by the rollups: (dimension, value) -> small integer. */
export const dimValues = sqliteTable(
  'dim_values',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    dim: text('dim').notNull(),
    value: text('value').notNull(),
  },
  (t) => [uniqueIndex('dim_values_dim_value').on(t.dim, t.value)],
);

/**
 * Pre-aggregated rollups, time-partitioned by `slot` (UTC epoch ms of the cell's start) at the
 * resolutions analytics/rollups.ts gives each (`res`: slot width in minutes: 15, 60, 1440; agg_user
 * only 60 and 1440). A dimension id of 0 means "absent". count/sum/min/max stay exact because ingest
 * only ever adds observations it has not seen. The tables are WITHOUT ROWID (clustered on the primary
 * key, which drizzle cannot declare: see migrations/0003_rollups_without_rowid.sql); a change to them
 * needs a hand-written migration that keeps that.
 */
const cellColumns = {
  res: integer('res').notNull(),
  slot: integer('slot').notNull(),
  metric: integer('metric').notNull(),
  media: integer('media').notNull(),
  cnt: integer('cnt').notNull(),
  sum: integer('sum').notNull(),
  mn: integer('mn').notNull(),
  mx: integer('mx').notNull(),
};

export const aggMedia = sqliteTable('agg_media', cellColumns, (t) => [primaryKey({ columns: [t.res, t.slot, t.metric, t.media] })]);

/**
 * The dimension cube (analytics/rollups.ts CUBE_DIMENSIONS; migration 0016, WITHOUT ROWID by hand):
 * agg_dim, the cells of each cube dimension where it is present (`dim` its catalogue index, `value`
 * the id of its value or, multi-valued, of its whole list), keyed dimension first so one
 * dimension's slots are one range; agg_mask, every observation's cells by presence mask (bit
 * DIMENSION_INDEX of each cube dimension present; m0 bits 0-47, m1 bits 48-95).
 */
export const aggDim = sqliteTable('agg_dim', { dim: integer('dim').notNull(), ...cellColumns, value: integer('value').notNull() }, (t) => [
  primaryKey({ columns: [t.dim, t.res, t.slot, t.metric, t.media, t.value] }),
]);

export const aggMask = sqliteTable('agg_mask', { ...cellColumns, m0: integer('m0').notNull(), m1: integer('m1').notNull() }, (t) => [
  primaryKey({ columns: [t.res, t.slot, t.metric, t.media, t.m0, t.m1] }),
]);

/**
 * Declared projections (analytics/rollups.ts PROJECTIONS; migration 0019, WITHOUT ROWID by hand): cells per
 * (projection position, resolution, slot, metric, mediaType, the ids of its dimensions v0…v3, 0 where absent
 * or beyond its width), keyed projection first so one projection's slots are one range.
 */
export const aggProj = sqliteTable(
  'agg_proj',
  {
    proj: integer('proj').notNull(),
    ...cellColumns,
    v0: integer('v0').notNull(),
    v1: integer('v1').notNull(),
    v2: integer('v2').notNull(),
    v3: integer('v3').notNull(),
  },
  (t) => [primaryKey({ columns: [t.proj, t.res, t.slot, t.metric, t.media, t.v0, t.v1, t.v2, t.v3] })],
);

export const aggQueue = sqliteTable(
  'agg_queue',
  { ...cellColumns, direction: integer('direction').notNull(), queue: integer('queue').notNull() },
  (t) => [primaryKey({ columns: [t.res, t.slot, t.metric, t.media, t.direction, t.queue] })],
);

/**
 * agg_user is packed (migration 0005): one row per (res, slot, media, direction, queue, user), with
 * count/sum/min/max columns per metric of AGG_USER_METRICS (mn/mx NULL where the row holds no
 * observation of that metric). 90 columns of D1's 100.
 */
export const aggUser = sqliteTable(
  'agg_user',
  {
    res: integer('res').notNull(),
    slot: integer('slot').notNull(),
    media: integer('media').notNull(),
    direction: integer('direction').notNull(),
    queue: integer('queue').notNull(),
    user: integer('user').notNull(),
    ...Object.fromEntries(
      AGG_USER_METRICS.map(packedColumns).flatMap((m) => [
        [m.cnt, integer(m.cnt).notNull().default(0)],
        [m.sum, integer(m.sum).notNull().default(0)],
        [m.mn, integer(m.mn)],
        [m.mx, integer(m.mx)],
      ]),
    ),
  },
  (t) => [
    primaryKey({ columns: [t.res, t.slot, t.media, t.direction, t.queue, t.user] }),
    index('agg_user_by_user').on(t.user, t.res, t.slot),
  ],
);

/**
 * agg_user's companion (migration 0011, WITHOUT ROWID like the others): the agent metrics agg_user has
 * no columns for (analytics/rollups.ts USER_MORE), one row per metric, so a metric added to the
 * catalogue needs no migration.
 */
export const aggUserMore = sqliteTable(
  'agg_user_more',
  { ...cellColumns, direction: integer('direction').notNull(), queue: integer('queue').notNull(), user: integer('user').notNull() },
  (t) => [
    primaryKey({ columns: [t.res, t.slot, t.metric, t.media, t.direction, t.queue, t.user] }),
    index('agg_user_more_by_user').on(t.user, t.res, t.slot),
  ],
);

/** The rollup tables by name (analytics/rollups.ts Rollup.table), for code that finds one's keys from its name. */
export const ROLLUP_SCHEMA = {
  agg_media: aggMedia,
  agg_queue: aggQueue,
  agg_user: aggUser,
  agg_user_more: aggUserMore,
  agg_dim: aggDim,
  agg_proj: aggProj,
} as const;

/**
 * An ingest batch inserts the number of conversations that changed since it read them; the CHECK
 * makes a non-zero count abort the whole D1 batch (a transaction), so the writer retries.
 */
export const ingestGuard = sqliteTable('ingest_guard', { conflicts: integer('conflicts').notNull() }, (t) => [
  check('ingest_guard_no_conflicts', sql`${t.conflicts} = 0`),
]);

/** Small integer facts about the data, e.g. `span_class:<c>`: the longest span seen in span class c (bounds raw scans). */
export const meta = sqliteTable('meta', {
  key: text('key').primaryKey(),
  value: integer('value').notNull(),
});

// ---------------------------------------------------------------------------------------------
// Chat: rooms, incoming webhooks, messages (the system of record; each room's Durable Object
// assigns `seq` and flushes here), and short-lived WebSocket tickets for the room page.
// ---------------------------------------------------------------------------------------------
export const rooms = sqliteTable(
  'rooms',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    topic: text('topic'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('rooms_created_at').on(t.createdAt)],
);

/** One content-routing rule of a webhook (see chat/routing.ts). */
export interface WebhookMapping {
  field: 'message' | 'metadata';
  match: 'exact' | 'contains' | 'prefix';
  value: string;
  roomIds: string[];
}

/**
 * `id` is public: messages, history and WebSocket frames carry it, and the webhook's gate is named by
 * it. The URL carries a separate posting secret (`post_secret`), which only the admin API shows: posts
 * find the row by `post_secret_hash` (its SHA-256), so lookup timing says nothing about the secret.
 * Rotation replaces both secret columns at once and keeps `id`. Both are null for a webhook that
 * migration 0007 left without a URL until it is rotated.
 */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    postSecret: text('post_secret'),
    postSecretHash: text('post_secret_hash'),
    name: text('name').notNull(),
    kind: text('kind').notNull(),
    roomId: text('room_id').notNull(),
    active: integer('active', { mode: 'boolean' }).notNull(),
    mappings: text('mappings', { mode: 'json' }).$type<WebhookMapping[]>().notNull(),
    rateBurst: integer('rate_burst').notNull(),
    ratePerSecond: real('rate_per_second').notNull(),
    /**
     * Shared secret for the sender's HMAC signature (github, bitbucket, jira), or null. Kept as
     * written: verifying a signature needs the secret itself, and a key held by this same Worker
     * would add nothing over D1's own protection (see README). Never returned by the API.
     */
    secret: text('secret'),
    /** The webhook's own icon (https), shown with its messages; null: the default icon of its kind. */
    avatarUrl: text('avatar_url'),
    /** Whether a post may name its own sender (`username`, `iconUrl`…); off by default: anyone with the URL could pose as anyone. */
    allowOverrides: integer('allow_overrides', { mode: 'boolean' }).notNull().default(false),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('webhooks_post_secret_hash').on(t.postSecretHash), index('webhooks_room_id').on(t.roomId)],
);

/**
 * Written only by a room's Durable Object flush (INSERT .. ON CONFLICT DO NOTHING, so retries are harmless;
 * a change of a stored message: UPDATE .. WHERE version < the change's, so never an older version).
 * The sender and level are fixed when the message is posted (protocol.ts, ChatMessage); migration 0010
 * filled them for earlier rows from their webhook as it was then.
 */
export const messages = sqliteTable(
  'messages',
  {
    id: text('id').primaryKey(),
    roomId: text('room_id').notNull(),
    seq: integer('seq').notNull(),
    webhookId: text('webhook_id').notNull(),
    markdown: text('markdown').notNull(),
    html: text('html').notNull(),
    metadata: text('metadata'),
    senderName: text('sender_name').notNull().default(''),
    senderIconUrl: text('sender_icon_url'),
    /** One of protocol.ts's MESSAGE_LEVELS (the database floor imports nothing from chat/). */
    level: text('level').$type<'info' | 'success' | 'warning' | 'critical'>().notNull().default('info'),
    createdAt: text('created_at').notNull(),
    /**
     * A person's message (chat:write): the id of the token that posted it (an OAuth client's id;
     * `admin`), `webhook_id` then being ''. Null for a webhook's message.
     */
    personId: text('person_id'),
    /** Set by an edit (PATCH, or a keyed post replacing it); the message keeps its seq. */
    editedAt: text('edited_at'),
    /** Set by a delete: markdown, html and metadata are emptied and the row stays as a tombstone at its seq. */
    deletedAt: text('deleted_at'),
    /** 0 as posted, +1 per edit or delete: a room's flush only ever replaces a row by a later version. */
    version: integer('version').notNull().default(0),
  },
  (t) => [uniqueIndex('messages_room_seq').on(t.roomId, t.seq)],
);

/**
 * Each webhook's recent deliveries, refusals included (webhook-post/delivery-log.ts): the newest
 * CHAT_LIMITS.deliveryLogPerWebhook per webhook, none older than CHAT_LIMITS.deliveryLogTtlMs
 * (pruned as new ones are written). `at` is epoch ms; `id` orders them and pages the list.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    webhookId: text('webhook_id').notNull(),
    at: integer('at').notNull(),
    /** PATCH, DELETE or POST, as the sender called. */
    method: text('method').notNull(),
    status: integer('status').notNull(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    /** The stored message (the first room's, when routed to several) and its seq: null for a refusal. */
    messageId: text('message_id'),
    roomId: text('room_id'),
    seq: integer('seq'),
    /** The request body's length in bytes. */
    bytes: integer('bytes').notNull(),
  },
  (t) => [index('webhook_deliveries_webhook_id').on(t.webhookId, t.id)],
);

/**
 * Single-use, single-room WebSocket tickets; only the SHA-256 is kept. A used ticket stays (with
 * `used_at`) until it expires, so a token's tickets per minute can be counted (migration 0008).
 */
export const wsTickets = sqliteTable(
  'ws_tickets',
  {
    ticketHash: text('ticket_hash').primaryKey(),
    roomId: text('room_id').notNull(),
    tokenId: text('token_id').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [index('ws_tickets_expires_at').on(t.expiresAt), index('ws_tickets_token_expires_at').on(t.tokenId, t.expiresAt)],
);

/**
 * The rooms where a token opened a WebSocket within the socket lifetime: revoking the token tells
 * these rooms to close its sockets. One row per (token, room), refreshed on every upgrade.
 */
export const viewerSessions = sqliteTable(
  'viewer_sessions',
  {
    tokenId: text('token_id').notNull(),
    roomId: text('room_id').notNull(),
    openedAt: integer('opened_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.roomId] }), index('viewer_sessions_opened_at').on(t.openedAt)],
);

/**
 * Read-only links to one room (chat/viewer-links): only the SHA-256 of the secret is kept; the secret
 * is shown once, on creation and on rotation. `principal_id` is who the current secret acts as
 * (WebSocket tickets, sockets, viewer_sessions): rotation replaces it with the secret, so what the old
 * secret opened stops being honoured. Deleting the room deletes its links.
 */
export const viewerLinks = sqliteTable(
  'viewer_links',
  {
    id: text('id').primaryKey(),
    roomId: text('room_id')
      .notNull()
      .references(() => rooms.id, { onDelete: 'cascade' }),
    label: text('label').notNull(),
    secretHash: text('secret_hash').notNull(),
    principalId: text('principal_id').notNull(),
    createdAt: text('created_at').notNull(),
    rotatedAt: text('rotated_at'),
    lastUsedAt: text('last_used_at'),
  },
  (t) => [
    uniqueIndex('viewer_links_secret_hash').on(t.secretHash),
    uniqueIndex('viewer_links_principal_id').on(t.principalId),
    index('viewer_links_room_id').on(t.roomId, t.createdAt),
  ],
);

/**
 * OAuth 2 clients (client-credentials grant, as Genesys Cloud has it). Only the SHA-256 of the secret
 * is kept; the secret is shown once, on creation. A revoked client keeps its row (audits) and loses
 * every access token issued to it.
 */
export const oauthClients = sqliteTable('oauth_clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  permissions: text('permissions', { mode: 'json' }).$type<string[]>().notNull(),
  secretHash: text('secret_hash').notNull(),
  accessTokenValiditySeconds: integer('access_token_validity_seconds').notNull(),
  createdAt: text('created_at').notNull(),
  revokedAt: text('revoked_at'),
  /**
   * The last time it got an access token or one of its access tokens authenticated a request, within
   * LAST_USED_RESOLUTION_MS (http/last-used.ts); null: never.
   */
  lastUsedAt: text('last_used_at'),
});

/**
 * Access tokens issued by `POST /oauth/token`, by SHA-256. Expired rows are pruned when their client
 * asks for another token; a client holds at most OAUTH_LIMITS.liveTokensPerClient of them.
 */
export const oauthAccessTokens = sqliteTable(
  'oauth_access_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id),
    issuedAt: integer('issued_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('oauth_access_tokens_client_expires_at').on(t.clientId, t.expiresAt)],
);

/**
 * Asynchronous aggregate jobs (analytics/jobs): the validated query, its state (Genesys' names:
 * QUEUED, PENDING, FULFILLED, FAILED, CANCELLED; EXPIRED is told from `expires_at`), the units still
 * to answer (JSON, analytics/jobs/job-units.ts) and how many pages of results are written. Epoch ms.
 */
export const aggregateJobs = sqliteTable(
  'aggregate_jobs',
  {
    id: text('id').primaryKey(),
    query: text('query', { mode: 'json' }).notNull(),
    state: text('state').notNull(),
    errorMessage: text('error_message'),
    pending: text('pending', { mode: 'json' }).notNull(),
    pages: integer('pages').notNull().default(0),
    resultBytes: integer('result_bytes').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    submittedAt: integer('submitted_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    completedAt: integer('completed_at'),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('aggregate_jobs_expires').on(t.expiresAt), index('aggregate_jobs_state').on(t.state)],
);

/** A job's results, page by page: `results` is the JSON array of the page's `{group, data}` entries. */
export const aggregateJobPages = sqliteTable(
  'aggregate_job_pages',
  {
    jobId: text('job_id').notNull(),
    page: integer('page').notNull(),
    results: text('results').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.page] })],
);
