import { CHAT_LIMITS, codePointLength } from '../limits';
import { translateBitbucket } from './bitbucket';
import { translateDiscord } from './discord';
import { translateGitHub } from './github';
import { translateJenkins } from './jenkins';
import { translateJira } from './jira';
import { translateSalesforce } from './salesforce';
import { isObj, readBody, translateSlack } from './slack';
import { truncate } from './text';
import { Unrecognised, type NativeKind, type NativeMediaType, type NativePost, type SenderOverride, type Translation } from './types';

export {
  isNativeKind,
  NATIVE_KINDS,
  type NativeKind,
  type NativeMediaType,
  type NativePost,
  type SenderOverride,
  type Translation,
} from './types';
export { SOAP_ACK } from './salesforce';
export { looksLikeDiscord } from './discord';
export { looksLikeSlack } from './slack';

const TRANSLATORS: Readonly<Record<NativeKind, (post: NativePost) => Translation>> = {
  github: translateGitHub,
  bitbucket: translateBitbucket,
  jira: translateJira,
  jenkins: translateJenkins,
  salesforce: translateSalesforce,
  slack: translateSlack,
  discord: translateDiscord,
};

/** What each kind's native payload may come as (the generic body is JSON for every kind). */
export const NATIVE_MEDIA_TYPES: Readonly<Record<NativeKind, readonly NativeMediaType[]>> = {
  github: ['application/json', 'application/x-www-form-urlencoded'],
  bitbucket: ['application/json'],
  jira: ['application/json'],
  jenkins: ['application/json'],
  salesforce: ['application/json', 'text/xml'],
  slack: ['application/json', 'application/x-www-form-urlencoded'],
  discord: ['application/json', 'multipart/form-data'],
};

/**
 * Kinds whose sender signs deliveries with a shared secret: HMAC-SHA256 of the body bytes, hex, as
 * `sha256=<hex>` in this header (GitHub; Bitbucket Cloud and Jira use the WebSub header name).
 */
export const SIGNATURE_HEADERS: Readonly<Partial<Record<NativeKind, string>>> = {
  github: 'X-Hub-Signature-256',
  bitbucket: 'X-Hub-Signature',
  jira: 'X-Hub-Signature',
};

export function takesSecret(kind: string): boolean {
  return Object.hasOwn(SIGNATURE_HEADERS, kind);
}

/** A message within the post limits whatever the payload: translators keep far below, this is the backstop. */
function withinLimits(translation: Translation): Translation {
  if (translation.kind !== 'message') return translation;
  let { markdown } = translation;
  if (codePointLength(markdown) > CHAT_LIMITS.messageChars) {
    // Cut at a line break so no link or code span is left half-written.
    const cut = truncate(markdown, CHAT_LIMITS.messageChars - 2);
    markdown = `${cut.slice(0, Math.max(cut.lastIndexOf('\n'), 0))}\n\u2026`;
  }
  return { ...translation, markdown, metadata: truncate(translation.metadata, CHAT_LIMITS.metadataChars) };
}

/**
 * Turns a tool's own payload into a message and its metadata, or says it is deliberately not shown,
 * or that it is not this tool's payload. Pure: no I/O.
 */
export function translate(kind: NativeKind, post: NativePost): Translation {
  try {
    return withinLimits(TRANSLATORS[kind](post));
  } catch (err) {
    if (err instanceof Unrecognised) return { kind: 'unrecognised', expected: err.message, fieldName: err.fieldName };
    throw err;
  }
}

/**
 * The sender a post names for itself, in its format's spelling: Slack's and Mattermost's
 * `username`/`icon_url`, Discord's `username`/`avatar_url` (a Slack body sent to a discord webhook is
 * Slack's). `translation` is the post's (its metadata says which format it was read as). None for
 * the other kinds: their payloads name a tool's user, not who the message is from.
 */
export function senderOverride(post: NativePost, translation: Translation): SenderOverride | undefined {
  if (translation.kind !== 'message') return undefined;
  const format = translation.metadata.startsWith('slack:') ? 'slack' : translation.metadata.startsWith('discord:') ? 'discord' : null;
  if (format === null) return undefined;
  let body: unknown;
  try {
    body = format === 'slack' ? readBody(post) : post.json;
  } catch {
    return undefined;
  }
  if (!isObj(body)) return undefined;
  const icon = format === 'slack' ? 'icon_url' : 'avatar_url';
  return { name: { field: 'username', value: body.username }, iconUrl: { field: icon, value: body[icon] } };
}
