import { code, escLabel, escLineStart, escPiece, linkDestination, truncate } from './text';

/**
 * Slack's mrkdwn (api.slack.com "Formatting text for app surfaces") turned into our markdown. Slack
 * text is untrusted like any payload text: every piece that is not one of the constructs read here is
 * escaped (text.ts), so `**x**`, `[x](y)`, `<b>` or `![i](u)` written by a sender show as written.
 * The only links are made from `<url|label>`, a bare http(s) URL, and (as Mattermost-style senders mix
 * standard markdown in) `[label](http…)`; each through linkDestination, or a checked `mailto:`.
 *
 * With `markdown: true` (Mattermost bodies, Discord content) the same reader takes standard markdown:
 * `*x*` is italic rather than bold, `#` headings show as bold lines, `- ` / `1. ` lists stay lists,
 * a code fence's language is dropped, `>>> ` quotes the rest. Everything else is escaped as for Slack.
 */

/** A few common shortcodes shown as their emoji; any other `:name:` stays as the text it is. */
const EMOJI: Readonly<Record<string, string>> = {
  '+1': '\u{1f44d}',
  '-1': '\u{1f44e}',
  thumbsup: '\u{1f44d}',
  thumbsdown: '\u{1f44e}',
  white_check_mark: '\u2705',
  heavy_check_mark: '\u2714\ufe0f',
  x: '\u274c',
  warning: '\u26a0\ufe0f',
  rotating_light: '\u{1f6a8}',
  fire: '\u{1f525}',
  rocket: '\u{1f680}',
  zap: '\u26a1',
  tada: '\u{1f389}',
  bell: '\u{1f514}',
  boom: '\u{1f4a5}',
  bug: '\u{1f41b}',
  eyes: '\u{1f440}',
  memo: '\u{1f4dd}',
  sparkles: '\u2728',
  star: '\u2b50',
  wave: '\u{1f44b}',
  smile: '\u{1f604}',
  heart: '\u2764\ufe0f',
  red_circle: '\u{1f534}',
  large_green_circle: '\u{1f7e2}',
  green_circle: '\u{1f7e2}',
  large_blue_circle: '\u{1f535}',
  large_yellow_circle: '\u{1f7e1}',
  information_source: '\u2139\ufe0f',
  no_entry: '\u26d4',
  hourglass: '\u231b',
  helmet_with_white_cross: '\u26d1\ufe0f',
};

/** Slack escapes exactly these three in text (`&lt;`, `&gt;`, `&amp;`); one pass, so `&amp;lt;` stays `&lt;`. */
export function decodeEntities(text: string): string {
  return text.replace(/&(lt|gt|amp);/g, (_, name: string) => (name === 'lt' ? '<' : name === 'gt' ? '>' : '&'));
}

/** Known `:shortcode:`s replaced by their emoji (for plain text: titles, footers, plain_text objects). */
export function emojify(text: string): string {
  return text.replace(/:([a-z0-9_+-]{1,40}):/g, (whole, name: string) => EMOJI[name] ?? whole);
}

const MAILTO = /^mailto:[^\s<>()\\"'`[\]]{1,300}$/i;

function destination(url: string): string | null {
  return linkDestination(url) ?? (MAILTO.test(url.trim()) ? url.trim() : null);
}

/** A link from a label and a URL written by the sender; the label as text when the URL is not http(s)/mailto. */
export function safeLink(label: string, url: string): string {
  const href = destination(url);
  const text = label.trim() === '' ? url : label;
  return href === null ? escPiece(text) : `[${escLabel(text)}](${href})`;
}

/** `<…>` control sequences: links, mentions, channels, special commands, dates. */
function angle(inner: string): string {
  const bar = inner.indexOf('|');
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = decodeEntities(bar < 0 ? '' : inner.slice(bar + 1));
  if (target.startsWith('!')) {
    const [command = '', ...args] = target.slice(1).split('^');
    // A fixed word, not user text: left unescaped so the renderer shows it as a room-wide mention.
    if (command === 'here' || command === 'channel' || command === 'everyone') return `@${command}`;
    if (command === 'subteam') return escPiece(label !== '' ? label : `@${args[0] ?? 'group'}`);
    if (command === 'date') return escPiece(label !== '' ? label : (slackDate(args[0]) ?? 'a date'));
    return escPiece(label !== '' ? label : target);
  }
  if (target.startsWith('@')) return escPiece(`@${label !== '' ? label.replace(/^@/, '') : target.slice(1)}`);
  // Discord's `<t:1700000000:R>` timestamps and `<:name:id>` custom emoji, read rather than shown raw.
  const stamp = /^t:(\d{1,12})(?::[a-zA-Z])?$/.exec(target);
  if (stamp) return escPiece(slackDate(stamp[1]) ?? target);
  const custom = /^a?:([\w~]{1,40}):\d{1,30}$/.exec(target);
  if (custom) return escPiece(`:${custom[1]}:`);
  if (target.startsWith('#')) return escPiece(`#${label !== '' ? label.replace(/^#/, '') : target.slice(1)}`);
  return safeLink(label, decodeEntities(target));
}

/** Seconds since the epoch (Slack's `ts`, a number or a numeric string) as `2024-05-15 10:16 UTC`. */
export function slackDate(ts: unknown): string | null {
  const seconds = typeof ts === 'number' ? ts : typeof ts === 'string' && /^\d{1,12}(\.\d+)?$/.test(ts) ? Number(ts) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 32_503_680_000) return null;
  return `${new Date(Math.floor(seconds) * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Inline constructs, in the order Slack reads them: code first (nothing inside is formatted), then
 * `<…>`, then emphasis, then standard `**bold**` / `[label](url)` some senders mix in, then shortcodes.
 * Emphasis needs a non-space next to its markers and no letter or digit outside them, as in Slack.
 */
const INLINE =
  /`([^`\n]+)`|<([^<>\n]+)>|\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*|(?<![\p{L}\p{N}*\\])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\p{L}\p{N}*])|(?<![\p{L}\p{N}_\\])_(?=[^\s_])([^_\n]+?)(?<=\S)_(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}~\\])~(?=[^\s~])([^~\n]+?)(?<=\S)~(?![\p{L}\p{N}~])|\[([^[\]\n]+)\]\(([^()\s]+)\)|:([a-z0-9_+-]{1,40}):|~~(?=\S)([^~\n]+?)(?<=\S)~~|__(?=\S)([^_\n]+?)(?<=\S)__/gu;

/**
 * One line of mrkdwn as escaped inline markdown (not safe at a line's start: see `line`). `markdown`:
 * standard markdown's reading (`*x*` italic, `~~x~~` strike, `__x__` bold — Discord's underline too).
 */
export function inline(text: string, depth = 0, markdown = false): string {
  if (depth > 3) return escPiece(decodeEntities(text));
  let out = '';
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    out += escPiece(decodeEntities(text.slice(at, m.index)));
    at = m.index + m[0].length;
    const [, codeText, angled, strongStd, bold, italic, strike, label, url, emoji, strike2, under] = m;
    const sub = (t: string) => inline(t, depth + 1, markdown);
    if (codeText !== undefined) out += code(decodeEntities(codeText), 500);
    else if (angled !== undefined) out += angle(angled);
    else if (strongStd !== undefined) out += `**${sub(strongStd)}**`;
    else if (bold !== undefined) out += markdown ? `*${sub(bold)}*` : `**${sub(bold)}**`;
    else if (italic !== undefined) out += `*${sub(italic)}*`;
    else if (strike !== undefined) out += `~~${sub(strike)}~~`;
    else if (label !== undefined && url !== undefined) out += safeLink(decodeEntities(label), decodeEntities(url));
    else if (emoji !== undefined) out += EMOJI[emoji] ?? escPiece(`:${emoji}:`);
    // Doubled markers are standard markdown's; in Slack's mrkdwn they stay the text they are.
    else if (strike2 !== undefined) out += markdown ? `~~${sub(strike2)}~~` : `${escPiece('~~')}${sub(strike2)}${escPiece('~~')}`;
    else if (under !== undefined) out += markdown ? `**${sub(under)}**` : `${escPiece('__')}${sub(under)}${escPiece('__')}`;
  }
  return out + escPiece(decodeEntities(text.slice(at)));
}

export interface ConvertOptions {
  /** plain_text objects and `mrkdwn: false`: only shortcodes are read, everything else is text. */
  plain?: boolean;
  /** Standard markdown (Mattermost, Discord) rather than Slack's mrkdwn: see the top of this file. */
  markdown?: boolean;
  maxChars?: number;
  maxLines?: number;
}

/** Leading indentation as no-break spaces, so it never makes a code block. */
function indentOf(line: string): [string, string] {
  const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
  return [indent.replace(/\t/g, '    ').replace(/ /g, '\u00a0'), line.slice(indent.length)];
}

function textLine(line: string, plain: boolean, markdown = false): string {
  const [indent, rest] = indentOf(line);
  if (markdown && indent === '') {
    // Headings as bold lines, list items as list items: their text is escaped like any other.
    const heading = /^#{1,6}[ \t]+(.*?)[ \t#]*$/.exec(rest);
    if (heading?.[1]) return `**${inline(heading[1], 0, true)}**`;
    const subtext = /^-#[ \t]+(.+)$/.exec(rest);
    if (subtext?.[1]) return `*${inline(subtext[1], 0, true)}*`;
    const bullet = /^[-*+][ \t]+(\S.*)$/.exec(rest);
    if (bullet?.[1]) return `- ${escLineStart(inline(bullet[1], 0, true))}`;
    const numbered = /^(\d{1,9})[.)][ \t]+(\S.*)$/.exec(rest);
    if (numbered?.[2]) return `${numbered[1]}. ${escLineStart(inline(numbered[2], 0, true))}`;
  }
  const body = plain ? escPiece(emojify(rest)) : inline(rest, 0, markdown);
  return `${indent}${escLineStart(body)}`;
}

/** A fenced code block holding `text` verbatim: the fence is longer than any backtick run inside. */
function codeBlock(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${text.replace(/^\n+|\n+$/g, '')}\n${fence}`;
}

/**
 * A block of Slack text (a message's `text`, an attachment's `text`, a section) as markdown lines:
 * `> ` lines as a quote, ```` ``` ```` spans as code blocks, every other line escaped and its inline
 * constructs converted. Cut to `maxChars` and `maxLines` with an ellipsis. Empty when nothing to show.
 */
export function convert(text: string, options: ConvertOptions = {}): string {
  const { plain = false, markdown = false, maxChars = 3_000, maxLines = 60 } = options;
  const cut = truncate(text.replace(/\r\n?/g, '\n'), maxChars);
  const parts = plain ? [cut] : cut.split('```');
  const out: string[] = [];
  let lines = 0;
  parts.forEach((part, i) => {
    if (lines >= maxLines) return;
    if (i % 2 === 1 && i < parts.length - 1) {
      // Markdown's fence may name its language on the opening line: not part of the code.
      const body = markdown ? part.replace(/^[\w+#.-]{1,20}\n/, '') : part;
      if (body.trim() !== '') {
        out.push('', codeBlock(decodeEntities(body)), '');
        lines += part.split('\n').length;
      }
      return;
    }
    // An unclosed ``` is text.
    const source = i % 2 === 1 ? `\`\`\`${part}` : part;
    let inQuote = false;
    let quoteRest = false;
    for (const raw of source.split('\n')) {
      if (lines >= maxLines) {
        out.push('\u2026');
        break;
      }
      lines++;
      // Discord's `>>> ` quotes everything after it.
      const many = markdown && !quoteRest ? /^(?:>>>|&gt;&gt;&gt;)[ \t]?/.exec(raw) : null;
      if (many) quoteRest = true;
      const quoted = plain ? null : (many ?? (quoteRest ? /^/.exec(raw) : /^(?:>|&gt;)[ \t]?/.exec(raw)));
      if (quoted) {
        const rest = raw.slice(quoted[0].length);
        out.push(rest.trim() === '' ? '>' : `> ${textLine(rest, false, markdown)}`);
        inQuote = true;
        continue;
      }
      // A line after a quote would continue it (a lazy continuation line): close the quote first.
      if (inQuote) out.push('');
      inQuote = false;
      // A heading is a paragraph of its own, as in markdown (a bold line would join its neighbours).
      const heading = markdown && /^#{1,6}[ \t]+\S/.test(raw);
      if (heading) out.push('');
      out.push(raw.trim() === '' ? '' : textLine(raw, plain, markdown));
      if (heading) out.push('');
    }
  });
  // Runs of blank lines read as one paragraph break.
  const compact = out.filter((line, i) => line !== '' || (out[i - 1] !== '' && out[i - 1] !== undefined));
  while (compact.length > 0 && (compact.at(-1) === '' || compact.at(-1) === '>')) compact.pop();
  return compact.join('\n');
}
