import { isHighlightClass } from './allowed-html';
import { highlighter } from './hljs';

/*
 * Server-side highlighting of fenced code with highlight.js (the languages registered in hljs.js, with
 * their own aliases: ts, js, sh, yml, py, html, toml, docker, c++, cs, kt, rb, console, patch…). Any
 * other language renders plain. Its output is never trusted: `verified` re-reads it and keeps it only
 * if it is nothing but `<span class="hljs-…">` around exactly the code, escaped.
 */

/**
 * highlight.js is quick on real code but quadratic on some crafted input (a long run of `_` as Java,
 * of `a` as C#). So a block longer than MAX_HIGHLIGHTED_BLOCK, or one that would take a message past
 * MAX_HIGHLIGHTED_PER_MESSAGE highlighted characters, shows plain: whatever the message, its
 * highlighting costs at most two worst-case blocks.
 */
export const MAX_HIGHLIGHTED_BLOCK = 3_000;
export const MAX_HIGHLIGHTED_PER_MESSAGE = 6_000;

/** Characters highlighted in the message being rendered (rendering is synchronous). */
let budget = MAX_HIGHLIGHTED_PER_MESSAGE;

export function resetHighlightBudget(): void {
  budget = MAX_HIGHLIGHTED_PER_MESSAGE;
}

/** Whether `name` is a registered language or alias, in any case (`TS`, `yml`). */
export function isKnownLanguage(name: string): boolean {
  return name !== '' && highlighter.getLanguage(name) !== undefined;
}

/** `code` as highlighted HTML, or null: unknown language, over the size limits, or output refused. */
export function highlightCode(code: string, language: string): string | null {
  if (!isKnownLanguage(language) || code.length > MAX_HIGHLIGHTED_BLOCK || code.length > budget) return null;
  budget -= code.length;
  let html: string;
  try {
    html = highlighter.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
  return verified(html, code) ? html : null;
}

const PIECE = /<span class="([^"<>]*)">|<\/span>|([^<]+)/y;
const ESCAPED_TEXT = /^(?:[^&<>"']|&(?:amp|lt|gt|quot|#x27);)*$/;
const UNESCAPE: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'" };

/** True if `html` is only balanced highlight spans whose text, unescaped, is exactly `code`. */
function verified(html: string, code: string): boolean {
  let depth = 0;
  let text = '';
  PIECE.lastIndex = 0;
  while (PIECE.lastIndex < html.length) {
    const match = PIECE.exec(html);
    if (!match) return false;
    const [whole, className, content] = match;
    if (content !== undefined) {
      if (!ESCAPED_TEXT.test(content)) return false;
      text += content.replace(/&(?:amp|lt|gt|quot|#x27);/g, (ref) => UNESCAPE[ref] ?? ref);
    } else if (className !== undefined) {
      if (!isHighlightClass(className)) return false;
      depth++;
    } else if (whole === '</span>') {
      if (--depth < 0) return false;
    }
  }
  return depth === 0 && text === code;
}
