import { Hono, type Context } from 'hono';
import type { AppEnv, Principal } from '../../http/context';
import { requirePermission } from '../../http/auth';
import { jsonBody } from '../../http/json-body';
import { sha256Hex } from '../../http/secrets';
import { validJson } from '../../http/validate';
import { DeliveryError, roomNotFound, storeUnavailable } from '../chat-errors';
import { CHAT_LIMITS, isUuid, PERSON_RATE_LIMIT } from '../limits';
import { imageSigner } from '../image-proxy/sign';
import { renderMarkdown } from '../markdown';
import { uuidParam } from '../params';
import type { ChatMessage } from '../protocol';
import type { ChangeResult, Delivery, MessageEdit } from '../room/types';
import { getRoom } from '../rooms.store';
import { gateStub, roomStub } from '../stubs';
import type { Admission } from '../webhook-gate';
import { admissionError, keyRecord, type KeyRecord } from '../webhook-post/admission';
import { uuidFromName } from '../webhook-post/deliver';
import { messageNotFound } from '../webhook-post/post-webhook';
import { idempotencyKey, messageBodySchema } from '../webhook-post/read-post';

/**
 * People in the room (chat:write): post as themselves, edit and delete their own messages. The same
 * path as a webhook's post from the room on (markdown rendered once, seq given by the room, durable
 * before the answer, an `update` frame for a change); the rate limit and Idempotency-Key live in a
 * WebhookGate named `person:<token id>` (one per token, as a webhook's per webhook).
 */

type MessageBody = { message: string; metadata?: string | null; level?: ChatMessage['level'] | null };

/** The gate of one person: an OAuth client's access tokens share their client's (its id is the principal's). */
function personGate(env: Env, principal: Principal) {
  return gateStub(env, `person:${principal.tokenId}`);
}

/** The sender's name: the token's name, an OAuth client's name, or `admin` (ADMIN_TOKEN). */
async function personName(env: Env, principal: Principal): Promise<string> {
  if (principal.tokenId === 'admin') return 'admin';
  const row = await env.DB.prepare('SELECT name FROM tokens WHERE id = ?1 UNION ALL SELECT name FROM oauth_clients WHERE id = ?1 LIMIT 1')
    .bind(principal.tokenId)
    .first<{ name: string }>();
  return row?.name ?? principal.tokenId;
}

/** Rate limit and idempotency key, as a webhook's post has them; `fingerprint` names the request's content. */
async function admit(
  c: Context<AppEnv>,
  parts: readonly unknown[],
): Promise<{ kind: 'replay'; status: number; body: string } | { kind: 'go'; attempt?: string; key?: KeyRecord }> {
  const key = idempotencyKey((name) => c.req.header(name));
  const gateName = `person:${c.var.principal.tokenId}`;
  let admission: Admission;
  try {
    admission = await personGate(c.env, c.var.principal).admit({
      rateLimit: PERSON_RATE_LIMIT,
      cost: 1,
      idempotency: key === undefined ? undefined : { key, fingerprint: await sha256Hex(JSON.stringify(parts)) },
    });
  } catch (err) {
    console.error('person gate failed', err);
    throw storeUnavailable();
  }
  switch (admission.kind) {
    case 'replay':
      return admission;
    case 'go':
      return {
        kind: 'go',
        attempt: admission.attempt,
        key: key === undefined ? undefined : keyRecord(c.env, gateName, key, admission.claim),
      };
    case 'stale':
      throw new Error('a person has no webhook copy to be stale');
    default:
      throw admissionError(admission, 'You are over your rate limit for posting (requests per token).');
  }
}

function replayed(c: Context<AppEnv>, status: number, body: string): Response {
  return c.body(body, status as 200, { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' });
}

async function existingRoom(c: Context<AppEnv>): Promise<string> {
  const id = c.req.param('id')!;
  if (!(await getRoom(c.var.db, id))) throw roomNotFound();
  return id;
}

const writer = requirePermission('chat:write');
const roomId = uuidParam('No room has this id.');
const bodyLimit = jsonBody(CHAT_LIMITS.webhookBodyBytes);

async function change(c: Context<AppEnv>, edit: (() => MessageEdit) | null, parts: readonly unknown[]): Promise<Response> {
  const id = await existingRoom(c);
  const messageId = c.req.param('messageId')!;
  if (!isUuid(messageId)) throw messageNotFound();
  const admitted = await admit(c, [c.req.method, id, messageId, ...parts]);
  if (admitted.kind === 'replay') return replayed(c, admitted.status, admitted.body);
  let result: ChangeResult;
  try {
    result = await roomStub(c.env, id).change(id, {
      messageId,
      webhookId: '',
      personId: c.var.principal.tokenId,
      edit: edit === null ? null : edit(),
    });
  } catch (err) {
    console.error('change failed', err);
    await admitted.key?.release(true);
    throw new DeliveryError(true);
  }
  if (result.kind === 'not-found') {
    await admitted.key?.release(false);
    throw messageNotFound();
  }
  const text = JSON.stringify({ message: result.message });
  await admitted.key?.complete(200, text);
  return c.body(text, 200, { 'Content-Type': 'application/json' });
}

export const peoplePostRoutes = new Hono<AppEnv>()
  /** A person's post: 201 `{roomId, messageId, seq}`, durable in the room. */
  .post('/api/v1/rooms/:id/messages', writer, roomId, bodyLimit, validJson(messageBodySchema), async (c) => {
    const { message, metadata = null, level } = c.req.valid('json') as MessageBody;
    const [id, name] = await Promise.all([existingRoom(c), personName(c.env, c.var.principal)]);
    const admitted = await admit(c, ['POST', id, message, metadata, level ?? 'info']);
    if (admitted.kind === 'replay') return replayed(c, admitted.status, admitted.body);
    let delivery: Delivery;
    try {
      delivery = await roomStub(c.env, id).append(id, {
        id: admitted.attempt === undefined ? crypto.randomUUID() : await uuidFromName(`${admitted.attempt}/${id}`),
        dedupe: admitted.attempt !== undefined,
        webhookId: '',
        personId: c.var.principal.tokenId,
        markdown: message,
        html: renderMarkdown(message, { images: imageSigner(c.env) }),
        metadata,
        sender: { name, iconUrl: null },
        level: level ?? 'info',
      });
    } catch (err) {
      console.error('append failed', err);
      await admitted.key?.release(true);
      throw new DeliveryError(true);
    }
    const text = JSON.stringify({ roomId: delivery.roomId, messageId: delivery.messageId, seq: delivery.seq });
    await admitted.key?.complete(201, text);
    return c.body(text, 201, { 'Content-Type': 'application/json' });
  })
  /** Edits one's own message: 200 `{message}` (its new version, same seq); another's, or an unknown id: 404. */
  .patch('/api/v1/rooms/:id/messages/:messageId', writer, roomId, bodyLimit, validJson(messageBodySchema), async (c) => {
    const { message, metadata = null, level } = c.req.valid('json') as MessageBody;
    const name = await personName(c.env, c.var.principal);
    return change(
      c,
      () => ({
        markdown: message,
        html: renderMarkdown(message, { images: imageSigner(c.env) }),
        metadata,
        level: level ?? 'info',
        sender: { name, iconUrl: null },
      }),
      [message, metadata, level ?? 'info'],
    );
  })
  /** Deletes one's own message: 200 `{message}` (its tombstone, same seq); repeating it answers the same. */
  .delete('/api/v1/rooms/:id/messages/:messageId', writer, roomId, async (c) => change(c, null, []));
