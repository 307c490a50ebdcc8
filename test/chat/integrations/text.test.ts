import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { code, esc, link, linkDestination, metadata, quote, shortSha, truncate } from '../../../src/chat/integrations/text';
import { renderMarkdown } from '../../../src/chat/markdown';

/** The HTML a browser would show `text` as, written independently of the renderer. */
function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Decodes the five references the renderer writes, to compare shown text with what was sent. */
function shown(fragment: string): string {
  return fragment.replace(/&(amp|lt|gt|quot|#39);/g, (_, r: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[r] ?? '');
}

/** Every markdown-significant ASCII character, letters, digits, spaces and some non-ASCII. */
const MARKDOWN_CHARS = [...'\\`*_~[]()<>&@!#+-=.|:;"\'{}^$%/?,abcXYZ019 ', 'é', '😀', '\u00a0'];
const markdownText = (maxLength: number) => fc.array(fc.constantFrom(...MARKDOWN_CHARS), { maxLength }).map((a) => a.join(''));
/** Plus pieces that make links, images, autolinks and HTML when not escaped. */
const URLISH = ['http://', 'https://', 'www.', 'example.com/', 'javascript:', '](', '![', '<http', 'mailto:', '&#106;', 'a@b.co', ')'];
const hostileText = (maxLength: number) =>
  fc.array(fc.oneof(fc.constantFrom(...MARKDOWN_CHARS), fc.constantFrom(...URLISH)), { maxLength }).map((a) => a.join(''));

describe('esc (inline text from a payload)', () => {
  it('shows any text made of markdown characters as exactly that text, at the start of a line or inside one', () => {
    fc.assert(
      fc.property(markdownText(60), (text) => {
        const expected = text.replace(/\s+/g, ' ').trim();
        fc.pre(expected !== '' && !expected.includes(':'));
        expect(renderMarkdown(esc(text, 10_000))).toBe(`<p>${html(expected)}</p>\n`);
        expect(renderMarkdown(`**Build** ${esc(text, 10_000)} done`)).toBe(`<p><strong>Build</strong> ${html(expected)} done</p>\n`);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never lets the text make an image, or a link other than to an http(s) URL written in it', () => {
    fc.assert(
      fc.property(hostileText(30), (text) => {
        const rendered = renderMarkdown(`x ${esc(text, 10_000)} y`);
        expect(rendered).not.toContain('<img');
        for (const [, href = '', body = ''] of rendered.matchAll(/<a href="([^"]*)"[^>]*>(.*?)<\/a>/g)) {
          expect(shown(href)).toMatch(/^https?:\/\//);
          expect(text).toContain(shown(body));
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('turns a bare URL into a link showing it as written, leaving trailing punctuation out', () => {
    expect(esc('see https://example.com/a_b?x=1&y=(2)). ok')).toBe(
      'see [https\\://example.com/a\\_b?x=1\\&y=(2)](https://example.com/a_b?x=1&y=%282%29)). ok',
    );
    expect(renderMarkdown(esc('see https://example.com/a_b?x=1&y=(2)). ok'))).toBe(
      '<p>see <a href="https://example.com/a_b?x=1&amp;y=%282%29" rel="noopener noreferrer nofollow" target="_blank">https://example.com/a_b?x=1&amp;y=(2)</a>). ok</p>\n',
    );
  });

  it('escapes emphasis, code, links, HTML, references, mentions and autolinks', () => {
    expect(esc('Fix *a* _b_ `c` [x](javascript:alert(1)) <b> &amp; a@b.co www.x.org ~~d~~ \\')).toBe(
      'Fix \\*a\\* \\_b\\_ \\`c\\` \\[x\\](javascript:alert(1)) \\<b> \\&amp; a\\@b.co www\\.x.org \\~\\~d\\~\\~ \\\\',
    );
  });

  it('keeps a name that looks like a heading, list or quote as text at the start of a line', () => {
    expect(esc('# Root')).toBe('\\# Root');
    expect(esc('- dash')).toBe('\\- dash');
    expect(esc('1. first')).toBe('1\\. first');
    expect(esc('> quoted')).toBe('\\> quoted');
    expect(esc('25000.0')).toBe('25000.0');
    for (const name of ['# Root', '- dash', '+ plus', '1. first', '2) second', '3.', '> quoted', '=== x']) {
      expect(renderMarkdown(`${esc(name)} updated X`)).toBe(`<p>${html(name)} updated X</p>\n`);
    }
  });

  it('makes one line of the text, drops controls and bidi overrides, and cuts long text with an ellipsis', () => {
    expect(esc('a\n\tb\r\n  c\u0007\u202ed')).toBe('a b cd');
    expect(esc('x\ud800y\udc00z 😀')).toBe('x\ufffdy\ufffdz 😀');
    expect(metadata('e', [['v', 'a\udbff']])).toBe('e v=a\ufffd');
    expect(esc('x'.repeat(250))).toBe(`${'x'.repeat(199)}\u2026`);
    expect(esc('abcdef', 4)).toBe('abc\u2026');
    expect(truncate('😀😀😀', 3)).toBe('😀😀😀');
    expect(truncate('😀😀😀😀', 3)).toBe('😀😀\u2026');
  });
});

describe('link (a link with untrusted text)', () => {
  it('keeps emoji shortcodes in untrusted text as typed (the renderer would make :a: 🅰️), other colons untouched', () => {
    expect(renderMarkdown(`see ${link(':a: x:tada: :fire:', 'https://x.org/p')}`)).toBe(
      '<p>see <a href="https://x.org/p" rel="noopener noreferrer nofollow" target="_blank">:a: x:tada: :fire:</a></p>\n',
    );
    expect(renderMarkdown(esc('Build: passed at 10:30:45 :tada:'))).toBe('<p>Build: passed at 10:30:45 :tada:</p>\n');
    expect(esc('Build: passed at 10:30')).toBe('Build: passed at 10:30');
    // What a sender writes as markdown itself keeps its emoji.
    expect(renderMarkdown(':tada:')).toBe('<p>🎉</p>\n');
  });

  it('shows any text as exactly that text inside the one link, never an image or another link', () => {
    fc.assert(
      fc.property(hostileText(30), (text) => {
        const expected = text.replace(/\s+/g, ' ').trim();
        fc.pre(expected !== '');
        const rendered = renderMarkdown(`see ${link(text, 'https://x.org/p', 10_000)} now`);
        const match =
          /^<p>see <a href="https:\/\/x\.org\/p" rel="noopener noreferrer nofollow" target="_blank">(.*)<\/a> now<\/p>\n$/s.exec(rendered);
        expect(match, rendered).not.toBeNull();
        expect(match![1]).not.toMatch(/<(a|img)\b/);
        expect(shown(match![1]!.replace(/&#91;/g, '[').replace(/&#93;/g, ']'))).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('quote (a multi-line body)', () => {
  it('shows any multi-line text as those lines, paragraph by paragraph, in a blockquote', () => {
    fc.assert(
      fc.property(fc.array(markdownText(25), { maxLength: 8 }), (lines) => {
        const text = lines.join('\n');
        fc.pre(!text.includes(':'));
        // The reference: trailing whitespace dropped, blank runs made one paragraph break, indentation kept.
        const kept = lines.map((l) => l.replace(/\s+$/, ''));
        while (kept[0] === '') kept.shift();
        while (kept.at(-1) === '') kept.pop();
        const paragraphs: string[][] = [[]];
        for (const line of kept) {
          if (line === '') {
            if (paragraphs.at(-1)!.length > 0) paragraphs.push([]);
          } else paragraphs.at(-1)!.push(line.replace(/^ +/, (s) => '\u00a0'.repeat(s.length)));
        }
        const expected =
          kept.length === 0 ? '' : `<blockquote>\n${paragraphs.map((p) => `<p>${p.map(html).join('<br>')}</p>\n`).join('')}</blockquote>\n`;
        expect(renderMarkdown(quote(text, 100_000, 100))).toBe(expected);
      }),
      { numRuns: 1_000 },
    );
  });

  it('never lets a body make an image, a heading, a list, a table or a code block', () => {
    fc.assert(
      fc.property(fc.array(hostileText(20), { maxLength: 6 }), (lines) => {
        const rendered = renderMarkdown(quote(lines.join('\n'), 100_000, 100));
        expect(rendered).not.toMatch(/<(img|h[1-6]|ul|ol|li|table|pre|code|hr|em|strong|del)\b/);
        for (const [, href = ''] of rendered.matchAll(/<a href="([^"]*)"/g)) expect(shown(href)).toMatch(/^https?:\/\//);
      }),
      { numRuns: 1_000 },
    );
  });

  it('never makes a table from a delimiter row without pipes (found by the property above: "http://" then ":-")', () => {
    for (const body of ['http://\n:-', 'a\n:-:', 'a\n :--']) {
      const rendered = renderMarkdown(quote(body, 100_000, 100));
      expect(rendered).not.toMatch(/<table/);
      expect(shown(rendered.replace(/<[^>]*>/g, ''))).toContain(body.split('\n')[1]!.trim());
    }
  });

  it('escapes the starts of block constructs and keeps indentation as no-break spaces', () => {
    expect(quote('# Heading\n- item\n1. one\n    code\n> q\n| a | b |\n```\n\n\n\n===')).toBe(
      '> \\# Heading\n> \\- item\n> 1\\. one\n> \u00a0\u00a0\u00a0\u00a0code\n> \\> q\n> \\| a \\| b \\|\n> \\`\\`\\`\n>\n> \\===',
    );
  });

  it('keeps at most 15 lines and 1,000 characters, saying so with an ellipsis, and is empty for blank text', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(quote(twenty)).toBe(`${Array.from({ length: 15 }, (_, i) => `> line ${i + 1}`).join('\n')}\u2026`);
    expect(quote('y'.repeat(1_500))).toBe(`> ${'y'.repeat(999)}\u2026`);
    expect(quote(' \n\n \t\n')).toBe('');
  });
});

describe('links, code spans and metadata', () => {
  it('links only http(s) URLs, with parentheses, quotes and reference-like sequences encoded', () => {
    expect(link('#1 Fix [x]', 'https://github.com/o/r/pull/1')).toBe('[#1 Fix &#91;x&#93;](https://github.com/o/r/pull/1)');
    expect(renderMarkdown(link('a \\[![i](https://e.example/i.png)] b', 'https://x.org/'))).toBe(
      '<p><a href="https://x.org/" rel="noopener noreferrer nofollow" target="_blank">a \\[![i](https://e.example/i.png)] b</a></p>\n',
    );
    expect(link('title', 'javascript:alert(1)')).toBe('title');
    expect(link('title', 'data:text/html,x')).toBe('title');
    expect(link('title', 'not a url')).toBe('title');
    expect(link('https://x.org/', 'https://x.org/')).toBe('[https\\://x.org/](https://x.org/)');
    expect(linkDestination('https://x.org/a(b)"c\'?q=&copy;')).toBe('https://x.org/a%28b%29%22c%27?q=&copy%3B');
    expect(linkDestination('HTTPS://X.org')).toBe('https://x.org/');
    expect(linkDestination(`https://x.org/${'a'.repeat(2_000)}`)).toBeNull();
  });

  it('writes code spans that hold backticks and spaces verbatim', () => {
    expect(code('main')).toBe('`main`');
    expect(code('a`b')).toBe('``a`b``');
    expect(code('`x`')).toBe('`` `x` ``');
    expect(code('')).toBe('`(none)`');
    for (const text of ['a`b', '`x`', 'a``b`', 'feature/*-[x]']) {
      expect(renderMarkdown(code(text))).toBe(`<p><code>${html(text)}</code></p>\n`);
    }
  });

  it('writes metadata as event and key=value pairs, percent-encoding what could split a value', () => {
    expect(
      metadata('jenkins:completed', [
        ['job', 'nightly build'],
        ['build', 42],
        ['status', null],
        ['branch', ''],
      ]),
    ).toBe('jenkins:completed job=nightly%20build build=42');
    expect(metadata('x', [['v', '100%\ta\nb']])).toBe('x v=100%25%09a%0Ab');
    expect(metadata('x', [['v', 'y'.repeat(300)]])).toBe(`x v=${'y'.repeat(199)}\u2026`);
  });

  it('shortens hex commit ids only', () => {
    expect(shortSha('0D1A26E67D8F5EAF1F6BA5C57FC3C7D91AC0FD1C')).toBe('0d1a26e');
    expect(shortSha('not-a-sha')).toBeNull();
    expect(shortSha(undefined)).toBeNull();
  });
});
