import type { z } from 'zod';
import type { WebhookKind } from '../limits';
import type { MessageLevel } from '../protocol';

/** Webhook kinds that take their tool's own payload (besides the generic body). */
export type NativeKind = Exclude<WebhookKind, 'generic'>;

export const NATIVE_KINDS: readonly NativeKind[] = ['github', 'bitbucket', 'jira', 'jenkins', 'salesforce', 'slack', 'discord'];

export function isNativeKind(kind: string): kind is NativeKind {
  return (NATIVE_KINDS as readonly string[]).includes(kind);
}

/** Media types a native payload may come in (the generic body is always JSON). */
export type NativeMediaType = 'application/json' | 'application/x-www-form-urlencoded' | 'text/xml' | 'multipart/form-data';

/** One post to a non-generic webhook, as the route read it. */
export interface NativePost {
  mediaType: NativeMediaType;
  /** The body as UTF-8 text. */
  text: string;
  /** The parsed body when it is JSON (for a multipart form: its `payload_json` field). */
  json?: unknown;
  /** A multipart form's file names (Discord's attachments): named, their content is not kept. */
  files?: string[];
  header(name: string): string | undefined;
}

/** A delivery id the sender provides (a redelivery carries the same one); it becomes the idempotency key. */
export interface DeliveryKey {
  id: string;
  /**
   * A redelivery may carry newer content (Salesforce sends a record's latest values): the id alone
   * then decides that it is the same delivery. Otherwise the message must match too, as for keys.
   */
  contentMayChange?: boolean;
}

/**
 * The sender a post names for itself, in its format's spelling (`field`, quoted in a 400): read only
 * where the webhook allows overrides (webhook-post/sender.ts validates and applies it). A value
 * absent, null or blank is no override.
 */
export interface SenderOverride {
  name?: { field: string; value: unknown };
  iconUrl?: { field: string; value: unknown };
}

export type Translation =
  | {
      kind: 'message';
      markdown: string;
      metadata: string;
      deliveryKey?: DeliveryKey;
      /** Derived from the payload (a failed build, a P1 issue, a red attachment); absent: info. */
      level?: MessageLevel;
    }
  /** Recognised, deliberately not shown: 200 with no delivery. */
  | { kind: 'ignored'; reason: string }
  /** Not this tool's payload: 400 saying what was expected. */
  | { kind: 'unrecognised'; expected: string; fieldName: string };

/** Thrown inside a translator when the payload does not have the shape its event promises. */
export class Unrecognised extends Error {
  constructor(
    message: string,
    readonly fieldName = 'body',
  ) {
    super(message);
  }
}

/** Parses `value` with `schema`, or throws Unrecognised naming the first field that does not fit. */
export function expectShape<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue
    ? issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '')
    : '';
  throw new Unrecognised(`Not a ${what}: ${path ? `${path}: ` : ''}${issue?.message ?? 'unexpected shape'}.`);
}

export function message(markdown: string, metadata: string, deliveryKey?: DeliveryKey): Translation {
  return deliveryKey ? { kind: 'message', markdown, metadata, deliveryKey } : { kind: 'message', markdown, metadata };
}

/** The translation with its level (none: info), when it is a message. */
export function withDetails(translation: Translation, details: { level?: MessageLevel }): Translation {
  if (translation.kind !== 'message' || details.level === undefined) return translation;
  return { ...translation, level: details.level };
}

export function ignored(reason: string): Translation {
  return { kind: 'ignored', reason };
}
