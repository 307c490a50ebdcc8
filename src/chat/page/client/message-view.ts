/** One message as a list item: avatar, sender, permalink, time, metadata tag, level, body. */
import type { ChatMessage } from '../../protocol';
import { avatarHue, initialOf, levelOf, loadableIcon, senderOf, type Level } from './sender';
import { messageTime } from './time-format';

export interface MessageView {
  readonly seq: number;
  readonly item: HTMLLIElement;
  readonly time: HTMLTimeElement;
  readonly at: Date;
  readonly level: Level;
}

/** The letter avatar: shown when a sender has no icon, or its icon does not load. */
function letterAvatar(name: string): HTMLSpanElement {
  const avatar = document.createElement('span');
  avatar.className = `avatar letter hue-${avatarHue(name)}`;
  avatar.setAttribute('aria-hidden', 'true');
  avatar.textContent = initialOf(name);
  return avatar;
}

function avatarOf(name: string, iconUrl: string | null): HTMLElement {
  const src = loadableIcon(iconUrl, location.href);
  if (src === null) return letterAvatar(name);
  const img = document.createElement('img');
  img.className = 'avatar';
  img.alt = '';
  img.decoding = 'async';
  img.width = 32;
  img.height = 32;
  img.addEventListener('error', () => img.replaceWith(letterAvatar(name)), { once: true });
  img.src = src;
  return img;
}

/**
 * An image of a message comes through this origin's image proxy (src/chat/image-proxy), inside a link to
 * the original. If it does not load (the sender's host is down, too large, not an image), its alt text,
 * else the image's URL, takes its place: the link that the image would be without the proxy, never a
 * broken icon. A listener, since the CSP forbids inline handlers.
 */
function fallBackToText(img: HTMLImageElement): void {
  img.addEventListener(
    'error',
    () => {
      let text = img.alt;
      if (text === '') {
        try {
          text = new URL(img.src).searchParams.get('u') ?? '';
        } catch {
          text = '';
        }
      }
      img.replaceWith(text || 'image');
    },
    { once: true },
  );
}

export function renderMessage(m: ChatMessage, now: Date): MessageView {
  const sender = senderOf(m);
  const level = levelOf(m);
  const at = new Date(m.createdAt);

  const item = document.createElement('li');
  item.className = `message level-${level}${m.deletedAt ? ' deleted' : ''}`;
  item.dataset.seq = String(m.seq);
  item.dataset.level = level;

  const meta = document.createElement('div');
  meta.className = 'meta';
  const name = document.createElement('span');
  name.className = 'sender';
  name.textContent = sender.name;
  const link = document.createElement('a');
  link.className = 'seq';
  link.href = `#${m.seq}`;
  link.textContent = `#${m.seq}`;
  const time = document.createElement('time');
  time.dateTime = m.createdAt;
  time.title = at.toLocaleString();
  time.textContent = messageTime(at, now);
  meta.append(name, ' ', link, ' · ', time);
  if (level !== 'info') {
    const badge = document.createElement('span');
    badge.className = 'level';
    badge.textContent = level;
    meta.append(' ', badge);
  }
  if (m.deletedAt) {
    const gone = document.createElement('span');
    gone.className = 'edited';
    gone.textContent = 'deleted';
    meta.append(' ', gone);
  } else if (m.editedAt) {
    const edited = document.createElement('span');
    edited.className = 'edited';
    edited.title = new Date(m.editedAt).toLocaleString();
    edited.textContent = 'edited';
    meta.append(' ', edited);
  }
  if (m.metadata) {
    const tag = document.createElement('span');
    tag.className = 'tag';
    tag.textContent = m.metadata;
    meta.append(' ', tag);
  }

  const body = document.createElement('div');
  body.className = 'body';
  // A deleted message keeps its place (seq stays gapless) with nothing of what it said.
  if (m.deletedAt) {
    body.classList.add('deleted');
    body.textContent = 'This message was deleted.';
  } else {
    body.innerHTML = m.html; // sanitised on the server when the message was posted; CSP backs it up
    if (m.html.includes('<img')) for (const img of body.querySelectorAll('img')) fallBackToText(img);
  }

  const content = document.createElement('div');
  content.className = 'content';
  content.append(meta, body);
  item.append(avatarOf(sender.name, sender.iconUrl), content);
  return { seq: m.seq, item, time, at, level };
}
