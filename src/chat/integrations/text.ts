/**
 * Building blocks for messages made from native payloads. Everything a payload says (names, titles,
 * branch names, commit messages, comments) is untrusted: it is escaped so that it shows as the very
 * text that was sent, and cannot open emphasis, close one of our links, start a list or heading,
 * or make a link or image of its own. The only links in a message are the ones built here, and only
 * from http(s) URLs. The result still goes through renderMarkdown like every other message.
 */

/** C0/C1 controls (but tab, line feed and carriage return) and the bidi controls that can disguise text. */
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Lengths, in code points, that keep a message readable (and far below the 40,000 limit). */
export const TEXT_LIMITS = {
  /** Titles, names, commit subjects: one line. */
  title: 200,
  /** A short value: a branch, a status, a field value. */
  value: 100,
  /** A quoted body (description, comment). */
  bodyChars: 1_000,
  bodyLines: 15,
  /** Metadata values. */
  metadataValue: 200,
} as const;

function codePoints(text: string): string[] {
  return Array.from(text);
}

/** At most `max` code points; a cut is shown with an ellipsis. */
export function truncate(text: string, max: number): string {
  const chars = codePoints(text);
  if (chars.length <= max) return text;
  return `${chars
    .slice(0, Math.max(0, max - 1))
    .join('')
    .trimEnd()}\u2026`;
}

/** A surrogate without its pair (JSON's `\ud800` escapes): storage keeps UTF-8, so it becomes U+FFFD now. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function clean(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(INVISIBLE, '').replace(LONE_SURROGATE, '\ufffd');
}

/** One line: controls dropped, whitespace runs made one space, trimmed, cut to `max`. */
export function oneLine(text: string, max: number = TEXT_LIMITS.title): string {
  return truncate(clean(text).replace(/\s+/g, ' ').trim(), max);
}

/**
 * Characters with a meaning inside a line of GFM, as marked reads it: escapes, code, emphasis,
 * strikethrough, links and images (`[`, `]`; `!` only acts before `[`), raw HTML and autolinks
 * (`<`), character references (`&`) and e-mail autolinks (`@`).
 */
const INLINE_SPECIAL = /[\\`*_~[\]<&@]/g;

/** Characters that make a URL autolink by themselves (marked's GFM rules), neutralised by an escape. */
function defuseAutolinks(text: string): string {
  return text.replace(/(www)\./gi, '$1\\.').replace(/(https?|ftp)(:\/\/)/gi, '$1\\$2');
}

/**
 * The colon that opens an emoji shortcode (`:tada:`, which the renderer turns into 🎉): escaped, so a
 * payload's text shows as typed. Other colons (`Build: passed`, `10:30`) are left as they are.
 */
const SHORTCODE_OPENER = /:(?=[a-z0-9_+-]{1,64}:)/g;

function escapePlain(text: string, extra?: RegExp): string {
  let out = text.replace(INLINE_SPECIAL, '\\$&').replace(SHORTCODE_OPENER, '\\:');
  if (extra) out = out.replace(extra, '\\$&');
  // A `!` is harmless but right before a link (one of ours), which it would make an image.
  return defuseAutolinks(out).replace(/!$/, '\\!');
}

const HTTP_URL = /https?:\/\/[^\s<>"'`\\]+/gi;

/** GFM's rule for where a bare URL ends: trailing punctuation and unbalanced `)` are not part of it. */
function trimUrl(candidate: string): string {
  let url = candidate;
  for (;;) {
    const last = url.at(-1);
    if (last === undefined) return url;
    if (".,:;!?*_~'".includes(last)) {
      url = url.slice(0, -1);
      continue;
    }
    if (last === ')') {
      const open = url.split('(').length - 1;
      const close = url.split(')').length - 1;
      if (close > open) {
        url = url.slice(0, -1);
        continue;
      }
    }
    return url;
  }
}

/**
 * The link destination for `url` if it is an absolute http(s) URL, written so that marked reads
 * it back unchanged: parentheses, backslashes and quotes percent-encoded, and a `;` that would end a
 * character reference (`&amp;`) encoded too. Null when it is not http(s) or absurdly long.
 */
export function linkDestination(url: string | null | undefined): string | null {
  if (typeof url !== 'string') return null;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return null;
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.hostname === '') return null;
  const href = parsed.href
    .replace(/[()\\"'<>`\s]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
    .replace(/(&#?[A-Za-z0-9]{1,32});/g, '$1%3B');
  return href.length <= 2_000 ? href : null;
}

/**
 * Escapes what would start a block construct at the beginning of a line. `:` too: a line such as
 * `:-` under any other line is a table's delimiter row, even without a pipe (marked's GFM tables).
 */
function escapeLineStart(escaped: string): string {
  if (/^[#>+=:-]/.test(escaped)) return `\\${escaped}`;
  return escaped.replace(/^(\d{1,9})([.)])(?=[ \t]|$)/, '$1\\$2');
}

/**
 * Escaped text made fit for a link's label. marked unescapes `\[` and `\]` in a label before reading
 * it again as inline markdown, so there brackets are written as character references instead
 * (which marked leaves alone and the browser shows as `[` and `]`).
 */
function asLabel(escaped: string): string {
  return escaped.replace(/\\([[\]])/g, (_, bracket: string) => (bracket === '[' ? '&#91;' : '&#93;'));
}

interface EscapeOptions {
  /** Make bare http(s) URLs in the text links (never inside a link's own text). */
  links: boolean;
  /** Further characters to escape (block text also escapes `|`, which could start a table). */
  extra?: RegExp;
}

/** Escapes text already made one line or one line of a block; see `esc` and `quote`. */
function escapeText(text: string, options: EscapeOptions): string {
  let out = '';
  let at = 0;
  for (const match of text.matchAll(HTTP_URL)) {
    const start = match.index;
    const url = trimUrl(match[0]);
    const destination = options.links ? linkDestination(url) : null;
    if (destination === null) continue;
    out += escapePlain(text.slice(at, start), options.extra);
    out += `[${asLabel(escapePlain(url, options.extra))}](${destination})`;
    at = start + url.length;
  }
  return out + escapePlain(text.slice(at), options.extra);
}

/**
 * Inline text from a payload: one line, at most `max` code points, escaped; bare URLs become links.
 * Safe at the start of a line too (a name like `# x` or `1. x` stays text).
 */
export function esc(text: string, max: number = TEXT_LIMITS.title): string {
  return escapeLineStart(escapeText(oneLine(text, max), { links: true }));
}

/** A link with untrusted text; plain escaped text when the URL is not http(s). */
export function link(text: string, url: string | null | undefined, max: number = TEXT_LIMITS.title): string {
  const label = escapeText(oneLine(text, max) || 'link', { links: false });
  const destination = linkDestination(url);
  return destination === null ? label : `[${asLabel(label)}](${destination})`;
}

/** A link whose text is markdown we wrote (e.g. a code span); that markdown alone when the URL is not http(s). */
export function linkMarkdown(markdown: string, url: string | null | undefined): string {
  const destination = linkDestination(url);
  return destination === null ? markdown : `[${markdown}](${destination})`;
}

/**
 * A code span holding `text` verbatim: the fence is one backtick longer than any run inside, and
 * padded with spaces when the text starts or ends with a backtick or space (CommonMark drops them).
 */
export function code(text: string, max: number = TEXT_LIMITS.value): string {
  const value = oneLine(text, max) || '(none)';
  const longest = Math.max(0, ...Array.from(value.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(value) ? ' ' : '';
  return `${fence}${pad}${value}${pad}${fence}`;
}

/** Bold untrusted text (escaped, so it cannot close the emphasis early). */
export function strong(text: string, max: number = TEXT_LIMITS.value): string {
  const value = esc(text, max);
  return value === '' ? '' : `**${value}**`;
}

/**
 * A multi-line body as a blockquote of literal text: at most `maxLines` lines and `maxChars` code
 * points (cut with an ellipsis), each line escaped, leading indentation kept as no-break spaces (so
 * it never becomes a code block). Empty when there is nothing to show.
 */
export function quote(text: string, maxChars: number = TEXT_LIMITS.bodyChars, maxLines: number = TEXT_LIMITS.bodyLines): string {
  const lines = clean(text)
    .split('\n')
    .map((line) => line.replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  // Runs of blank lines read as one paragraph break.
  const compact = lines.filter((line, i) => line !== '' || lines[i - 1] !== '');
  if (compact.length === 0) return '';
  let body = compact.slice(0, maxLines).join('\n');
  const cutLines = compact.length > maxLines;
  const cut = truncate(body, maxChars);
  body = cutLines && cut === body ? `${body.trimEnd()}\u2026` : cut;
  return body
    .split('\n')
    .map((line) => {
      if (line === '') return '>';
      const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
      const rest = line.slice(indent.length);
      const nbsp = indent.replace(/\t/g, '    ').replace(/ /g, '\u00a0');
      return `> ${nbsp}${escapeLineStart(escapeText(rest, { links: true, extra: /\|/g }))}`;
    })
    .join('\n');
}

/** `n thing` / `n things`. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** The first 7 characters of a commit id, or null when it is not a hex commit id. */
export function shortSha(sha: string | null | undefined): string | null {
  return typeof sha === 'string' && /^[0-9a-f]{7,64}$/i.test(sha) ? sha.slice(0, 7).toLowerCase() : null;
}

/**
 * `metadata` for mappings: `<event> key=value …`. Values are one line, at most 200 code points, with
 * `%`, whitespace and controls percent-encoded (`job=nightly%20build`), so a value never looks like
 * a further pair. Missing or empty values are left out.
 */
export function metadata(event: string, pairs: ReadonlyArray<readonly [string, string | number | null | undefined]>): string {
  const parts = [event];
  for (const [key, raw] of pairs) {
    if (raw === null || raw === undefined) continue;
    const value = truncate(clean(String(raw)), TEXT_LIMITS.metadataValue);
    if (value === '') continue;
    parts.push(`${key}=${value.replace(/[%\s\u0000-\u001f\u007f]/g, encodeURIComponent)}`);
  }
  return parts.join(' ');
}

/**
 * A piece of one line of block text (not its start) escaped as text, spaces kept as written: for
 * translators that build a line from several pieces (Slack's mrkdwn). `|` is escaped too (a table).
 * Bare http(s) URLs become links. Line breaks become spaces; the caller splits lines first.
 */
export function escPiece(text: string): string {
  return escapeText(clean(text).replace(/[\n\t]/g, ' '), { links: true, extra: /\|/g });
}

/** A link label written as text (no links inside), spaces kept, for a link built by the caller. */
export function escLabel(text: string): string {
  return asLabel(escapeText(clean(text).replace(/[\n\t]/g, ' '), { links: false, extra: /\|/g }));
}

/** Escapes what would start a block construct when `escaped` (already escaped) begins a line. */
export function escLineStart(escaped: string): string {
  return escapeLineStart(escaped);
}
