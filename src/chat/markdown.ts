import { Lexer, Marked, Tokenizer, type MarkedOptions, type Tokens, type TokensList } from 'marked';

/**
 * Markdown from webhook posts is untrusted. The renderer below never passes raw HTML through (it is
 * shown escaped), emits only the tags and attributes listed in `ALLOWED`, and decides every URL on the
 * exact string a browser will see: the attribute is fully escaped, so no character reference can
 * change it after the check. `isAllowedHtml` re-checks the whole output and we fail closed.
 *
 * Images are shown as links, never as <img>: an image would make every viewer's browser fetch a URL
 * the sender chose (a tracking pixel: who read the room, when, from where). `![alt](https://x/y.png)`
 * becomes a link to the image whose text is the alt text (the URL when there is none); the room
 * page's CSP allows images from its own origin only.
 */

const LINK_REL = 'noopener noreferrer nofollow';
const LINK_SCHEME = /^(https?|mailto):/i;
const IMAGE_SCHEME = /^(https?):/i;
const CODE_LANGUAGE = /^[A-Za-z0-9_+-]+$/;

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeChar = (ch: string): string => HTML_ESCAPES[ch] ?? ch;

/** Escapes every HTML-significant character: for attributes, code and anything taken verbatim. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, escapeChar);
}

/**
 * For marked's text tokens, which already hold character references (decoded numerics, `&amp;` for a
 * stray ampersand, named ones left as written). A reference in element content only ever yields text.
 */
function escapeTextKeepingReferences(text: string): string {
  return text.replace(/[<>"']|&(?!(?:#\d{1,7}|#[Xx][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});)/g, escapeChar);
}

/**
 * Named references worth resolving in URLs, titles and alt text. Completeness is not a safety matter:
 * an unresolved `&name;` is re-emitted as `&amp;name;`, i.e. literal text to the browser.
 */
const NAMED_REFERENCES = new Map<string, string>([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ['nbsp', '\u00a0'],
  ['colon', ':'],
  ['Tab', '\t'],
  ['NewLine', '\n'],
  ['sol', '/'],
  ['bsol', '\\'],
  ['lpar', '('],
  ['rpar', ')'],
  ['lsqb', '['],
  ['rsqb', ']'],
  ['lbrack', '['],
  ['rbrack', ']'],
  ['lcub', '{'],
  ['rcub', '}'],
  ['num', '#'],
  ['percnt', '%'],
  ['quest', '?'],
  ['equals', '='],
  ['semi', ';'],
  ['excl', '!'],
  ['plus', '+'],
  ['comma', ','],
  ['period', '.'],
  ['lowbar', '_'],
  ['ast', '*'],
  ['commat', '@'],
  ['dollar', '$'],
  ['verbar', '|'],
  ['vert', '|'],
  ['grave', '`'],
  ['Hat', '^'],
  ['tilde', '~'],
  ['hyphen', '\u2010'],
  ['dash', '\u2010'],
  ['copy', '\u00a9'],
  ['reg', '\u00ae'],
  ['trade', '\u2122'],
  ['hellip', '\u2026'],
  ['mdash', '\u2014'],
  ['ndash', '\u2013'],
  ['laquo', '\u00ab'],
  ['raquo', '\u00bb'],
  ['ldquo', '\u201c'],
  ['rdquo', '\u201d'],
  ['lsquo', '\u2018'],
  ['rsquo', '\u2019'],
  ['bull', '\u2022'],
  ['middot', '\u00b7'],
  ['times', '\u00d7'],
  ['divide', '\u00f7'],
  ['deg', '\u00b0'],
  ['euro', '\u20ac'],
  ['pound', '\u00a3'],
  ['yen', '\u00a5'],
  ['cent', '\u00a2'],
  ['sect', '\u00a7'],
  ['para', '\u00b6'],
]);

const CHARACTER_REFERENCE = /&(?:#(\d{1,7})|#[Xx]([0-9A-Fa-f]{1,6})|([A-Za-z][A-Za-z0-9]{0,31}));/g;

function decodeCharacterReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(CHARACTER_REFERENCE, (ref, dec?: string, hex?: string, name?: string) => {
    if (name !== undefined) return NAMED_REFERENCES.get(name) ?? ref;
    const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? '', 16);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
    return String.fromCodePoint(code);
  });
}

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

/** How many links the renderer is inside (rendering is synchronous): an image there is only text. */
let insideLink = 0;

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
      return escapeTextKeepingReferences(token.text);
    },

    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? '').trim().split(/\s/, 1)[0] ?? '';
      const code = text ? `${text.replace(/\n$/, '')}\n` : '';
      const classAttr = CODE_LANGUAGE.test(language) ? ` class="language-${language}"` : '';
      return `<pre><code${classAttr}>${escapeHtml(code)}</code></pre>\n`;
    },

    codespan({ text }: Tokens.Codespan): string {
      return `<code>${escapeHtml(text)}</code>`;
    },

    checkbox({ checked }: Tokens.Checkbox): string {
      // A glyph rather than <input>: no form controls in chat output.
      return checked ? '\u2611 ' : '\u2610 ';
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

    /** A link to the image, never an <img> (see the top of this file). */
    image(token: Tokens.Image): string {
      const alt = escapeHtml(decodeCharacterReferences(this.parser.parseInline(token.tokens, this.parser.textRenderer)));
      const href = safeUrl(token.href, IMAGE_SCHEME, false);
      if (href === null) return alt;
      const text = alt || escapeHtml(href);
      // A badge inside a link (`[![build](badge.svg)](ci)`): its text joins the outer link's.
      if (insideLink > 0) return text;
      const title = token.title ? ` title="${escapeHtml(decodeCharacterReferences(token.title))}"` : '';
      return `<a href="${escapeHtml(href)}"${title} rel="${LINK_REL}" target="_blank">${text}</a>`;
    },
  },
});

/** Tags the renderer emits, each with the attributes it may carry and a check of their values. */
type AttributeCheck = (value: string) => boolean;
const isHttpOrMailto: AttributeCheck = (v) => /^(?:https?|mailto):[^\u0000-\u0020\u007f]*$/.test(v);
const anyText: AttributeCheck = () => true;
const align: AttributeCheck = (v) => v === 'left' || v === 'center' || v === 'right';
const NO_ATTRIBUTES: Readonly<Record<string, AttributeCheck>> = {};

const ALLOWED: ReadonlyMap<string, Readonly<Record<string, AttributeCheck>>> = new Map([
  ...[
    'p',
    'br',
    'strong',
    'em',
    'del',
    'pre',
    'ul',
    'li',
    'blockquote',
    'hr',
    'table',
    'thead',
    'tbody',
    'tr',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
  ].map((tag) => [tag, NO_ATTRIBUTES] as const),
  ['ol', { start: (v: string) => /^\d{1,10}$/.test(v) }],
  ['code', { class: (v: string) => /^language-[A-Za-z0-9_+-]+$/.test(v) }],
  ['th', { align }],
  ['td', { align }],
  ['a', { href: isHttpOrMailto, title: anyText, rel: (v: string) => v === LINK_REL, target: (v: string) => v === '_blank' }],
]);

const TAG = /<(\/?)([a-z][a-z0-9]*)((?: [a-z]+="[^"<>]*")*)>/y;
const ATTRIBUTE = / ([a-z]+)="([^"<>]*)"/g;
// Attribute values are always written by escapeHtml, so only its five references may appear.
const CANONICAL_VALUE = /^(?:[^&]|&(?:amp|lt|gt|quot|#39);)*$/;

function decodeCanonical(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (_, ref: string) =>
    ref === 'amp' ? '&' : ref === 'lt' ? '<' : ref === 'gt' ? '>' : ref === 'quot' ? '"' : "'",
  );
}

/**
 * Defence in depth: true only if every `<` in `html` opens or closes an allowed tag whose attributes
 * are allowed for it, in canonical escaped form, with allowed values (href/src schemes included).
 */
export function isAllowedHtml(html: string): boolean {
  let at = html.indexOf('<');
  while (at !== -1) {
    TAG.lastIndex = at;
    const tag = TAG.exec(html);
    if (!tag) return false;
    const [whole, closing, name = '', attributes = ''] = tag;
    const allowed = ALLOWED.get(name);
    if (!allowed || (closing && attributes)) return false;
    const seen = new Set<string>();
    for (const [, attr = '', value = ''] of attributes.matchAll(ATTRIBUTE)) {
      const check = Object.hasOwn(allowed, attr) ? allowed[attr] : undefined;
      if (!check || seen.has(attr) || !CANONICAL_VALUE.test(value) || !check(decodeCanonical(value))) return false;
      seen.add(attr);
    }
    at = html.indexOf('<', at + whole.length);
  }
  return true;
}

function renderAsPlainText(markdown: string): string {
  return `<p>${linesToBreaks(escapeHtml(markdown))}</p>\n`;
}

/**
 * Renders untrusted chat markdown (GFM, single newlines as <br>) to an HTML fragment that is safe to
 * insert into a page. Never throws; if anything goes wrong the message is shown as escaped text.
 */
export function renderMarkdown(markdown: string): string {
  // CommonMark: U+0000 is replaced, never passed on.
  const source = markdown.replace(/\u0000/g, '\ufffd');
  let html: string;
  try {
    html = markdownRenderer.parse(source, { async: false });
  } catch {
    return renderAsPlainText(source);
  }
  return isAllowedHtml(html) ? html : renderAsPlainText(source);
}
