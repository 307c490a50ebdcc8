import { convert, emojify, safeLink } from './mrkdwn';
import {
  imageLink,
  isObj,
  item,
  level,
  list,
  looksLikeSlack,
  type Obj,
  objects,
  plainLine,
  str,
  translateSlack,
  withMarker,
  worstLevel,
} from './slack';
import { escLineStart, escPiece, link, metadata, oneLine } from './text';
import { colourLevel } from './level';
import { message, Unrecognised, withDetails, type NativePost, type Translation } from './types';

/**
 * Discord's "Execute Webhook" body (discord.com/developers/docs/resources/webhook), which bots, CI
 * notifiers and monitoring tools post to a Discord webhook URL: `content` (Discord's markdown, close
 * to standard markdown), `embeds[]` (title, description, colour, fields, author, footer, timestamp,
 * image), `username`/`avatar_url` (the sender), and a few fields with nothing to show (`tts`,
 * `allowed_mentions`, `flags`). JSON, or Discord's multipart form with the JSON in `payload_json`
 * (read by the route, read-post.ts): its files are named, not kept.
 * A Slack body sent here (Discord's own `/slack` endpoint takes those) is read as Slack's.
 */

const EXPECTED =
  'A discord webhook takes Discord\'s webhook JSON with something to show in "content" or "embeds" (title, description, fields, author, footer…); or the generic {"message", "metadata"} body.';

const MAX_EMBEDS = 10;
const MAX_FIELDS = 25;
const MAX_BUTTONS = 25;

/** Discord's colour is an RGB integer; as a hex colour, its hue gives the same level as Slack's. */
function embedLevel(color: unknown): 'good' | 'warning' | 'danger' | null {
  const n = typeof color === 'number' ? color : typeof color === 'string' && /^\d{1,8}$/.test(color) ? Number(color) : Number.NaN;
  if (!Number.isInteger(n) || n < 0 || n > 0xffffff) return level(color);
  return level(`#${n.toString(16).padStart(6, '0')}`);
}

/** An ISO 8601 timestamp as `2024-05-15 10:16 UTC`; anything else is not shown. */
function isoDate(value: unknown): string | null {
  const text = str(value);
  if (text === undefined || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text)) return null;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return null;
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function embed(e: Obj): string {
  const body: string[] = [];
  const author = isObj(e.author) ? str(e.author.name) : undefined;
  if (author !== undefined) body.push(escLineStart(link(emojify(author), isObj(e.author) ? str(e.author.url) : undefined)));
  const title = str(e.title);
  if (title !== undefined) {
    const href = str(e.url);
    body.push(`**${href === undefined ? escPiece(emojify(oneLine(title))) : safeLink(emojify(oneLine(title)), href)}**`);
  }
  const description = str(e.description);
  if (description !== undefined) body.push(convert(description, { markdown: true }));
  const fields = Array.isArray(e.fields) ? e.fields.filter(isObj) : [];
  const shown = fields
    .slice(0, MAX_FIELDS)
    .map((f) => {
      const name = str(f.name);
      const value = typeof f.value === 'string' || typeof f.value === 'number' ? String(f.value) : '';
      if (name === undefined && value.trim() === '') return '';
      return item(
        name === undefined ? '' : escPiece(emojify(oneLine(name))),
        value.trim() === '' ? '' : convert(value, { markdown: true }),
      );
    })
    .filter((f) => f !== '');
  if (shown.length > 0) body.push(list(shown, 'field', fields.length));
  for (const [key, label] of [
    ['image', 'image'],
    ['thumbnail', 'thumbnail'],
  ] as const) {
    const media = e[key];
    const shownLink = isObj(media) ? imageLink(label, media.url, label) : '';
    if (shownLink !== '') body.push(shownLink);
  }
  const footerText = isObj(e.footer) ? str(e.footer.text) : undefined;
  const footer = [footerText === undefined ? '' : escPiece(emojify(oneLine(footerText))), isoDate(e.timestamp) ?? '']
    .filter((p) => p !== '')
    .join(' \u00b7 ');
  if (footer !== '') body.push(body.length > 0 ? `*${escLineStart(footer)}*` : escLineStart(footer));
  withMarker(body, embedLevel(e.color));
  return body.filter((p) => p !== '').join('\n\n');
}

/** A poll: its question and answers (votes are Discord's own, not shown). */
function poll(p: unknown): string {
  if (!isObj(p)) return '';
  const question = isObj(p.question) ? str(p.question.text) : undefined;
  const answers = objects(p.answers, 10)
    .map((a) => (isObj(a.poll_media) ? str(a.poll_media.text) : undefined))
    .filter((t) => t !== undefined)
    .map((t) => `- ${escLineStart(escPiece(emojify(oneLine(t))))}`);
  if (question === undefined && answers.length === 0) return '';
  return [question === undefined ? '' : `\u{1f4ca} **${plainLine(question)}**`, answers.join('\n')].filter((x) => x !== '').join('\n\n');
}

/** Link buttons (component type 2, style 5, with a `url`) in action rows; interactive ones have nothing to open. */
function buttons(rows: unknown): string {
  const links = objects(rows, 5)
    .flatMap((row) => objects(row.components, 5))
    .filter((c) => c.type === 2 && str(c.url) !== undefined)
    .slice(0, MAX_BUTTONS)
    .map((c) => safeLink(emojify(oneLine(str(c.label) ?? 'link')), String(c.url)));
  return escLineStart(links.join(' \u00b7 '));
}

/** True when a JSON body is clearly Discord's: a generic webhook then reads it as such (read-post.ts). */
export function looksLikeDiscord(body: unknown): boolean {
  return isObj(body) && (typeof body.content === 'string' || Array.isArray(body.embeds));
}

export function translateDiscord(post: NativePost): Translation {
  const body = post.json;
  if (!isObj(body)) throw new Unrecognised(EXPECTED);
  if (!looksLikeDiscord(body) && !isObj(body.poll) && looksLikeSlack(body)) return translateSlack(post);

  const parts: string[] = [];
  const content = str(body.content);
  if (content !== undefined) parts.push(convert(content, { markdown: true }));
  const embeds = objects(body.embeds, MAX_EMBEDS);
  // Only a shown embed's colour counts: an empty one with a red bar says nothing.
  const levels: Array<'good' | 'warning' | 'danger' | null> = [];
  for (const e of embeds) {
    const shown = embed(e);
    parts.push(shown);
    if (shown !== '') levels.push(embedLevel(e.color));
  }
  parts.push(poll(body.poll), buttons(body.components));
  const files = (post.files ?? []).map((f) => oneLine(f, 100)).filter((f) => f !== '');
  if (files.length > 0) {
    // Only the names: a file is not kept, and its name is text. A post of files alone shows them so.
    const shown = files.slice(0, 10).map((f) => escPiece(f));
    const more = files.length > 10 ? ` and ${files.length - 10} more` : '';
    parts.push(escLineStart(`\u{1f4ce} ${shown.join(', ')}${more} (attached files are not kept)`));
  }
  const markdown = parts.filter((p) => p !== '').join('\n\n');
  if (markdown.trim() === '') throw new Unrecognised(EXPECTED, 'content');

  const meta = metadata('discord:message', [
    ['username', str(body.username)],
    ['avatar_url', str(body.avatar_url)],
    ['thread_name', str(body.thread_name)],
    ['level', worstLevel(levels)],
  ]);
  return withDetails(message(markdown, meta), { level: colourLevel(worstLevel(levels)) });
}
