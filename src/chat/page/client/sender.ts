/**
 * Who sent a message and how urgent it is. `sender` and `level` are read defensively: a message
 * from a server (or a stored history) without them still shows, as its webhook with level info.
 */
import { type ChatMessage, isMessageLevel, type MessageLevel } from '../../protocol';

export type Level = MessageLevel;

export interface Sender {
  name: string;
  iconUrl: string | null;
}

/** The fields a message carries about its sender and urgency, as an older server or history may lack them. */
interface Identity {
  sender: { name?: unknown; iconUrl?: unknown } | null;
  level: unknown;
}

/** Avatar colours (room.css `.hue-0` … `.hue-11`). */
export const AVATAR_HUES = 12;

/**
 * A message as received, with `sender` and `level` filled in when it came without them (a server
 * or a stored message from before they existed), so it passes `isChatMessage` and shows.
 */
export function withIdentity(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const m = value as Record<string, unknown>;
  if (m.sender !== undefined && m.level !== undefined) return value;
  const webhookId = typeof m.webhookId === 'string' ? m.webhookId : '';
  return {
    ...m,
    sender: m.sender ?? { name: `Webhook ${webhookId.slice(0, 8)}`, iconUrl: null },
    level: m.level ?? 'info',
  };
}

export function senderOf(m: ChatMessage): Sender {
  const sender = (m as Partial<Identity>).sender;
  const name = typeof sender?.name === 'string' && sender.name.trim() !== '' ? sender.name : `Webhook ${m.webhookId.slice(0, 8)}`;
  const iconUrl = typeof sender?.iconUrl === 'string' && sender.iconUrl !== '' ? sender.iconUrl : null;
  return { name, iconUrl };
}

export function levelOf(m: ChatMessage): Level {
  const level = (m as Partial<Identity>).level;
  return isMessageLevel(level) ? level : 'info';
}

/** The same name always gets the same colour (FNV-1a of its UTF-16 units). */
export function avatarHue(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % AVATAR_HUES;
}

/** The first letter (a whole code point, upper-cased) of a name, for the letter avatar. */
export function initialOf(name: string): string {
  const first = [...name.trim()][0];
  return first === undefined ? '?' : first.toLocaleUpperCase();
}

/**
 * An icon URL the page may load: one on the page's own origin (the kinds' icons, and an https icon
 * stored as its signed image-proxy path, src/chat/image-proxy); anything else (a `javascript:` or
 * `data:` URL, another host: an icon posted while the Worker had no IMAGE_PROXY_KEY) is not tried and
 * the letter avatar shows at once. An icon that fails to load is replaced by the letter avatar too.
 */
export function loadableIcon(iconUrl: string | null, base: string): string | null {
  if (iconUrl === null) return null;
  let url: URL;
  try {
    url = new URL(iconUrl, base);
  } catch {
    return null;
  }
  // Same-origin only: the page's CSP (img-src 'self', one rule with the renderer's: docs/markdown.md)
  // would block any other host, and a blocked image is a broken icon and a CSP report.
  return url.origin === new URL(base).origin ? url.href : null;
}
