import { describe, expect, it } from 'vitest';
import { isAllowedHtml, renderMarkdown } from '../../src/chat/markdown';
import { roomPageCsp } from '../../src/chat/page/room-page';
import { GROWTH, growthRatio, LINEAR_RATIO_MAX } from '../support/growth';

/*
 * What people expect from chat markdown, asserted on the exact HTML: lists keep their numbers, task
 * lists, code highlighted on the server, emoji shortcodes, mentions, and one rule for images.
 * test/chat/markdown.test.ts holds the XSS corpus (these features' vectors included).
 */

const LINK = 'rel="noopener noreferrer nofollow" target="_blank"';

describe('lists, headings, quotes and tables', () => {
  it('keeps the start number of an ordered list and nests lists', () => {
    expect(renderMarkdown('3. three\n4. four\n   1. nested')).toBe(
      '<ol start="3">\n<li>three</li>\n<li>four<ol>\n<li>nested</li>\n</ol>\n</li>\n</ol>\n',
    );
  });

  it('renders headings as h1, h2, h3 in order', () => {
    expect(renderMarkdown('# Deploy\n## Steps\n### Notes')).toBe('<h1>Deploy</h1>\n<h2>Steps</h2>\n<h3>Notes</h3>\n');
  });

  it('renders nested blockquotes', () => {
    expect(renderMarkdown('> **P1** firing\n> > since 10:02')).toBe(
      '<blockquote>\n<p><strong>P1</strong> firing</p>\n<blockquote>\n<p>since 10:02</p>\n</blockquote>\n</blockquote>\n',
    );
  });

  it('renders task items as styled glyphs, never form controls, tight or loose', () => {
    expect(renderMarkdown('- [x] build\n- [ ] deploy')).toBe(
      '<ul>\n<li class="task"><span class="task-check task-done">\u2611</span> build</li>\n' +
        '<li class="task"><span class="task-check task-todo">\u2610</span> deploy</li>\n</ul>\n',
    );
    expect(renderMarkdown('- [X] build\n\n- [ ] deploy')).toBe(
      '<ul>\n<li class="task"><p><span class="task-check task-done">\u2611</span> build</p>\n</li>\n' +
        '<li class="task"><p><span class="task-check task-todo">\u2610</span> deploy</p>\n</li>\n</ul>\n',
    );
  });

  it('leaves a list item that only looks like a task (no space after the box) as text', () => {
    expect(renderMarkdown('- [x]done')).toBe('<ul>\n<li>[x]done</li>\n</ul>\n');
  });

  it('renders mentions and emoji inside table cells', () => {
    expect(renderMarkdown('| who | state |\n|---|---|\n| @bob | :white_check_mark: |')).toBe(
      '<table>\n<thead>\n<tr>\n<th>who</th>\n<th>state</th>\n</tr>\n</thead>\n' +
        '<tbody><tr>\n<td><span class="mention">@bob</span></td>\n<td>\u2705</td>\n</tr>\n</tbody></table>\n',
    );
  });
});

describe('syntax highlighting of fenced code (highlight.js, on the server)', () => {
  it('highlights TypeScript into hljs spans, escaped', () => {
    expect(renderMarkdown('```ts\nconst n: number = 1; // "<one>"\n```')).toBe(
      '<pre><code class="hljs language-ts"><span class="hljs-keyword">const</span> <span class="hljs-attr">n</span>: ' +
        '<span class="hljs-built_in">number</span> = <span class="hljs-number">1</span>; ' +
        '<span class="hljs-comment">// &quot;&lt;one&gt;&quot;</span>\n</code></pre>\n',
    );
  });

  it('knows languages by alias and in any case', () => {
    expect(renderMarkdown('```YML\nkey: "v"\n```')).toBe(
      '<pre><code class="hljs language-YML"><span class="hljs-attr">key:</span> <span class="hljs-string">&quot;v&quot;</span>\n</code></pre>\n',
    );
    expect(renderMarkdown('```diff\n- a\n+ b\n```')).toBe(
      '<pre><code class="hljs language-diff"><span class="hljs-deletion">- a</span>\n<span class="hljs-addition">+ b</span>\n</code></pre>\n',
    );
    expect(renderMarkdown('```sh\necho "$HOME"\n```')).toBe(
      '<pre><code class="hljs language-sh"><span class="hljs-built_in">echo</span> ' +
        '<span class="hljs-string">&quot;<span class="hljs-variable">$HOME</span>&quot;</span>\n</code></pre>\n',
    );
  });

  it('renders an unknown language, or none, plain and escaped, with no spans', () => {
    expect(renderMarkdown('```cobol-85\nMOVE "<A>" TO B.\n```')).toBe(
      '<pre><code class="language-cobol-85">MOVE &quot;&lt;A&gt;&quot; TO B.\n</code></pre>\n',
    );
    expect(renderMarkdown('```\nconst a = 1;\n```')).toBe('<pre><code>const a = 1;\n</code></pre>\n');
    expect(renderMarkdown('```__proto__\nx\n```')).toBe('<pre><code class="language-__proto__">x\n</code></pre>\n');
  });

  it('keeps markup inside highlighted HTML as escaped text', () => {
    const html = renderMarkdown('```html\n<script>alert(1)</script>\n```');
    expect(html).toBe(
      '<pre><code class="hljs language-html"><span class="hljs-tag">&lt;<span class="hljs-name">script</span>&gt;</span>' +
        '<span class="language-javascript"><span class="hljs-title function_">alert</span>(<span class="hljs-number">1</span>)</span>' +
        '<span class="hljs-tag">&lt;/<span class="hljs-name">script</span>&gt;</span>\n</code></pre>\n',
    );
  });

  it('does not highlight a block over 3,000 characters', () => {
    const code = `const a = 1;\n${'x'.repeat(3_000)}`;
    expect(renderMarkdown(`\`\`\`ts\n${code}\n\`\`\``)).toBe(`<pre><code class="language-ts">${code}\n</code></pre>\n`);
  });

  it('highlights at most 6,000 characters of code in one message, then shows the rest plain', () => {
    const block = `\`\`\`ts\nlet a;${' '.repeat(2_493)}\n\`\`\``;
    const html = renderMarkdown([block, block, block].join('\n\n'));
    expect(html.match(/<code class="hljs language-ts">/g)).toHaveLength(2);
    expect(html.match(/<code class="language-ts">let a;/g)).toHaveLength(1);
    // A new message has its own budget.
    expect(renderMarkdown(block)).toContain('<code class="hljs language-ts"><span class="hljs-keyword">let</span>');
  });

  it.each([
    { label: 'one long block', input: (chars: number) => `\`\`\`java\n${'_'.repeat(chars)}\n\`\`\`` },
    {
      label: 'blocks just under the limit',
      input: (chars: number) => `\`\`\`java\n${'_'.repeat(2_990)}\n\`\`\`\n\n`.repeat(chars / 3_000 + 1),
    },
  ])('renders crafted code that is slow to highlight ($label) without quadratic growth, up to 40,000 characters', ({ input }) => {
    // A run of `_` is quadratic for highlight.js's Java grammar: the size caps keep the message linear.
    const { ratio, size } = growthRatio((chars) => renderMarkdown(input(chars)), 5_000, 5_000);
    expect(GROWTH * size).toBeLessThanOrEqual(40_000);
    expect(ratio).toBeLessThan(LINEAR_RATIO_MAX);
  });

  it("accepts highlight.js's spans in the last check and nothing else on a span", () => {
    expect(isAllowedHtml('<pre><code class="hljs language-ts"><span class="hljs-title class_ inherited__">A</span></code></pre>')).toBe(
      true,
    );
    expect(isAllowedHtml('<span class="language-css">a</span>')).toBe(true);
    expect(isAllowedHtml('<span class="hljs-keyword" title="x">a</span>')).toBe(false);
    expect(isAllowedHtml('<span class="message">a</span>')).toBe(false);
    expect(isAllowedHtml('<span class="hljs-keyword" onclick="alert(1)">a</span>')).toBe(false);
    expect(isAllowedHtml('<span>a</span>')).toBe(true);
    expect(isAllowedHtml('<code class="hljs">a</code>')).toBe(false);
  });
});

describe('emoji shortcodes (Emojibase: GitHub and Slack names)', () => {
  it('turns known shortcodes into emoji', () => {
    expect(renderMarkdown(':tada: :white_check_mark: :rotating_light: :+1: :100:')).toBe(
      '<p>\u{1f389} \u2705 \u{1f6a8} \u{1f44d} \u{1f4af}</p>\n',
    );
  });

  it('shows a text-default symbol as emoji (VS16) and knows Slack-only names', () => {
    expect(renderMarkdown(':warning: :large_green_circle:')).toBe('<p>\u26a0\ufe0f \u{1f7e2}</p>\n');
  });

  it('keeps the README demo festive', () => {
    expect(renderMarkdown('**Build #4711 passed** on `main` :tada:')).toBe(
      '<p><strong>Build #4711 passed</strong> on <code>main</code> \u{1f389}</p>\n',
    );
  });

  it('leaves unknown names, times and shortcodes glued to words as text', () => {
    expect(renderMarkdown(':shipit: :not_an_emoji: 10:30:45 a:tada:b')).toBe('<p>:shipit: :not_an_emoji: 10:30:45 a:tada:b</p>\n');
  });

  it('never replaces inside code spans, code blocks, URLs or after a backslash', () => {
    expect(renderMarkdown('`:tada:`')).toBe('<p><code>:tada:</code></p>\n');
    expect(renderMarkdown('```\n:tada:\n```')).toBe('<pre><code>:tada:\n</code></pre>\n');
    expect(renderMarkdown('```yaml\nicon: :tada:\n```')).not.toContain('\u{1f389}');
    expect(renderMarkdown('https://example.com/:tada:/x')).toBe(
      `<p><a href="https://example.com/:tada:/x" ${LINK}>https://example.com/:tada:/x</a></p>\n`,
    );
    expect(renderMarkdown('ftp://x.example/:tada: and \\:tada:')).toBe('<p>ftp://x.example/:tada: and :tada:</p>\n');
  });

  it('replaces in emphasis and link text', () => {
    expect(renderMarkdown('_:fire:_ [:rocket: deploy](https://x.example)')).toBe(
      `<p><em>\u{1f525}</em> <a href="https://x.example" ${LINK}>\u{1f680} deploy</a></p>\n`,
    );
  });
});

describe('mentions', () => {
  it('marks @here, @channel and @everyone as room-wide, in any case', () => {
    expect(renderMarkdown('@here @Channel @everyone please look')).toBe(
      '<p><span class="mention mention-here">@here</span> <span class="mention mention-channel">@Channel</span> ' +
        '<span class="mention mention-everyone">@everyone</span> please look</p>\n',
    );
  });

  it('marks @name, leaving a sentence full stop out', () => {
    expect(renderMarkdown('thanks @al.ice_1 and @bob-k.')).toBe(
      '<p>thanks <span class="mention">@al.ice_1</span> and <span class="mention">@bob-k</span>.</p>\n',
    );
    expect(renderMarkdown('**@bob**: done')).toBe('<p><strong><span class="mention">@bob</span></strong>: done</p>\n');
  });

  it('does not mark an email address, escaped or linked', () => {
    expect(renderMarkdown('mail ops@example.com')).toBe(`<p>mail <a href="mailto:ops@example.com" ${LINK}>ops@example.com</a></p>\n`);
    expect(renderMarkdown('a\\@b.co')).toBe('<p>a@b.co</p>\n');
    expect(renderMarkdown('x @a.b@example.org')).not.toContain('mention');
  });

  it('does not mark package scopes, names over 64 characters, or a bare @', () => {
    expect(renderMarkdown('npm i @scope/pkg')).toBe('<p>npm i @scope/pkg</p>\n');
    expect(renderMarkdown(`@${'a'.repeat(65)}`)).toBe(`<p>@${'a'.repeat(65)}</p>\n`);
    expect(renderMarkdown('@ @- @.')).toBe('<p>@ @- @.</p>\n');
  });

  it('does not mark inside code, links, or after a backslash', () => {
    expect(renderMarkdown('`@here` [@here](https://x.example) \\@here')).toBe(
      `<p><code>@here</code> <a href="https://x.example" ${LINK}>@here</a> @here</p>\n`,
    );
    expect(renderMarkdown('```\n@here\n```')).toBe('<pre><code>@here\n</code></pre>\n');
  });
});

describe('images: one rule for the renderer and the page CSP', () => {
  it('shows http and https images as links, never <img>, as the CSP allows no outside image', () => {
    expect(renderMarkdown('![build](http://ci.example.com/b.png)')).toBe(
      `<p><a href="http://ci.example.com/b.png" ${LINK}>build</a></p>\n`,
    );
    expect(renderMarkdown('![build](https://ci.example.com/b.png)')).toBe(
      `<p><a href="https://ci.example.com/b.png" ${LINK}>build</a></p>\n`,
    );
    expect(roomPageCsp('https://chat.example.com/rooms/r1').split('; ')).toContain("img-src 'self'");
  });
});
