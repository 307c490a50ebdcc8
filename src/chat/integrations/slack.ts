import { convert, emojify, inline, safeLink, slackDate } from './mrkdwn';
import { count, escLineStart, escPiece, link, metadata, oneLine, TEXT_LIMITS } from './text';
import { colourLevel, mattermostPriorityLevel, mostUrgent } from './level';
import { ignored, message, Unrecognised, withDetails, type NativePost, type Translation } from './types';

/**
 * Slack incoming webhooks (api.slack.com/messaging/webhooks), the format Grafana, Alertmanager
 * (slack_configs), Gatus, Dependency-Track, Capistrano's slackistrano and many others post: `text`
 * (mrkdwn), legacy `attachments`, Block Kit `blocks`, and `username`, `icon_*`, `channel`,
 * `thread_ts`. JSON, or a form with the JSON in `payload=`. Senders are lax (nulls anywhere, nulls
 * inside arrays), so every field is read for what it is and anything else is skipped.
 *
 * Mattermost's incoming webhooks take the same body plus `props` (`props.card`: markdown for its side
 * panel), `priority` and `type`. Its text is standard markdown, not mrkdwn: a body with one of those
 * fields (which Slack has not) is clearly Mattermost's, and its text is read as markdown.
 */

const EXPECTED =
  'A slack webhook takes Slack\'s incoming-webhook JSON with something to show in "text", "attachments" (title, text, fields, fallback…), "blocks" (section, header, context…) or Mattermost\'s "props.card", as JSON or as a form\'s "payload" field; or the generic {"message", "metadata"} body.';

const MAX_ATTACHMENTS = 20;
const MAX_BLOCKS = 50;
const MAX_FIELDS = 10;
const MAX_ELEMENTS = 20;

export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

export function objects(value: unknown, max: number): Obj[] {
  return Array.isArray(value) ? value.filter(isObj).slice(0, max) : [];
}

/** A Block Kit text object (`{type: "mrkdwn" | "plain_text", text}`), or a bare string, as markdown. */
function textObject(value: unknown, options: { maxChars?: number; maxLines?: number } = {}): string {
  if (typeof value === 'string') return convert(value, options);
  if (!isObj(value)) return '';
  const text = str(value.text);
  if (text === undefined) return '';
  return convert(text, { ...options, plain: value.type === 'plain_text' });
}

/** A text object on one line (fields, context elements): inline only, line breaks made spaces. */
function inlineObject(value: unknown): string {
  const text = isObj(value) ? str(value.text) : str(value);
  if (text === undefined) return '';
  const line = oneLine(text, TEXT_LIMITS.bodyChars);
  return isObj(value) && value.type === 'plain_text' ? escPiece(emojify(line)) : inline(line);
}

/** Plain text from the sender (titles, names, footers) on one line, shortcodes read. */
export function plainLine(text: string, max: number = TEXT_LIMITS.title): string {
  return escLineStart(escPiece(emojify(oneLine(text, max))));
}

export function list(items: string[], noun: string, total: number): string {
  const more = total > items.length ? [`- \u2026 and ${count(total - items.length, noun)}`] : [];
  return [...items, ...more].join('\n');
}

/** `- label: value`; a value of several lines goes below its label, indented into the item. */
export function item(label: string, value: string): string {
  const head = label === '' ? '-' : `- **${label}**${value === '' ? '' : ':'}`;
  if (value === '') return head;
  if (!value.includes('\n') && !value.startsWith('>')) return `${head} ${value}`;
  return `${head}\n${value
    .split('\n')
    .map((l) => (l === '' ? '' : `  ${l}`))
    .join('\n')}`;
}

function button(element: Obj): string {
  const url = str(element.url);
  if (url === undefined) return '';
  const label = isObj(element.text) ? (str(element.text.text) ?? 'link') : 'link';
  // Not a link (the URL is not http(s)): its label is text, which may start a line.
  return escLineStart(safeLink(emojify(oneLine(label)), url));
}

export function imageLink(alt: unknown, url: unknown, fallback: string): string {
  const href = str(url);
  if (href === undefined) return '';
  return escLineStart(safeLink(emojify(oneLine(str(alt) ?? fallback)), href));
}

/** rich_text elements (text runs with styles, links, mentions, emoji) as inline markdown. */
function richRuns(elements: unknown): string {
  return objects(elements, 200)
    .map((e) => {
      switch (e.type) {
        case 'text': {
          const text = typeof e.text === 'string' ? e.text : '';
          if (text === '') return '';
          const style = isObj(e.style) ? e.style : {};
          if (style.code === true) return text.trim() === '' ? escPiece(text) : codeSpan(text);
          let out = escPiece(text);
          if (text.trim() === '') return out;
          if (style.bold === true) out = `**${out}**`;
          if (style.italic === true) out = `*${out}*`;
          if (style.strike === true) out = `~~${out}~~`;
          return out;
        }
        case 'link':
          return str(e.url) ? safeLink(str(e.text) ?? '', String(e.url)) : '';
        case 'user':
          return escPiece(`@${str(e.user_id) ?? 'user'}`);
        case 'usergroup':
          return escPiece(`@${str(e.usergroup_id) ?? 'group'}`);
        case 'channel':
          return escPiece(`#${str(e.channel_id) ?? 'channel'}`);
        case 'broadcast':
          return escPiece(`@${str(e.range) ?? 'here'}`);
        case 'emoji':
          return typeof e.unicode === 'string' && /^[0-9a-f-]{2,40}$/i.test(e.unicode)
            ? String.fromCodePoint(...e.unicode.split('-').map((h) => Number.parseInt(h, 16)))
            : escPiece(`:${str(e.name) ?? ''}:`);
        default:
          return '';
      }
    })
    .join('');
}

function codeSpan(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const value = oneLine(text, TEXT_LIMITS.bodyChars);
  const pad = /^[` ]|[` ]$/.test(value) ? ' ' : '';
  return `${fence}${pad}${value}${pad}${fence}`;
}

/** A rich_text run split at its line breaks, each line safe at a line's start. */
function richLines(elements: unknown, prefix = ''): string[] {
  return richRuns(elements)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => `${prefix}${escLineStart(l)}`);
}

function richText(block: Obj): string {
  const out: string[] = [];
  for (const e of objects(block.elements, MAX_ELEMENTS)) {
    if (e.type === 'rich_text_section') out.push(richLines(e.elements).join('\n'));
    else if (e.type === 'rich_text_quote') out.push(richLines(e.elements, '> ').join('\n'));
    else if (e.type === 'rich_text_preformatted') {
      const text = objects(e.elements, 200)
        .map((r) => (typeof r.text === 'string' ? r.text : typeof r.url === 'string' ? r.url : ''))
        .join('');
      if (text.trim() !== '') out.push(convert(`\`\`\`${text}\`\`\``));
    } else if (e.type === 'rich_text_list') {
      const ordered = e.style === 'ordered';
      const items = objects(e.elements, MAX_ELEMENTS).map((section, i) => {
        const body = richLines(section.elements).join(' ');
        return `${ordered ? `${i + 1}.` : '-'} ${body}`;
      });
      out.push(items.join('\n'));
    }
  }
  return out.filter((p) => p !== '').join('\n\n');
}

/** One Block Kit block as markdown; unknown types (and inputs, selects) are skipped. */
function block(b: Obj): string {
  switch (b.type) {
    case 'section': {
      const parts = [textObject(b.text)];
      const fields = objects(b.fields, MAX_FIELDS).map((f) => inlineObject(f));
      if (fields.some((f) => f !== ''))
        parts.push(
          fields
            .filter((f) => f !== '')
            .map((f) => `- ${f}`)
            .join('\n'),
        );
      const accessory = isObj(b.accessory) ? b.accessory : undefined;
      if (accessory?.type === 'button') parts.push(button(accessory));
      if (accessory?.type === 'image') parts.push(imageLink(accessory.alt_text, accessory.image_url, 'image'));
      return parts.filter((p) => p !== '').join('\n\n');
    }
    case 'header': {
      const text = isObj(b.text) ? str(b.text.text) : undefined;
      return text === undefined ? '' : `**${plainLine(text)}**`;
    }
    case 'context': {
      const parts = objects(b.elements, MAX_ELEMENTS)
        .map((e) => (e.type === 'image' ? '' : inlineObject(e)))
        .filter((p) => p !== '');
      return parts.length === 0 ? '' : escLineStart(parts.join(' \u00b7 '));
    }
    case 'divider':
      return '---';
    case 'image': {
      const title = isObj(b.title) ? str(b.title.text) : undefined;
      return imageLink(title ?? b.alt_text, b.image_url, 'image');
    }
    case 'actions': {
      const links = objects(b.elements, MAX_ELEMENTS)
        .filter((e) => e.type === 'button')
        .map(button)
        .filter((l) => l !== '');
      return links.join(' \u00b7 ');
    }
    case 'rich_text':
      return richText(b);
    default:
      return '';
  }
}

function blocks(value: unknown): string {
  const out = objects(value, MAX_BLOCKS).map(block);
  // A divider with nothing shown around it would stand alone: dropped at the ends.
  while (out.length > 0 && (out[0] === '' || out[0] === '---')) out.shift();
  while (out.length > 0 && (out.at(-1) === '' || out.at(-1) === '---')) out.pop();
  return out.filter((p) => p !== '').join('\n\n');
}

/** Slack's named colours and a hex colour's hue, as a level word (and its marker). */
export function level(color: unknown): 'good' | 'warning' | 'danger' | null {
  const c = str(color)?.trim().toLowerCase();
  if (c === undefined) return null;
  if (c === 'good' || c === 'warning' || c === 'danger') return c;
  const hex = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/.exec(c)?.[1];
  if (hex === undefined) return null;
  const full = hex.length === 3 ? [...hex].map((h) => h + h).join('') : hex;
  const [r, g, b] = [0, 2, 4].map((i) => Number.parseInt(full.slice(i, i + 2), 16)) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max - min < 40) return null;
  if (r === max && g < r * 0.6) return 'danger';
  if (r === max || (g === max && r > g * 0.8)) return 'warning';
  if (g === max) return 'good';
  return null;
}

const MARKERS = { good: '\u{1f7e2} ', warning: '\u{1f7e1} ', danger: '\u{1f534} ' } as const;

/** The colour's marker leads a card's first line; a list, quote or code block there keeps its own line. */
export function withMarker(body: string[], lvl: 'good' | 'warning' | 'danger' | null): void {
  if (body.length === 0 || lvl === null) return;
  const first = body[0] ?? '';
  if (/^(?:- |-$|>|\d+[.)] |```)/.test(first)) body.unshift(MARKERS[lvl].trim());
  else body[0] = `${MARKERS[lvl]}${first}`;
}

/** The worst of the colours' levels (the first one when none is a warning or worse). */
export function worstLevel(levels: Array<'good' | 'warning' | 'danger' | null>): 'good' | 'warning' | 'danger' | null {
  const known = levels.filter((l) => l !== null);
  return known.includes('danger') ? 'danger' : known.includes('warning') ? 'warning' : (known[0] ?? null);
}

function attachment(a: Obj, markdown: boolean): string {
  const parts: string[] = [];
  const pretext = str(a.pretext);
  if (pretext !== undefined) parts.push(convert(pretext, { markdown }));

  const body: string[] = [];
  const author = str(a.author_name);
  if (author !== undefined) body.push(escLineStart(link(emojify(author), str(a.author_link))));
  const title = str(a.title);
  if (title !== undefined) {
    const href = str(a.title_link);
    // Inside the bold, nothing is at a line's start: the title is text, or a link when its URL is http(s).
    body.push(`**${href === undefined ? escPiece(emojify(oneLine(title))) : safeLink(emojify(oneLine(title)), href)}**`);
  }
  const text = str(a.text);
  if (text !== undefined) body.push(convert(text, { markdown }));
  const fields = Array.isArray(a.fields) ? a.fields.filter(isObj) : [];
  const shown = fields
    .slice(0, MAX_FIELDS)
    .map((f) => {
      const name = str(f.title);
      const value = typeof f.value === 'string' || typeof f.value === 'number' ? String(f.value) : '';
      if (name === undefined && value.trim() === '') return '';
      return item(name === undefined ? '' : escPiece(emojify(oneLine(name))), value.trim() === '' ? '' : convert(value, { markdown }));
    })
    .filter((f) => f !== '');
  if (shown.length > 0) body.push(list(shown, 'field', fields.length));
  const inner = blocks(a.blocks);
  if (inner !== '') body.push(inner);
  const image = imageLink('image', a.image_url, 'image');
  if (image !== '') body.push(image);
  const thumb = imageLink('thumbnail', a.thumb_url, 'thumbnail');
  if (thumb !== '') body.push(thumb);
  const fallback = str(a.fallback);
  if (body.length === 0 && pretext === undefined && fallback !== undefined) body.push(convert(fallback, { markdown }));

  const footer = [str(a.footer) === undefined ? '' : escPiece(emojify(oneLine(String(a.footer)))), slackDate(a.ts) ?? '']
    .filter((p) => p !== '')
    .join(' \u00b7 ');
  if (footer !== '' && (body.length > 0 || pretext !== undefined)) body.push(`*${escLineStart(footer)}*`);
  else if (footer !== '') body.push(escLineStart(footer));

  withMarker(body, level(a.color));
  parts.push(...body);
  return parts.filter((p) => p !== '').join('\n\n');
}

/** The body as an object: JSON, or the JSON in a form's `payload` field (encoded, or raw as some docs show). */
/**
 * A Slack `message_changed` event (Events API shape, alone or wrapped in `event`), which some senders
 * forward to incoming webhooks: the edited message's text, marked as an edit. Undefined: not one.
 */
function editedMessage(body: Obj): Translation | undefined {
  const event = isObj(body.event) ? body.event : body;
  if (event.type !== 'message' || event.subtype !== 'message_changed' || !isObj(event.message)) return undefined;
  const text = str(event.message.text);
  const shown = text === undefined ? '' : convert(text, {});
  if (shown === '') return ignored('A Slack message_changed event without text: nothing to show.');
  return message(`**Edited:**\n\n${shown}`, metadata('slack:message_changed', [['channel', str(body.channel) ?? str(event.channel)]]));
}

export function readBody(post: NativePost): Obj {
  let body: unknown = post.json;
  if (post.mediaType === 'application/x-www-form-urlencoded') {
    const payload = new URLSearchParams(post.text).get('payload');
    if (payload === null) throw new Unrecognised('A form-encoded Slack message carries its JSON in the "payload" field.', 'payload');
    body = parseJson(payload) ?? parseJson(post.text.replace(/^payload=/, ''));
    if (body === undefined) throw new Unrecognised('The "payload" field of a Slack message must be JSON.', 'payload');
  }
  if (!isObj(body)) throw new Unrecognised(EXPECTED);
  return body;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** True when a JSON body is clearly Slack's: a generic webhook then reads it as such (read-post.ts). */
export function looksLikeSlack(body: unknown): boolean {
  return isObj(body) && (typeof body.text === 'string' || Array.isArray(body.attachments) || Array.isArray(body.blocks));
}

/**
 * A body only Mattermost sends: `props` or `priority` (objects), or a plugin post `type` (Mattermost
 * requires `custom_…`). Slack has none of them, so a Slack body is never read as markdown by mistake.
 */
export function looksLikeMattermost(body: Obj): boolean {
  return isObj(body.props) || isObj(body.priority) || (typeof body.type === 'string' && body.type.startsWith('custom_'));
}

/** Mattermost's message priority label, shown above the message as Mattermost does. */
const PRIORITY_LABELS: Readonly<Record<string, string>> = {
  urgent: '\u{1f6a8} **Urgent**',
  important: '\u2757 **Important**',
};

export function translateSlack(post: NativePost): Translation {
  const body = readBody(post);
  const edited = editedMessage(body);
  if (edited !== undefined) return edited;
  const mattermost = looksLikeMattermost(body);
  const props = isObj(body.props) ? body.props : {};
  const priority = isObj(body.priority) ? str(body.priority.priority)?.trim().toLowerCase() : undefined;
  const parts: string[] = [];
  // Slack shows the blocks when there are any; `text` is then only the notification's fallback.
  const shownBlocks = blocks(body.blocks);
  if (shownBlocks !== '') parts.push(shownBlocks);
  else if (str(body.text) !== undefined) parts.push(convert(String(body.text), { plain: body.mrkdwn === false, markdown: mattermost }));
  // Mattermost keeps a webhook's attachments in `props.attachments`; some senders put them there.
  const attachments = objects(Array.isArray(body.attachments) ? body.attachments : props.attachments, MAX_ATTACHMENTS);
  for (const a of attachments) parts.push(attachment(a, mattermost));
  // Mattermost shows the card in a side panel: here after the message, below a rule.
  const card = str(props.card);
  if (card !== undefined) {
    const shown = convert(card, { markdown: true });
    if (shown !== '') parts.push(parts.some((p) => p !== '') ? `---\n\n${shown}` : shown);
  }
  if (parts.every((p) => p === '')) {
    // Slack's fields are there but every one is null or blank (Zulip's fixtures have such bodies, and
    // Zulip ignores them): acknowledged, nothing stored. A body with none of them is not Slack's.
    if (['text', 'attachments', 'blocks'].some((key) => Object.hasOwn(body, key)) || card !== undefined) {
      return ignored('A Slack message whose every field is empty: nothing to show.');
    }
    throw new Unrecognised(EXPECTED, 'text');
  }
  const label = priority === undefined ? undefined : PRIORITY_LABELS[priority];
  if (label !== undefined) parts.unshift(label);
  const markdown = parts.filter((p) => p !== '').join('\n\n');

  const worst = worstLevel(attachments.map((a) => level(a.color)));
  const meta = metadata('slack:message', [
    ['channel', str(body.channel)],
    ['username', str(body.username)],
    ['icon_emoji', str(body.icon_emoji)],
    ['icon_url', str(body.icon_url)],
    ['thread_ts', str(body.thread_ts) ?? (typeof body.thread_ts === 'number' ? body.thread_ts : undefined)],
    ['level', worst],
    ['format', mattermost ? 'mattermost' : undefined],
    ['type', mattermost ? str(body.type) : undefined],
    ['priority', mattermost ? priority : undefined],
  ]);
  return withDetails(message(markdown, meta), {
    level: mostUrgent([colourLevel(worst), mattermost ? mattermostPriorityLevel(priority) : undefined]),
  });
}
