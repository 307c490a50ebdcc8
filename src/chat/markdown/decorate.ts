import { CLASS } from './allowed-html';
import { emojiForShortcode } from './emoji';

/*
 * Emoji shortcodes and mentions in markdown text, already escaped (`decorateText` is called by the
 * renderer for text tokens only: never for code, autolinks, raw HTML shown as text, or a backslash
 * escape, so `\@here` and `\:tada:` stay literal). URLs written as text (`https://…`, `www.…`) are
 * left whole.
 */

/**
 * One pass over a text run, first match wins at each position:
 * 1. a URL as text (its scheme bounded, so a long run of letters is not rescanned from every position);
 * 2. `:name:` not glued to a letter or digit on either side (`10:30:45` stays a time);
 * 3. `@` + a run of name characters, not preceded by what an email's local part or a path holds
 *    (`ops@example.com`, `example.com/@user`); `mentionName` decides the rest.
 */
const INLINE =
  /(?:[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/|www\.)[^\s]*|(?<![A-Za-z0-9]):([a-z0-9_+-]{1,64}):(?![A-Za-z0-9])|(?<![\w.%+\-/@])@([A-Za-z0-9._-]+)/g;

const MAX_NAME = 64;
const BROADCAST = new Set(['here', 'channel', 'everyone', 'all']);

/**
 * The mentioned name in `run` (what followed `@`), or undefined: a sentence's full stop or dash is
 * not part of it (`@bob.`), it starts with a letter, digit or `_`, it is at most 64 characters, and
 * the run does not go on into `/` or `@` (`@scope/package`, `@a.b@example.com`).
 */
function mentionName(run: string, next: string | undefined): string | undefined {
  if (next === '/' || next === '@') return undefined;
  const name = run.replace(/[.-]+$/, '');
  return /^[A-Za-z0-9_]/.test(name) && name.length <= MAX_NAME ? name : undefined;
}

function mention(name: string): string {
  const broadcast = name.toLowerCase();
  const classes = BROADCAST.has(broadcast) ? `${CLASS.mention} ${CLASS.mention}-${broadcast}` : CLASS.mention;
  return `<span class="${classes}">@${name}</span>`;
}

/** `text` (escaped HTML text) with emoji shortcodes replaced and, outside links, mentions marked. */
export function decorateText(text: string, insideLink: boolean): string {
  if (!text.includes(':') && !text.includes('@')) return text;
  let out = '';
  let from = 0;
  INLINE.lastIndex = 0;
  for (let match = INLINE.exec(text); match !== null; match = INLINE.exec(text)) {
    const [whole, shortcode, run] = match;
    let replaced: string | undefined;
    let end = match.index + whole.length;
    if (shortcode !== undefined) {
      replaced = emojiForShortcode(shortcode);
    } else if (run !== undefined && !insideLink) {
      const name = mentionName(run, text[end]);
      if (name !== undefined) {
        replaced = mention(name);
        end = match.index + 1 + name.length;
      }
    }
    if (replaced === undefined) continue;
    out += text.slice(from, match.index) + replaced;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}
