import { DeliveryError } from '../chat-errors';
import type { ChatMessage, MessageLevel } from '../protocol';
import type { Delivery, MessageDraft } from '../room/types';
import { gateStub, roomStub } from '../stubs';
import type { Outcome } from '../webhook-gate';

export interface PostedMessage {
  /** '' for a person's message. */
  webhookId: string;
  /** A person's message: their token's id. */
  personId?: string | null;
  /** Replace the message last posted with this key in each room (see MessageDraft.key). */
  key?: string;
  markdown: string;
  html: string;
  metadata: string | null;
  sender: ChatMessage['sender'];
  level: MessageLevel;
}

export interface DeliveryResult {
  /** 200: ordered in every room. 202: durable in every room, ordering still pending in some (`seq: null`). */
  status: 200 | 202;
  deliveries: { roomId: string; messageId: string; seq: number | null; replaced?: boolean }[];
}

const COMMIT_RETRIES_MS = [50, 200, 800];

/** A UUID (version 8: name-based, custom) from SHA-256 of `name`: the same name, the same id. */
export async function uuidFromName(name: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(name))).slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Stores a posted message in every target room; resolves only once it is durable in all of them.
 * Otherwise throws DeliveryError (503), having stored nothing anywhere, or, when a room's answer was
 * lost, flagged `maybeStored`. With an idempotency `attempt`, message ids derive from it, so a
 * retry of that attempt is recognised by the rooms and never stored twice.
 *
 * One room: a single call; the room orders, persists and broadcasts it in one step.
 *
 * Several rooms: two-phase commit, the webhook's gate being the coordinator.
 * 1. prepare in every room (in parallel): each keeps the draft durably, unseen and without a seq;
 * 2. all prepared: ask the gate to record "commit" (one durable write: the decision that counts).
 *    A prepare failed: record "abort", drop the prepared drafts, answer 503;
 * 3. commit in every room: each gives the draft its seq and broadcasts it. Commits are idempotent
 *    and retried here; if a room stays unreachable, its prepared draft is durable and the decision
 *    recorded, so the room commits it by itself (its alarm asks the gate after PREPARE_TIMEOUT_MS)
 *    and the answer is 202 with `seq: null` for that room.
 * If this Worker dies before step 2, rooms holding a stale prepared draft ask the gate, which then
 * records "abort" (a late "commit" request gets "abort" back). Rooms only ever follow the gate's one
 * decision, so a message is never seen in some of its rooms and not in the others.
 */
export async function deliver(env: Env, roomIds: readonly string[], posted: PostedMessage, attempt?: string): Promise<DeliveryResult> {
  const drafts = await Promise.all(
    roomIds.map(async (roomId) => ({
      roomId,
      draft: {
        ...posted,
        id: attempt === undefined ? crypto.randomUUID() : await uuidFromName(`${attempt}/${roomId}`),
        dedupe: attempt !== undefined,
      } satisfies MessageDraft,
    })),
  );

  // A keyed post replaces a message in each room on its own (no two-phase commit: a replacement is
  // not a new message that could be seen in some rooms and not others; a retry converges).
  if (drafts.length === 1 || posted.key !== undefined) {
    let deliveries: Delivery[];
    try {
      deliveries = await Promise.all(drafts.map(({ roomId, draft }) => roomStub(env, roomId).append(roomId, draft)));
    } catch (err) {
      console.error('append failed', err);
      throw new DeliveryError(true);
    }
    return { status: 200, deliveries };
  }

  const txId = crypto.randomUUID();
  const gate = gateStub(env, posted.webhookId);
  const prepared = await Promise.allSettled(
    drafts.map(({ roomId, draft }) => roomStub(env, roomId).prepare(roomId, txId, posted.webhookId, draft)),
  );
  let outcome: Outcome | 'unknown';
  if (prepared.every((p) => p.status === 'fulfilled')) {
    try {
      outcome = await gate.decide(txId, 'commit');
    } catch (err) {
      console.error('commit decision failed', err);
      // Unknown whether "commit" was recorded: asking again finds it, or records "abort".
      outcome = await gate.decide(txId, 'abort').catch(() => 'unknown' as const);
    }
  } else {
    console.error(
      'prepare failed',
      prepared.find((p) => p.status === 'rejected'),
    );
    // Nobody asked for "commit": if this fails, the rooms' own settling will record "abort".
    await gate.decide(txId, 'abort').catch(() => undefined);
    outcome = 'abort';
  }
  if (outcome === 'unknown') throw new DeliveryError(true); // the rooms will follow whatever the gate holds
  if (outcome === 'abort') {
    await Promise.allSettled(drafts.map(({ roomId }) => roomStub(env, roomId).abort(roomId, txId)));
    throw new DeliveryError(false);
  }

  const deliveries = await Promise.all(drafts.map(({ roomId, draft }) => commitWithRetry(env, roomId, txId, draft.id)));
  return { status: deliveries.every((d) => d.seq !== null) ? 200 : 202, deliveries };
}

async function commitWithRetry(env: Env, roomId: string, txId: string, messageId: string): Promise<DeliveryResult['deliveries'][number]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await roomStub(env, roomId).commit(roomId, txId);
    } catch (err) {
      const wait = COMMIT_RETRIES_MS[attempt];
      if (wait === undefined) {
        console.error(`commit of ${txId} in room ${roomId} still failing; the room will settle it`, err);
        return { roomId, messageId, seq: null };
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
