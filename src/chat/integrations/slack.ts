import { convert, emojify, inline, safeLink, slackDate } from './mrkdwn';
import { count, escLineStart, escPiece, link, metadata, oneLine, TEXT_LIMITS } from './text';
import { message, Unrecognised, type NativePost, type Translation } from './types';

/**
 * Slack incoming webhooks (api.slack.com/messaging/webhooks), the format Grafana, Alertmanager
 * (slack_configs), Gatus, Dependency-Track, Capistrano's slackistrano and many others post: `text`
 * (mrkdwn), legacy `attachments`, Block Kit `blocks`, and `username`, `icon_*`, `channel`,
 * `thread_ts`. JSON, or a form with the JSON in `payload=`. Senders are lax (nulls anywhere, nulls
 * inside arrays), so every field is read for what it is and anything else is skipped.
 */

const EXPECTED =
  'A slack webhook takes Slack\'s incoming-webhook JSON with something to show in "text", "attachments" (title, text, fields, fallback…) or "blocks" (section, header, context…), as JSON or as a form\'s "payload" field; or the generic {"message", "metadata"} body.';

const MAX_ATTACHMENTS = 20;
const MAX_BLOCKS = 50;
const MAX_FIELDS = 10;
const MAX_ELEMENTS = 20;

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function objects(value: unknown, max: number): Obj[] {
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
function plainLine(text: string, max: number = TEXT_LIMITS.title): string {
  return escLineStart(escPiece(emojify(oneLine(text, max))));
}

function list(items: string[], noun: string, total: number): string {
  const more = total > items.length ? [`- \u2026 and ${count(total - items.length, noun)}`] : [];
  return [...items, ...more].join('\n');
}

/** `- label: value`; a value of several lines goes below its label, indented into the item. */
function item(label: string, value: string): string {
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
  return safeLink(emojify(oneLine(label)), url);
}

function imageLink(alt: unknown, url: unknown, fallback: string): string {
  const href = str(url);
  if (href === undefined) return '';
  return safeLink(emojify(oneLine(str(alt) ?? fallback)), href);
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

function attachment(a: Obj): string {
  const parts: string[] = [];
  const pretext = str(a.pretext);
  if (pretext !== undefined) parts.push(convert(pretext));

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
  if (text !== undefined) body.push(convert(text));
  const fields = Array.isArray(a.fields) ? a.fields.filter(isObj) : [];
  const shown = fields
    .slice(0, MAX_FIELDS)
    .map((f) => {
      const name = str(f.title);
      const value = typeof f.value === 'string' || typeof f.value === 'number' ? String(f.value) : '';
      if (name === undefined && value.trim() === '') return '';
      return item(name === undefined ? '' : escPiece(emojify(oneLine(name))), value.trim() === '' ? '' : convert(value));
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
  if (body.length === 0 && pretext === undefined && fallback !== undefined) body.push(convert(fallback));

  const footer = [str(a.footer) === undefined ? '' : escPiece(emojify(oneLine(String(a.footer)))), slackDate(a.ts) ?? '']
    .filter((p) => p !== '')
    .join(' \u00b7 ');
  if (footer !== '' && (body.length > 0 || pretext !== undefined)) body.push(`*${escLineStart(footer)}*`);
  else if (footer !== '') body.push(escLineStart(footer));

  const lvl = level(a.color);
  // The colour's marker leads the attachment's first line; a list or quote there keeps its own line.
  if (body.length > 0 && lvl !== null) {
    const first = body[0] ?? '';
    if (/^(?:- |-$|>|\d+[.)] |```)/.test(first)) body.unshift(MARKERS[lvl].trim());
    else body[0] = `${MARKERS[lvl]}${first}`;
  }
  parts.push(...body);
  return parts.filter((p) => p !== '').join('\n\n');
}

/** The body as an object: JSON, or the JSON in a form's `payload` field (encoded, or raw as some docs show). */
function readBody(post: NativePost): Obj {
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

export function translateSlack(post: NativePost): Translation {
  const body = readBody(post);
  const parts: string[] = [];
  // Slack shows the blocks when there are any; `text` is then only the notification's fallback.
  const shownBlocks = blocks(body.blocks);
  if (shownBlocks !== '') parts.push(shownBlocks);
  else if (str(body.text) !== undefined) parts.push(convert(String(body.text), { plain: body.mrkdwn === false }));
  const attachments = objects(body.attachments, MAX_ATTACHMENTS);
  for (const a of attachments) parts.push(attachment(a));
  const markdown = parts.filter((p) => p !== '').join('\n\n');
  if (markdown.trim() === '') throw new Unrecognised(EXPECTED, 'text');

  const colours = attachments.map((a) => level(a.color)).filter((l) => l !== null);
  const worst = colours.includes('danger') ? 'danger' : colours.includes('warning') ? 'warning' : (colours[0] ?? null);
  const meta = metadata('slack:message', [
    ['channel', str(body.channel)],
    ['username', str(body.username)],
    ['icon_emoji', str(body.icon_emoji)],
    ['icon_url', str(body.icon_url)],
    ['thread_ts', str(body.thread_ts) ?? (typeof body.thread_ts === 'number' ? body.thread_ts : undefined)],
    ['level', worst],
  ]);
  return message(markdown, meta);
}
