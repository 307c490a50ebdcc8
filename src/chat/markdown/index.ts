import { Lexer, Marked, Tokenizer, type MarkedOptions, type Tokens, type TokensList } from 'marked';
import { CLASS, isAllowedHtml, LINK_REL } from './allowed-html';
import { decorateText } from './decorate';
import { highlightCode, resetHighlightBudget } from './highlight';
import { decodeCharacterReferences, escapeHtml, escapeTextKeepingReferences } from './html';
import type { ImageSigner } from '../image-proxy/sign';

export { isAllowedHtml };

/**
 * Markdown from webhook posts is untrusted. The renderer below never passes raw HTML through (it is
 * shown escaped), emits only the tags, attributes and classes listed in `allowed-html.ts`, and decides
 * every URL on the exact string a browser will see: the attribute is fully escaped, so no character
 * reference can change it after the check. `isAllowedHtml` re-checks the whole output and we fail
 * closed. docs/markdown.md describes what each piece of markdown becomes.
 *
 * Images: one rule for the renderer and the room page's CSP (`img-src 'self'`). An <img> never points
 * at a URL the sender chose: that would make every viewer's browser fetch it (a tracking pixel: who
 * read the room, when, from where), and the CSP would block it (a broken icon). With an image signer
 * (the Worker's IMAGE_PROXY_KEY, chat/image-proxy), `![alt](https://x/y.png)` on a host the proxy may
 * fetch becomes `<img src="/image-proxy?u=…&s=…">` (same origin, signed) inside a link to the image
 * (just the <img> inside another link); the page puts the link's text back if it fails to load.
 * Otherwise (no signer, `http:`, a refused host) it is a link to the image whose text is the alt text
 * (the URL when there is none); any other scheme leaves only the alt text.
 *
 * On top of GFM: fenced code in a known language is highlighted here, on the server (highlight.ts:
 * `<span class="hljs-…">` only, verified); task list items are glyphs (☑ ☐), never form controls;
 * `:shortcode:` emoji and `@here`/`@channel`/`@name` mentions are applied to text tokens only, so
 * never inside code, URLs, or after a backslash (decorate.ts).
 */

const LINK_SCHEME = /^(https?|mailto):/i;
const IMAGE_SCHEME = /^(https?):/i;
const CODE_LANGUAGE = /^[A-Za-z0-9_+-]+$/;

/**
 * Returns the URL to emit (not yet attribute-escaped), or null when it must not become a link/image.
 * `literal` is for autolinks, whose destination is taken as written (no character references).
 */
function safeUrl(href: string, scheme: RegExp, literal: boolean): string | null {
  let url = literal ? href : decodeCharacterReferences(href);
  // What the WHATWG URL parser does before it reads a scheme: trim C0 controls and spaces at both
  // ends, drop tabs and newlines anywhere. Checking (and emitting) the result means the browser
  // reads the same scheme we do; `%6Aavascript:` or `\u00a0javascript:` simply fail the check.
  url = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const match = scheme.exec(url);
  if (!match?.[1]) return null;
  url = match[1].toLowerCase() + url.slice(match[1].length);
  try {
    // Percent-encodes spaces, controls, quotes, angle brackets and non-ASCII; existing %XX stay.
    return encodeURI(url).replace(/%25/g, '%');
  } catch {
    return null; // lone surrogate
  }
}

function linesToBreaks(escaped: string): string {
  return escaped.replace(/\n/g, '<br>');
}

/**
 * Some of marked's GFM inline rules rescan an unbounded run from every position in it, so a 40,000
 * character message like `a_a_a_…` or `a` + 40,000 spaces + `b` takes seconds. Bounding those runs
 * makes the scans linear at no cost to real messages:
 * - email autolinks: local parts longer than 64 characters (RFC 5321's limit) are not linked;
 * - spaces before a line break: past 64 they stay in the text (invisible in HTML) instead;
 * - bare URLs (`https://…`, `www.…`) are linked up to 2,048 characters after the host.
 */
const BOUNDED_RUNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\]\+(\(?@)/g, ']{1,64}$1'],
  [/ \*\\n/g, ' {0,64}\\n'],
  [/\[\^\\s<\]\*/g, '[^\\s<]{0,2048}'],
];

function boundRuns(rule: RegExp): RegExp {
  let source = rule.source;
  for (const [unbounded, bounded] of BOUNDED_RUNS) source = source.replace(unbounded, bounded);
  return source === rule.source ? rule : new RegExp(source, rule.flags);
}
const gfmBreaksInline = Lexer.rules.inline.breaks;
const boundedInline = {
  ...gfmBreaksInline,
  text: boundRuns(gfmBreaksInline.text),
  url: boundRuns(gfmBreaksInline.url),
};

/** The link rule backtracks over the rest of the paragraph per `[`; no real link is this long. */
const MAX_LINK_SOURCE = 4096;

/**
 * Blockquotes and lists re-lex their contents at every level: `>` × 40,000 overflows the stack.
 * Deeper markers than this stay literal text.
 */
const MAX_NESTING = 16;
const nestingDepth = new WeakMap<object, number>();

function nested<T>(tokenizer: Tokenizer, lex: () => T): T | undefined {
  const depth = nestingDepth.get(tokenizer.lexer) ?? 0;
  if (depth >= MAX_NESTING) return undefined;
  nestingDepth.set(tokenizer.lexer, depth + 1);
  try {
    return lex();
  } finally {
    nestingDepth.set(tokenizer.lexer, depth);
  }
}

function lexWithBoundedRules<P = string, R = string>(src: string, options?: MarkedOptions<P, R>): TokensList {
  const lexer = new Lexer<P, R>(options);
  // The Lexer has just given the tokenizer a fresh rules object; swap in the bounded inline rules.
  if (options?.tokenizer) options.tokenizer.rules = { ...options.tokenizer.rules, inline: boundedInline };
  return lexer.lex(src);
}

const markdownRenderer = new Marked({ gfm: true, breaks: true, pedantic: false, silent: false });

/** How many links the renderer is inside (rendering is synchronous): an image there is no link of its own. */
let insideLink = 0;
/** The signer of the render in progress (rendering is synchronous), if images are proxied. */
let currentSigner: ImageSigner | undefined;

markdownRenderer.use({
  hooks: {
    // Only parse() (block mode) is ever called on this instance.
    provideLexer: () => lexWithBoundedRules,
  },
  tokenizer: {
    link(src) {
      return Tokenizer.prototype.link.call(this, src.length > MAX_LINK_SOURCE ? src.slice(0, MAX_LINK_SOURCE) : src);
    },
    blockquote(src) {
      return nested(this, () => Tokenizer.prototype.blockquote.call(this, src));
    },
    list(src) {
      return nested(this, () => Tokenizer.prototype.list.call(this, src));
    },
  },
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      if (token.block) {
        return `<p>${linesToBreaks(escapeHtml(token.text.replace(/\n+$/, '')))}</p>\n`;
      }
      return escapeHtml(token.text);
    },

    text(token: Tokens.Text | Tokens.Escape): string {
      if ('tokens' in token && token.tokens) return this.parser.parseInline(token.tokens);
      // `escaped` marks text marked saw inside raw HTML (after an inline `<script>`/`<pre>`): raw source.
      if (token.type === 'escape' || ('escaped' in token && token.escaped)) return escapeHtml(token.text);
      return decorateText(escapeTextKeepingReferences(token.text), insideLink > 0);
    },

    code({ text, lang }: Tokens.Code): string {
      const info = (lang ?? '').trim().split(/\s/, 1)[0] ?? '';
      const language = CODE_LANGUAGE.test(info) ? info : '';
      const code = text.replace(/\n$/, '');
      const highlighted = language ? highlightCode(code, language) : null;
      const body = text ? `${highlighted ?? escapeHtml(code)}\n` : '';
      const classAttr = language ? ` class="${highlighted === null ? '' : 'hljs '}language-${language}"` : '';
      return `<pre><code${classAttr}>${body}</code></pre>\n`;
    },

    codespan({ text }: Tokens.Codespan): string {
      return `<code>${escapeHtml(text)}</code>`;
    },

    listitem(item: Tokens.ListItem): string {
      const classAttr = item.task ? ` class="${CLASS.task}"` : '';
      return `<li${classAttr}>${this.parser.parse(item.tokens)}</li>\n`;
    },

    checkbox({ checked }: Tokens.Checkbox): string {
      // A glyph rather than <input>: no form controls in chat output.
      return checked ? `<span class="${CLASS.taskDone}">\u2611</span> ` : `<span class="${CLASS.taskTodo}">\u2610</span> `;
    },

    link(token: Tokens.Link): string {
      const href = safeUrl(token.href, LINK_SCHEME, token.autolink === true);
      if (href === null) return linesToBreaks(escapeHtml(token.raw));
      let body: string;
      insideLink++;
      try {
        body = token.autolink ? escapeHtml(token.text) : this.parser.parseInline(token.tokens);
      } finally {
        insideLink--;
      }
      const title = token.title ? ` title="${escapeHtml(decodeCharacterReferences(token.title))}"` : '';
      return `<a href="${escapeHtml(href)}"${title} rel="${LINK_REL}" target="_blank">${body}</a>`;
    },

    /** A proxied <img> in a link to the image, or just that link (see the top of this file). */
    image(token: Tokens.Image): string {
      const alt = escapeHtml(decodeCharacterReferences(this.parser.parseInline(token.tokens, this.parser.textRenderer)));
      const href = safeUrl(token.href, IMAGE_SCHEME, false);
      if (href === null) return alt;
      const title = token.title ? ` title="${escapeHtml(decodeCharacterReferences(token.title))}"` : '';
      const src = href.startsWith('https:') ? (currentSigner?.src(href) ?? null) : null;
      // A badge inside a link (`[![build](badge.svg)](ci)`): the image, or its text, joins the outer link's.
      const content = src === null ? alt || escapeHtml(href) : `<img src="${escapeHtml(src)}" alt="${alt}"${title} loading="lazy">`;
      if (insideLink > 0) return content;
      return `<a href="${escapeHtml(href)}"${src === null ? title : ''} rel="${LINK_REL}" target="_blank">${content}</a>`;
    },
  },
});

function renderAsPlainText(markdown: string): string {
  return `<p>${linesToBreaks(escapeHtml(markdown))}</p>\n`;
}

export interface RenderOptions {
  /** Signs https image URLs for the image proxy (chat/image-proxy); without it images are links. */
  images?: ImageSigner;
}

/**
 * Renders untrusted chat markdown (GFM, single newlines as <br>) to an HTML fragment that is safe to
 * insert into a page. Never throws; if anything goes wrong the message is shown as escaped text.
 */
export function renderMarkdown(markdown: string, options: RenderOptions = {}): string {
  // CommonMark: U+0000 is replaced, never passed on.
  const source = markdown.replace(/\u0000/g, '\ufffd');
  let html: string;
  resetHighlightBudget();
  currentSigner = options.images;
  try {
    html = markdownRenderer.parse(source, { async: false });
  } catch {
    return renderAsPlainText(source);
  } finally {
    currentSigner = undefined;
  }
  return isAllowedHtml(html) ? html : renderAsPlainText(source);
}
