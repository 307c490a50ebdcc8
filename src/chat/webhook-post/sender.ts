import { ApiError } from '../../http/api-error';
import { type ImageSigner, proxiedIcon } from '../image-proxy/sign';
import { CHAT_LIMITS, codePointLength } from '../limits';
import type { SenderOverride } from '../integrations';
import type { ChatMessage } from '../protocol';
import { webhookSender, type WebhookRow } from '../webhooks.store';

export type { SenderOverride } from '../integrations';

/**
 * Control characters (C0, DEL, C1) and the invisible ones that reorder or hide text (bidi controls,
 * zero-width characters, line and paragraph separators, BOM): a name with one could pass for another.
 */
const CONTROL_OR_INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/** What is wrong with `value` as an icon URL (https, at most CHAT_LIMITS.iconUrlChars), or undefined. */
export function iconUrlProblem(value: string): string | undefined {
  if (value.length > CHAT_LIMITS.iconUrlChars) return `must be at most ${CHAT_LIMITS.iconUrlChars} characters`;
  if (CONTROL_OR_INVISIBLE.test(value) || /\s/.test(value)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return 'must be an https URL (the room page loads no other images)';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  return undefined;
}

/** What is wrong with `value` (trimmed) as a sender name, or undefined. */
export function senderNameProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  if (codePointLength(value) > CHAT_LIMITS.senderNameChars) return `must be at most ${CHAT_LIMITS.senderNameChars} characters`;
  if (CONTROL_OR_INVISIBLE.test(value)) return 'must not contain control or invisible formatting characters';
  return undefined;
}

/** The post's own sender values that apply (validated, trimmed); none: the webhook's own. */
export interface AppliedOverride {
  name?: string;
  iconUrl?: string;
}

function overrideText(o: { field: string; value: unknown } | undefined, problem: (v: string) => string | undefined): string | undefined {
  if (o === undefined || o.value === undefined || o.value === null) return undefined;
  if (typeof o.value !== 'string') throw ApiError.invalidValue(o.field, `${o.field}: must be a string.`);
  const value = o.value.trim();
  if (value === '') return undefined;
  const wrong = problem(value);
  if (wrong !== undefined) throw ApiError.invalidValue(o.field, `${o.field}: ${wrong}.`);
  return value;
}

/**
 * The post's own sender values (`override`, in its format's spelling) that apply: only where the
 * webhook allows overrides; where it does not, they are not read at all (a sender written for Slack
 * keeps working). A value absent, null or blank is no override; one that is there and wrong is a 400
 * naming its field (a string too long, with a control character, an icon URL that is not https).
 */
export function applicableOverride(hook: WebhookRow, override: SenderOverride | undefined): AppliedOverride {
  if (!hook.allowOverrides || override === undefined) return {};
  const name = overrideText(override.name, senderNameProblem);
  const iconUrl = overrideText(override.iconUrl, iconUrlProblem);
  return { ...(name !== undefined ? { name } : {}), ...(iconUrl !== undefined ? { iconUrl } : {}) };
}

/**
 * Who a post comes from: the webhook's name and icon (webhookSender), each replaced by the post's own
 * that applies. With an image signer an https icon is stored as its signed image-proxy path.
 */
export function senderOf(hook: WebhookRow, applied: AppliedOverride, images?: ImageSigner): ChatMessage['sender'] {
  const own = webhookSender(hook);
  return { name: applied.name ?? own.name, iconUrl: proxiedIcon(applied.iconUrl ?? own.iconUrl, images) };
}
