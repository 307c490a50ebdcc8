/** Escaping and character references: the only ways text becomes HTML in this renderer. */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeChar = (ch: string): string => HTML_ESCAPES[ch] ?? ch;

/** Escapes every HTML-significant character: for attributes, code and anything taken verbatim. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, escapeChar);
}

/**
 * For marked's text tokens, which already hold character references (decoded numerics, `&amp;` for a
 * stray ampersand, named ones left as written). A reference in element content only ever yields text.
 */
export function escapeTextKeepingReferences(text: string): string {
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

export function decodeCharacterReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(CHARACTER_REFERENCE, (ref, dec?: string, hex?: string, name?: string) => {
    if (name !== undefined) return NAMED_REFERENCES.get(name) ?? ref;
    const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? '', 16);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
    return String.fromCodePoint(code);
  });
}
