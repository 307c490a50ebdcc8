import { describe, expect, it } from 'vitest';
import { GROWTH, growthRatio, LINEAR_RATIO_MAX } from '../support/growth';
import { isAllowedHtml, renderMarkdown } from '../../src/chat/markdown';
import { imageSigner } from '../../src/chat/image-proxy/sign';
import { xssVectors } from '../e2e/support/xss-vectors';

/*
 * An independent checker: it does not trust the renderer's own allow-list. Each output is read twice,
 * by a small hand-written tag tokenizer and by workerd's HTMLRewriter (a real HTML5 tokenizer), and
 * every element and attribute either sees must be harmless. URL attributes are entity-decoded and
 * whitespace-stripped the way a browser does before their scheme is read.
 */

const REL = 'noopener noreferrer nofollow';

/** The tags the renderer documents; anything else is a failure. */
const DOCUMENTED_TAGS = new Set([
  'p',
  'br',
  'strong',
  'em',
  'del',
  'a',
  'code',
  'pre',
  'ul',
  'ol',
  'li',
  'blockquote',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'span',
]);
const DOCUMENTED_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title', 'rel', 'target'],
  code: ['class'],
  span: ['class'],
  li: ['class'],
  ol: ['start'],
  th: ['align'],
  td: ['align'],
};
/** Classes only style: a fenced code's language, highlight.js scopes, mentions, task items. */
const DOCUMENTED_CLASSES: Record<string, RegExp> = {
  code: /^(?:hljs )?language-[A-Za-z0-9_+-]+$/,
  span: /^(?:hljs-[a-z_-]+(?: [a-z]+_+)*|language-[a-z]+|mention(?: mention-(?:here|channel|everyone|all))?|task-check task-(?:done|todo))$/,
  li: /^task$/,
};
const DANGEROUS_TAGS = new Set([
  'script',
  'iframe',
  'frame',
  'frameset',
  'style',
  'svg',
  'math',
  'object',
  'embed',
  'applet',
  'base',
  'meta',
  'link',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'template',
  'noscript',
  'xmp',
  'plaintext',
  'title',
  'details',
  'body',
  'video',
  'audio',
  'source',
  'marquee',
  'animate',
  'set',
  'image',
  // Without the image proxy images are links: an <img> would make every viewer's browser fetch the
  // sender's URL. With it, only an <img> whose src is a signed path on the page's own origin passes (proxiedImageProblems).
  'img',
  'picture',
]);

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  colon: ':',
  tab: '\t',
  newline: '\n',
  sol: '/',
  lpar: '(',
  rpar: ')',
  period: '.',
  percnt: '%',
  num: '#',
  semi: ';',
};

/** Browser-style attribute decoding: numeric references with or without `;`, padded or not. */
function decodeAttribute(value: string): { text: string; unknownNamed: boolean } {
  let unknownNamed = false;
  const text = value.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);?/g, (ref, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
    }
    const named = NAMED[body.toLowerCase()];
    if (named === undefined) unknownNamed = true;
    return named ?? ref;
  });
  return { text, unknownNamed };
}

/** The scheme a browser's URL parser would read, or null for a relative URL. */
function browserScheme(url: string): string | null {
  const cleaned = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(cleaned);
  return match?.[1]?.toLowerCase() ?? null;
}

interface SeenElement {
  name: string;
  closing?: boolean;
  attributes: Array<[string, string]>;
}

/** A deliberately simple tag tokenizer (quoted and unquoted attributes, comments, `<!`, `<?`). */
function tokenizeTags(html: string): { elements: SeenElement[]; problems: string[] } {
  const elements: SeenElement[] = [];
  const problems: string[] = [];
  for (let i = html.indexOf('<'); i !== -1; i = html.indexOf('<', i + 1)) {
    const next = html[i + 1] ?? '';
    if (next === '!' || next === '?') {
      problems.push(`markup declaration or comment at ${i}`);
      continue;
    }
    if (!/[A-Za-z/]/.test(next)) {
      problems.push(`bare < at ${i}`);
      continue;
    }
    const end = findTagEnd(html, i);
    const closing = next === '/';
    const inside = html.slice(closing ? i + 2 : i + 1, end);
    const name = (/^[^\s/>]+/.exec(inside)?.[0] ?? '').toLowerCase();
    const attributes: Array<[string, string]> = [];
    const attrPattern = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
    for (const m of inside.slice(name.length).matchAll(attrPattern)) {
      attributes.push([(m[1] ?? '').toLowerCase(), m[2] ?? m[3] ?? m[4] ?? '']);
    }
    elements.push({ name, closing, attributes });
  }
  return { elements, problems };
}

function findTagEnd(html: string, start: number): number {
  let quote = '';
  for (let j = start + 1; j < html.length; j++) {
    const ch = html[j];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === '>') {
      return j;
    }
  }
  return html.length;
}

async function rewriterElements(html: string): Promise<{ elements: SeenElement[]; comments: number }> {
  const elements: SeenElement[] = [];
  let comments = 0;
  await new HTMLRewriter()
    .on('*', {
      element(el) {
        const attributes = [...el.attributes].map(([n = '', v = '']): [string, string] => [n.toLowerCase(), v]);
        elements.push({ name: el.tagName.toLowerCase(), attributes });
      },
    })
    .onDocument({
      comments() {
        comments++;
      },
    })
    .transform(new Response(html))
    .text();
  return { elements, comments };
}

/** The key of the renderings with the image proxy below (IMAGE_PROXY_KEY). */
const PROXY_KEY = 'markdown-test-image-proxy-key-0123456789';
const images = imageSigner({ IMAGE_PROXY_KEY: PROXY_KEY });

/**
 * An <img> with the image proxy: only src, alt, title and loading; src a path on the page's own
 * origin, `/image-proxy` with an https `u`, the two query parameters and nothing else. Its signature
 * is checked with WebCrypto in expectHarmless (the renderer signs with its own HMAC code).
 */
function proxiedImageProblems({ attributes }: SeenElement): string[] {
  const problems: string[] = [];
  for (const [attr, raw] of attributes) {
    if (!['src', 'alt', 'title', 'loading'].includes(attr)) problems.push(`undocumented attribute ${attr} on <img>`);
    const { text } = decodeAttribute(raw);
    if (attr === 'loading' && text !== 'lazy') problems.push(`loading is ${text}`);
    if (attr !== 'src') continue;
    if (!text.startsWith('/') || text.startsWith('//') || text.includes('\\')) {
      problems.push(`img src not a path on this origin: ${raw}`);
      continue;
    }
    const url = new URL(text, 'https://room.example');
    const u = url.searchParams.get('u') ?? '';
    if (url.origin !== 'https://room.example' || url.pathname !== '/image-proxy') problems.push(`img src not the proxy: ${raw}`);
    if ([...url.searchParams.keys()].join() !== 'u,s') problems.push(`img src parameters: ${raw}`);
    if (browserScheme(u) !== 'https') problems.push(`proxied image not https: ${u}`);
  }
  if (!attributes.some(([n]) => n === 'src')) problems.push('<img> without src');
  return problems;
}

/** The `s` of a proxied src, computed with WebCrypto from the documented scheme, not the renderer's code. */
async function independentlySigned(url: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(PROXY_KEY), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`switchboard image-proxy v1\n${url}`)));
  return btoa(String.fromCharCode(...mac))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

async function signatureValid(src: string): Promise<boolean> {
  const url = new URL(decodeAttribute(src).text, 'https://room.example');
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(PROXY_KEY), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
  const s = (url.searchParams.get('s') ?? '').replace(/-/g, '+').replace(/_/g, '/');
  const signature = Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
  const message = new TextEncoder().encode(`switchboard image-proxy v1\n${url.searchParams.get('u')}`);
  return crypto.subtle.verify('HMAC', key, signature, message);
}

function elementProblems({ name, closing, attributes }: SeenElement, proxied = false): string[] {
  if (proxied && name === 'img') return proxiedImageProblems({ name, closing, attributes });
  const problems: string[] = [];
  if (DANGEROUS_TAGS.has(name)) problems.push(`dangerous tag <${name}>`);
  if (!DOCUMENTED_TAGS.has(name)) problems.push(`undocumented tag <${name}>`);
  const allowed = DOCUMENTED_ATTRIBUTES[name] ?? [];
  for (const [attr, raw] of attributes) {
    if (attr.startsWith('on')) problems.push(`event handler ${attr} on <${name}>`);
    if (attr === 'style') problems.push(`style attribute on <${name}>`);
    if (!allowed.includes(attr)) problems.push(`undocumented attribute ${attr} on <${name}>`);
    const { text, unknownNamed } = decodeAttribute(raw);
    if (attr === 'href' || attr === 'src') {
      const scheme = browserScheme(text);
      const schemes = attr === 'href' ? ['http', 'https', 'mailto'] : ['http', 'https'];
      if (scheme === null || !schemes.includes(scheme)) problems.push(`${attr} with scheme ${scheme}: ${raw}`);
      if (unknownNamed) problems.push(`${attr} with an unknown character reference: ${raw}`);
    }
    if (attr === 'rel' && text !== REL) problems.push(`rel is ${text}`);
    if (attr === 'target' && text !== '_blank') problems.push(`target is ${text}`);
    if (attr === 'class' && !DOCUMENTED_CLASSES[name]?.test(text)) problems.push(`class on <${name}> is ${text}`);
  }
  if (name === 'a' && !closing) {
    const names = attributes.map(([n]) => n);
    if (!names.includes('rel') || !names.includes('target')) problems.push('<a> without rel/target');
  }
  return problems;
}

/** `proxied`: rendered with the image proxy's signer, so a signed same-origin <img> may appear. */
async function expectHarmless(html: string, proxied = false): Promise<void> {
  const simple = tokenizeTags(html);
  const rewritten = await rewriterElements(html);
  const problems = [
    ...simple.problems,
    ...simple.elements.flatMap((e) => elementProblems(e, proxied)),
    ...rewritten.elements.flatMap((e) => elementProblems(e, proxied)),
    ...(rewritten.comments > 0 ? ['an HTML comment survived'] : []),
  ];
  expect(problems, html).toEqual([]);
  for (const img of rewritten.elements.filter((e) => e.name === 'img')) {
    const src = img.attributes.find(([n]) => n === 'src')?.[1] ?? '';
    expect(await signatureValid(src), src).toBe(true);
  }
  // Both readers must agree on what elements exist (no tokenizer differential to hide in).
  const startTags = simple.elements.filter((e) => !e.closing).map((e) => e.name);
  expect(
    rewritten.elements.map((e) => e.name),
    html,
  ).toEqual(startTags);
}

interface Vector {
  label: string;
  md: string;
  /** Text that must be shown, escaped, so a reader sees what was attempted. */
  visible?: string;
  /** The same with the image proxy, where it differs (an image's alt text is its <img>'s alt). */
  visibleProxied?: string;
}

const VECTORS: Record<string, Vector[]> = {
  'script tags': [
    { label: 'plain script', md: '<script>alert(1)</script>', visible: '&lt;script&gt;alert(1)&lt;/script&gt;' },
    {
      label: 'upper case with src',
      md: '<SCRIPT SRC=https://xss.example/xss.js></SCRIPT>',
      visible: '&lt;SCRIPT SRC=https://xss.example/xss.js&gt;',
    },
    { label: 'mixed case', md: '<ScRiPt>alert(1)</sCrIpT>', visible: '&lt;ScRiPt&gt;' },
    { label: 'nested to reassemble', md: '<scr<script>ipt>alert(1)</scr</script>ipt>', visible: '&lt;scr&lt;script&gt;ipt&gt;' },
    { label: 'slash instead of space', md: '<script/xss src=https://xss.example/x.js></script>', visible: '&lt;script/xss' },
    { label: 'double open bracket', md: '<<script>alert(1);//<</script>', visible: '&lt;&lt;script&gt;' },
    { label: 'unclosed with protocol-relative src', md: '<script src=//xss.example/.j>', visible: '&lt;script src=//xss.example/.j&gt;' },
    {
      label: 'inline in a sentence',
      md: 'hello <script>alert(1)</script> world',
      visible: 'hello &lt;script&gt;alert(1)&lt;/script&gt; world',
    },
    {
      label: 'inside bold',
      md: '**bold <script>alert(1)</script>**',
      visible: '<strong>bold &lt;script&gt;alert(1)&lt;/script&gt;</strong>',
    },
    { label: 'newline inside the tag', md: 'x <script\n>alert(1)</script\n>', visible: '&lt;script' },
    { label: 'closing then opening', md: '</script><script>alert(1)</script>', visible: '&lt;/script&gt;&lt;script&gt;' },
    { label: 'in a list item', md: '- item <script>alert(1)</script>', visible: '&lt;script&gt;' },
    { label: 'in a blockquote', md: '> <script>alert(1)</script>', visible: '&lt;script&gt;' },
    { label: 'in a table cell', md: '| a |\n|---|\n| <script>alert(1)</script> |', visible: '&lt;script&gt;' },
    { label: 'pre block raw text', md: '<pre>\n<script>alert(1)</script>\n</pre>', visible: '&lt;pre&gt;' },
  ],
  'event handlers': [
    { label: 'img onerror', md: '<img src=x onerror=alert(1)>', visible: '&lt;img src=x onerror=alert(1)&gt;' },
    {
      label: 'img onmouseover quoted',
      md: `<IMG SRC=# onmouseover="alert('xxs')">`,
      visible: 'onmouseover=&quot;alert(&#39;xxs&#39;)&quot;',
    },
    { label: 'img eval(src)', md: '<img src=x:alert(alt) onerror=eval(src) alt=0>', visible: 'onerror=eval(src)' },
    { label: 'svg onload', md: '<svg onload=alert(1)>', visible: '&lt;svg onload=alert(1)&gt;' },
    { label: 'svg slash onload', md: '<svg/onload=alert(1)>', visible: '&lt;svg/onload=alert(1)&gt;' },
    { label: 'body onload', md: '<body onload=alert(1)>', visible: '&lt;body onload=alert(1)&gt;' },
    { label: 'details ontoggle', md: '<details open ontoggle=alert(1)>', visible: '&lt;details open ontoggle=alert(1)&gt;' },
    { label: 'quote confusion', md: '<img """><script>alert(1)</script>">', visible: '&lt;img &quot;&quot;&quot;&gt;' },
    { label: 'div onmouseover', md: '<div onmouseover="alert(1)">hover</div>', visible: '&lt;div onmouseover=&quot;alert(1)&quot;&gt;' },
    {
      label: 'inline a onmouseover',
      md: 'see <a onmouseover="alert(1)">x</a>',
      visible: '&lt;a onmouseover=&quot;alert(1)&quot;&gt;x&lt;/a&gt;',
    },
    { label: 'input autofocus onfocus', md: '<input autofocus onfocus=alert(1)>', visible: '&lt;input autofocus onfocus=alert(1)&gt;' },
    { label: 'video source onerror', md: '<video><source onerror="alert(1)">', visible: '&lt;video&gt;' },
    { label: 'marquee onstart', md: '<marquee onstart=alert(1)>x</marquee>', visible: '&lt;marquee onstart=alert(1)&gt;' },
    { label: 'entity-encoded handler body', md: '<img src=x onerror=&#97;&#108;&#101;&#114;&#116;(1)>', visible: 'onerror=&amp;#97;' },
    { label: 'breakout from markdown image url', md: '![x](https://ok.example/a.png" onerror="alert(1))' },
    { label: 'breakout from markdown image title', md: '![x](https://ok.example/a.png "t\\" onerror=\\"alert(1)")' },
  ],
  'javascript:, data: and vbscript: in markdown links': [
    { label: 'plain', md: '[a](javascript:alert(1))', visible: '[a](javascript:alert(1))' },
    { label: 'mixed case', md: '[a](JaVaScRiPt:alert(1))', visible: 'JaVaScRiPt:alert(1)' },
    { label: 'hex entity', md: '[a](jav&#x61;script:alert(1))', visible: 'jav&amp;#x61;script:alert(1)' },
    { label: 'decimal entity', md: '[a](&#106;avascript:alert(1))', visible: '&amp;#106;avascript:alert(1)' },
    { label: 'padded decimal entity', md: '[a](&#0000106;avascript:alert(1))', visible: '&amp;#0000106;avascript' },
    { label: 'upper hex entity', md: '[a](&#X6A;avascript:alert(1))' },
    { label: 'entity without semicolon', md: '[a](&#106avascript:alert(1))', visible: '&amp;#106avascript' },
    { label: 'every letter encoded', md: '[a](&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1))' },
    { label: 'named colon entity', md: '[a](javascript&colon;alert(1))', visible: 'javascript&amp;colon;alert(1)' },
    { label: 'tab inside angle destination', md: '[a](<java\tscript:alert(1)>)' },
    { label: 'named Tab entity', md: '[a](java&Tab;script:alert(1))' },
    { label: 'named NewLine entity', md: '[a](java&NewLine;script:alert(1))' },
    { label: 'encoded newline and tab', md: '[a](java&#x0A;scr&#9;ipt:alert(1))' },
    { label: 'NUL prefix', md: '[a](\u0000javascript:alert(1))' },
    { label: 'encoded NUL prefix', md: '[a](&#0;javascript:alert(1))' },
    { label: 'leading control character entity', md: '[a](&#x1;javascript:alert(1))' },
    { label: 'leading space in angle destination', md: '[a](< javascript:alert(1)>)' },
    { label: 'percent-encoded colon', md: '[a](javascript%3Aalert(1))' },
    { label: 'percent-encoded first letter', md: '[a](%6Aavascript:alert(1))' },
    { label: 'javascript with newline payload', md: '[a](javascript://%0aalert(1))' },
    { label: 'vbscript', md: '[a](vbscript:msgbox(1))', visible: 'vbscript:msgbox(1)' },
    { label: 'vbscript upper case', md: '[a](VBScript:msgbox(1))' },
    { label: 'data html base64', md: '[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)', visible: 'data:text/html;base64' },
    { label: 'data html upper case', md: '[a](DATA:text/html,<script>alert(1)</script>)' },
    { label: 'with a title', md: '[a](javascript:alert(1) "title")' },
    { label: 'backslash-escaped colon', md: '[a](javascript\\:alert(1))' },
    { label: 'zero-width space in scheme', md: '[a](java\u200bscript:alert(1))' },
    { label: 'protocol-relative URL', md: '[a](//evil.example/x)', visible: '[a](//evil.example/x)' },
    { label: 'relative URL', md: '[a](/relative/path)', visible: '[a](/relative/path)' },
    { label: 'file URL', md: '[a](file:///etc/passwd)' },
    { label: 'livescript', md: '[a](livescript:alert(1))' },
  ],
  images: [
    { label: 'javascript src', md: '![x](javascript:alert(1))', visible: '<p>x</p>' },
    { label: 'data svg src', md: '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)' },
    { label: 'entity-encoded javascript src', md: '![x](&#106;avascript:alert(1))' },
    { label: 'mailto is not an image source', md: '![x](mailto:a@b.example)', visible: '<p>x</p>' },
    { label: 'vbscript src', md: '![x](vbscript:msgbox(1))' },
    {
      label: 'HTML in the alt text',
      md: '![<img src=x onerror=alert(1)>](https://ok.example/a.png)',
      visible: 'target="_blank">&lt;img src=x onerror=alert(1)&gt;</a>',
      visibleProxied: ' alt="&lt;img src=x onerror=alert(1)&gt;" loading="lazy"></a>',
    },
    { label: 'protocol-relative src', md: '![x](//evil.example/a.png)' },
    {
      label: 'quote in the alt text',
      md: '![a" onerror="alert(1)](https://ok.example/a.png)',
      visible: 'target="_blank">a&quot; onerror=&quot;alert(1)</a>',
      visibleProxied: ' alt="a&quot; onerror=&quot;alert(1)" loading="lazy"></a>',
    },
  ],
  'reference links': [
    { label: 'javascript definition', md: '[a][r]\n\n[r]: javascript:alert(1)', visible: '[a][r]' },
    { label: 'entity-encoded definition', md: '[a][r]\n\n[r]: &#106;avascript:alert(1)' },
    { label: 'data image definition', md: '![a][r]\n\n[r]: data:image/png;base64,AAAA' },
    { label: 'angle-bracket definition', md: '[r]\n\n[r]: <javascript:alert(1)>' },
    { label: 'title breakout in definition', md: '[a][r]\n\n[r]: https://ok.example "t\\" onmouseover=\\"alert(1)"' },
    { label: 'collapsed reference', md: '[r][]\n\n[r]: vbscript:msgbox(1)' },
  ],
  autolinks: [
    { label: 'javascript autolink', md: '<javascript:alert(1)>', visible: '&lt;javascript:alert(1)&gt;' },
    { label: 'upper case autolink', md: '<JAVASCRIPT:alert(1)>' },
    { label: 'vbscript autolink', md: '<vbscript:msgbox(1)>' },
    { label: 'data autolink', md: '<data:text/html,alert(1)>' },
    { label: 'quote breakout in autolink', md: '<https://ok.example/" onmouseover="alert(1)>' },
    { label: 'quote breakout in www link', md: 'www.ok.example/"onmouseover="alert(1)' },
    { label: 'bare URL followed by a tag', md: 'https://ok.example/<script>alert(1)</script>', visible: '&lt;script&gt;' },
    { label: 'bare javascript: is just text', md: 'javascript:alert(1)', visible: '<p>javascript:alert(1)</p>' },
    { label: 'entity inside an autolink stays literal', md: '<https://ok.example/&#x22;onclick=&#x22;alert(1)>' },
    { label: 'xmpp GFM autolink is not linked', md: 'xmpp:user@evil.example' },
    { label: 'ftp bare URL is not linked', md: 'ftp://evil.example/file', visible: 'ftp://evil.example/file' },
  ],
  'SVG and MathML': [
    { label: 'svg script', md: '<svg><script>alert(1)</script></svg>', visible: '&lt;svg&gt;&lt;script&gt;' },
    { label: 'svg xlink:href', md: '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>' },
    {
      label: 'mathml mglyph style mutation',
      md: '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
      visible: '&lt;math&gt;',
    },
    { label: 'mathml href', md: '<math href="javascript:alert(1)">x</math>' },
    { label: 'svg animate onbegin', md: '<svg><animate onbegin=alert(1) attributeName=x dur=1s>' },
    { label: 'svg set to javascript href', md: '<svg><a><set attributeName="href" to="javascript:alert(1)"/><text>x</text></a></svg>' },
  ],
  'iframe, object and embed': [
    {
      label: 'iframe javascript src',
      md: '<iframe src="javascript:alert(1)"></iframe>',
      visible: '&lt;iframe src=&quot;javascript:alert(1)&quot;&gt;',
    },
    { label: 'iframe srcdoc', md: '<iframe srcdoc="<script>alert(1)</script>"></iframe>' },
    { label: 'object data', md: '<object data="javascript:alert(1)"></object>', visible: '&lt;object' },
    { label: 'embed data svg', md: '<embed src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">', visible: '&lt;embed' },
    { label: 'frameset', md: '<frameset><frame src="javascript:alert(1)"></frameset>' },
    { label: 'inline iframe', md: 'look <iframe src=https://evil.example></iframe> here', visible: 'look &lt;iframe' },
  ],
  'base, meta, link, style and CSS': [
    { label: 'base href', md: '<base href="javascript:alert(1)//">', visible: '&lt;base href=' },
    {
      label: 'meta refresh',
      md: '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
      visible: '&lt;meta http-equiv=&quot;refresh&quot;',
    },
    { label: 'link stylesheet', md: '<link rel="stylesheet" href="javascript:alert(1)">', visible: '&lt;link rel=' },
    { label: 'style import', md: "<style>@import 'javascript:alert(1)';</style>", visible: '&lt;style&gt;' },
    {
      label: 'CSS expression',
      md: '<div style="width: expression(alert(1))">x</div>',
      visible: 'style=&quot;width: expression(alert(1))&quot;',
    },
    { label: 'style url', md: '<style>body{background:url("javascript:alert(1)")}</style>' },
    {
      label: 'inline style attribute',
      md: 'a <span style="background-image:url(javascript:alert(1))">x</span>',
      visible: '&lt;span style=',
    },
    { label: 'form action', md: '<form action="javascript:alert(1)"><button>x</button></form>', visible: '&lt;form action=' },
  ],
  'comments, CDATA and declarations': [
    { label: 'script in a comment', md: '<!--<script>alert(1)</script>-->', visible: '&lt;!--&lt;script&gt;' },
    { label: 'comment closed early', md: '<!-- --!><script>alert(1)</script> -->', visible: '&lt;!--' },
    { label: 'CDATA', md: '<![CDATA[<script>alert(1)</script>]]>', visible: '&lt;![CDATA[' },
    { label: 'processing instruction', md: '<?xml version="1.0"?><script>alert(1)</script>', visible: '&lt;?xml' },
    { label: 'doctype', md: '<!DOCTYPE html><script>alert(1)</script>', visible: '&lt;!DOCTYPE html&gt;' },
    { label: 'inline comment', md: 'a <!-- hidden --> b', visible: 'a &lt;!-- hidden --&gt; b' },
    { label: 'conditional comment', md: '<!--[if gte IE 4]><script>alert(1)</script><![endif]-->' },
  ],
  'malformed links and images': [
    { label: 'unbalanced parenthesis', md: '[a](javascript:alert(1)', visible: 'javascript:alert(1)' },
    { label: 'double parentheses', md: '[a]((javascript:alert(1)))' },
    { label: 'link nested in link text', md: '[[a](javascript:alert(1))](https://ok.example)' },
    { label: 'angle-bracket destination', md: '[a](<javascript:alert(1)>)', visible: '[a](&lt;javascript:alert(1)&gt;)' },
    { label: 'attribute after angle destination', md: '[a](<https://ok.example/> onmouseover=alert(1))' },
    { label: 'second destination after an image', md: '![a](https://ok.example/a.png)(javascript:alert(1))' },
    { label: 'second destination after a link', md: '[a](https://ok.example/)(javascript:alert(1))' },
    { label: 'image with javascript inside a safe link', md: '[![img](javascript:alert(1))](https://ok.example)' },
    { label: 'safe image inside a javascript link', md: '[![img](https://ok.example/a.png)](javascript:alert(1))' },
    { label: 'double quote breakout in href', md: '[a](https://ok.example/"onmouseover="alert(1))' },
    { label: 'single quote breakout in href', md: "[a](https://ok.example/'onmouseover='alert(1))" },
    { label: 'backtick in href', md: '[x](https://ok.example/`onmouseover=alert(1)`)' },
    { label: 'tag breakout in title', md: `[a](https://ok.example "'\\"><script>alert(1)</script>")` },
    { label: 'title in parentheses with quotes', md: '[a](https://ok.example (x" onmouseover="alert(1)))' },
    { label: 'unclosed image bracket', md: '![a(javascript:alert(1))' },
    { label: 'brackets around javascript', md: '[javascript:alert(1)](javascript:alert(1))' },
  ],
  'code and entity smuggling': [
    {
      label: 'language breakout on a fence',
      md: '```js" onclick="alert(1)\n<script>alert(1)</script>\n```',
      visible: '<pre><code>&lt;script&gt;',
    },
    { label: 'script in a code span', md: '`<script>alert(1)</script>`', visible: '<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>' },
    { label: 'indented code', md: '    <script>alert(1)</script>', visible: '<pre><code>&lt;script&gt;' },
    { label: 'angle bracket in the language', md: '```<script>\nx\n```' },
    { label: 'named entities in text', md: '&lt;script&gt;alert(1)&lt;/script&gt;' },
    {
      label: 'numeric entities in text',
      md: '&#60;script&#62;alert(1)&#60;/script&#62;',
      visible: '&lt;script&gt;alert(1)&lt;/script&gt;',
    },
    { label: 'backslash-escaped tags', md: '\\<script>alert(1)\\</script>', visible: '&lt;script&gt;' },
    { label: 'double-encoded entities', md: '&amp;lt;script&amp;gt;' },
    { label: 'fullwidth angle brackets', md: '＜script＞alert(1)＜/script＞' },
  ],
  'code languages, emoji and mentions': [
    {
      label: 'fence language breaking out of the class',
      md: '```"><script>alert(1)</script>\nx\n```',
      visible: '<pre><code>x\n</code></pre>',
    },
    {
      label: 'known language with an attribute after it',
      md: '```ts" onclick="alert(1)\nconst a = 1;\n```',
      visible: '<pre><code>const a = 1;',
    },
    {
      label: 'highlighted HTML closing the code block',
      md: '```html\n</code></pre><script>alert(1)</script>\n```',
      visible: '<span class="hljs-name">script</span>',
    },
    {
      label: 'highlighted string closing a span',
      md: '```js\n"</span><img src=x onerror=alert(1)>"\n```',
      visible: '&lt;/span&gt;&lt;img',
    },
    { label: 'highlighted comment hiding a script', md: '```xml\n<!--<script>alert(1)</script>-->\n```', visible: '&lt;!--&lt;script&gt;' },
    { label: 'highlighted template literal', md: '```ts\n`\u0024{"<img src=x onerror=alert(1)>"}`\n```', visible: '&lt;img src=x' },
    {
      label: 'prototype names as languages',
      md: '```__proto__\nx\n```\n\n```constructor\ny\n```',
      visible: '<code class="language-constructor">y',
    },
    { label: 'script as an emoji name', md: ':<script>alert(1)</script>:', visible: ':&lt;script&gt;alert(1)&lt;/script&gt;:' },
    { label: 'quote after an emoji', md: ':tada:" onclick="alert(1)', visible: '\u{1f389}&quot; onclick=&quot;alert(1)' },
    { label: 'emoji next to a tag', md: ':tada:<img src=x onerror=alert(1)>', visible: '\u{1f389}&lt;img src=x onerror=alert(1)&gt;' },
    { label: 'emoji in a javascript link', md: '[:tada:](javascript:alert(1))', visible: '<p>[:tada:](javascript:alert(1))</p>' },
    { label: 'prototype names as shortcodes', md: ':constructor: :__proto__: :toString: :hasownproperty:', visible: ':constructor:' },
    { label: 'script as a mention', md: '@<script>alert(1)</script>', visible: '@&lt;script&gt;' },
    {
      label: 'mention next to a tag',
      md: '@here<img src=x onerror=alert(1)>',
      visible: '<span class="mention mention-here">@here</span>&lt;img',
    },
    { label: 'quote after a mention', md: '@bob"onmouseover="alert(1)', visible: '<span class="mention">@bob</span>&quot;onmouseover' },
    { label: 'mention in a javascript link', md: '[@here](javascript:alert(1))', visible: '<p>[@here](javascript:alert(1))</p>' },
    { label: 'mention in a link title', md: '[a](https://ok.example "@here :tada:")', visible: 'title="@here :tada:"' },
  ],
};

const ALL_VECTORS = Object.entries(VECTORS).flatMap(([family, vectors]) => vectors.map((v) => ({ family, ...v })));

describe('renderMarkdown: XSS vectors (OWASP filter-evasion style) render harmless', () => {
  it('covers at least 80 vectors', () => {
    expect(ALL_VECTORS.length).toBeGreaterThanOrEqual(80);
  });

  for (const [family, vectors] of Object.entries(VECTORS)) {
    describe(family, () => {
      it.each(vectors)('$label renders harmless', async ({ md, visible }) => {
        const html = renderMarkdown(md);
        await expectHarmless(html);
        if (visible !== undefined) expect(html).toContain(visible);
      });
    });
  }

  it('keeps every vector harmless when they are combined, nested and interleaved', async () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const wrappers = ['**', '_', '~~', '> ', '- ', '1. ', '# ', '| x |\n|---|\n| ', '[', '](', ')', '![', '\n', '\n\n', '`'];
    for (let i = 0; i < 300; i++) {
      let md = '';
      for (let j = 0; j < 4; j++) {
        md += (wrappers[random(wrappers.length)] ?? '') + (ALL_VECTORS[random(ALL_VECTORS.length)]?.md ?? '');
      }
      await expectHarmless(renderMarkdown(md));
    }
  });

  it('keeps every message vector of the browser suite (test/e2e/support/xss-vectors.ts) harmless', async () => {
    const messages = xssVectors().filter((v) => v.field === 'message');
    expect(messages.length).toBeGreaterThanOrEqual(150);
    for (const { payload } of messages) await expectHarmless(renderMarkdown(payload));
  });

  it('without the image proxy (no IMAGE_PROXY_KEY), lets no <img> through: images are links, raw HTML is text', async () => {
    const inputs = [
      ...ALL_VECTORS.map((v) => v.md),
      '![a](https://x.example/a.png)',
      '<img src="https://x.example/a.png">',
      '<IMG SRC=https://x.example/a.png>',
      '<picture><source srcset="https://x.example/a.png"><img src="https://x.example/a.png"></picture>',
      '![a][r]\n\n[r]: https://x.example/a.png',
      '[![a](https://x.example/a.png)](https://x.example)',
      '| x |\n|---|\n| ![a](https://x.example/a.png) |',
      '> - ![a](https://x.example/a.png)',
    ];
    for (const md of inputs) {
      const html = renderMarkdown(md);
      expect(html, md).not.toMatch(/<img/i);
      expect(
        (await rewriterElements(html)).elements.map((e) => e.name),
        md,
      ).not.toContain('img');
    }
  });
});

describe('renderMarkdown with the image proxy (IMAGE_PROXY_KEY): the same vectors stay harmless', () => {
  for (const [family, vectors] of Object.entries(VECTORS)) {
    it(`${family}: every vector, its only <img> a signed path on this origin`, async () => {
      for (const { md, visible, visibleProxied } of vectors) {
        const html = renderMarkdown(md, { images });
        await expectHarmless(html, true);
        const shown = visibleProxied ?? visible;
        if (shown !== undefined) expect(html, md).toContain(shown);
      }
    });
  }

  it('keeps every vector harmless when they are combined, nested and interleaved', async () => {
    let seed = 11;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const wrappers = [
      '**',
      '_',
      '~~',
      '> ',
      '- ',
      '1. ',
      '# ',
      '| x |\n|---|\n| ',
      '[',
      '](',
      ')',
      '![',
      '![a](https://ok.example/',
      '\n',
      '\n\n',
      '`',
    ];
    for (let i = 0; i < 300; i++) {
      let md = '';
      for (let j = 0; j < 4; j++) {
        md += (wrappers[random(wrappers.length)] ?? '') + (ALL_VECTORS[random(ALL_VECTORS.length)]?.md ?? '');
      }
      await expectHarmless(renderMarkdown(md, { images }), true);
    }
  });

  it('keeps every message vector of the browser suite (test/e2e/support/xss-vectors.ts) harmless', async () => {
    for (const { payload } of xssVectors().filter((v) => v.field === 'message')) {
      await expectHarmless(renderMarkdown(payload, { images }), true);
    }
  });

  it('proxies only markdown images on allowed https hosts; raw HTML <img> stays text', async () => {
    const cases: Array<[string, number]> = [
      ['![a](https://x.example/a.png)', 1],
      ['<img src="https://x.example/a.png">', 0],
      ['<IMG SRC=https://x.example/a.png>', 0],
      ['![a][r]\n\n[r]: https://x.example/a.png', 1],
      ['[![a](https://x.example/a.png)](https://x.example)', 1],
      ['| x |\n|---|\n| ![a](https://x.example/a.png) |', 1],
      ['> - ![a](https://x.example/a.png) ![b](https://x.example/b.png)', 2],
      ['![a](http://x.example/a.png)', 0],
      ['![a](https://localhost/a.png)', 0],
      ['![a](https://192.168.1.1/a.png)', 0],
      ['![a](https://x.example:8443/a.png)', 0],
      ['![a](//x.example/a.png)', 0],
      ['![a](/image-proxy?u=https://x.example/a.png&s=forged)', 0],
    ];
    for (const [md, count] of cases) {
      const html = renderMarkdown(md, { images });
      await expectHarmless(html, true);
      expect((await rewriterElements(html)).elements.filter((e) => e.name === 'img').length, md).toBe(count);
    }
  });
});

describe('renderMarkdown: legitimate markdown', () => {
  it('renders bold, italic and strikethrough', () => {
    expect(renderMarkdown('**bold**, _italic_ and ~~gone~~')).toBe('<p><strong>bold</strong>, <em>italic</em> and <del>gone</del></p>\n');
  });

  it('turns a single newline into a line break', () => {
    expect(renderMarkdown('line one\nline two')).toBe('<p>line one<br>line two</p>\n');
  });

  it('renders a link with rel, target and an escaped title', () => {
    expect(renderMarkdown('[Docs](https://example.com/docs?a=1&b=2 "The <docs>")')).toBe(
      '<p><a href="https://example.com/docs?a=1&amp;b=2" title="The &lt;docs&gt;" rel="noopener noreferrer nofollow" target="_blank">Docs</a></p>\n',
    );
  });

  it('renders mailto links', () => {
    expect(renderMarkdown('[mail us](mailto:ops@example.com)')).toBe(
      '<p><a href="mailto:ops@example.com" rel="noopener noreferrer nofollow" target="_blank">mail us</a></p>\n',
    );
  });

  it('resolves character references in a destination, then escapes it again', () => {
    expect(renderMarkdown('[q](https://example.com/?a=1&amp;b=&#50;)')).toBe(
      '<p><a href="https://example.com/?a=1&amp;b=2" rel="noopener noreferrer nofollow" target="_blank">q</a></p>\n',
    );
  });

  it('percent-encodes spaces and lower-cases the scheme', () => {
    expect(renderMarkdown('[s](<HTTPS://example.com/a b>)')).toBe(
      '<p><a href="https://example.com/a%20b" rel="noopener noreferrer nofollow" target="_blank">s</a></p>\n',
    );
  });

  it('reads a destination as a browser does, dropping tabs and newlines inside it', () => {
    expect(renderMarkdown('[t](ht&Tab;tps://example.com/a&NewLine;b)')).toBe(
      '<p><a href="https://example.com/ab" rel="noopener noreferrer nofollow" target="_blank">t</a></p>\n',
    );
  });

  it('renders an https image as a link to it, its text the alt text, with title (no viewer fetches it)', () => {
    expect(renderMarkdown('![build *status*](https://ci.example.com/badge.svg "CI")')).toBe(
      '<p><a href="https://ci.example.com/badge.svg" title="CI" rel="noopener noreferrer nofollow" target="_blank">build status</a></p>\n',
    );
  });

  it('renders an image without alt text as a link showing its URL', () => {
    expect(renderMarkdown('![](https://ci.example.com/b.svg?x=1&y=2)')).toBe(
      '<p><a href="https://ci.example.com/b.svg?x=1&amp;y=2" rel="noopener noreferrer nofollow" target="_blank">https://ci.example.com/b.svg?x=1&amp;y=2</a></p>\n',
    );
  });

  it('with the image proxy, renders an https image as its proxied <img> inside a link to it', async () => {
    const src = await independentlySigned('https://ci.example.com/badge.svg');
    expect(renderMarkdown('![build *status*](https://ci.example.com/badge.svg "CI")', { images })).toBe(
      '<p><a href="https://ci.example.com/badge.svg" rel="noopener noreferrer nofollow" target="_blank">' +
        `<img src="/image-proxy?u=https%3A%2F%2Fci.example.com%2Fbadge.svg&amp;s=${src}" alt="build status" title="CI" loading="lazy"></a></p>\n`,
    );
  });

  it('with the image proxy, encodes the image URL once more inside the proxied src', async () => {
    const url = 'https://ci.example.com/b.svg?x=1&y=%C3%A9%20';
    const src = await independentlySigned(url);
    expect(renderMarkdown('![](https://ci.example.com/b.svg?x=1&y=é%20)', { images })).toBe(
      '<p><a href="https://ci.example.com/b.svg?x=1&amp;y=%C3%A9%20" rel="noopener noreferrer nofollow" target="_blank">' +
        `<img src="/image-proxy?u=https%3A%2F%2Fci.example.com%2Fb.svg%3Fx%3D1%26y%3D%25C3%25A9%2520&amp;s=${src}" alt="" loading="lazy"></a></p>\n`,
    );
  });

  it('with the image proxy, renders a badge inside a link as the proxied <img> inside the outer link', async () => {
    const src = await independentlySigned('https://ci.example.com/b.svg');
    expect(renderMarkdown('[![build](https://ci.example.com/b.svg)](https://ci.example.com/job/1)', { images })).toBe(
      '<p><a href="https://ci.example.com/job/1" rel="noopener noreferrer nofollow" target="_blank">' +
        `<img src="/image-proxy?u=https%3A%2F%2Fci.example.com%2Fb.svg&amp;s=${src}" alt="build" loading="lazy"></a></p>\n`,
    );
  });

  it('with the image proxy, keeps an http: image a link (the proxy fetches https only)', () => {
    expect(renderMarkdown('![graph](http://grafana.example.com/g.png)', { images })).toBe(
      '<p><a href="http://grafana.example.com/g.png" rel="noopener noreferrer nofollow" target="_blank">graph</a></p>\n',
    );
  });

  it('renders a badge inside a link as the outer link with the badge text, never a link inside a link', () => {
    expect(renderMarkdown('[![build](https://ci.example.com/b.svg)](https://ci.example.com/job/1)')).toBe(
      '<p><a href="https://ci.example.com/job/1" rel="noopener noreferrer nofollow" target="_blank">build</a></p>\n',
    );
  });

  it('renders bare URLs, www links and email addresses as links', () => {
    expect(renderMarkdown('see https://example.com/x, www.example.org and ops@example.com')).toBe(
      '<p>see <a href="https://example.com/x" rel="noopener noreferrer nofollow" target="_blank">https://example.com/x</a>, ' +
        '<a href="http://www.example.org" rel="noopener noreferrer nofollow" target="_blank">www.example.org</a> and ' +
        '<a href="mailto:ops@example.com" rel="noopener noreferrer nofollow" target="_blank">ops@example.com</a></p>\n',
    );
  });

  it('renders a table with alignment', () => {
    expect(renderMarkdown('| Job | Result |\n|:----|------:|\n| build | **ok** |')).toBe(
      '<table>\n<thead>\n<tr>\n<th align="left">Job</th>\n<th align="right">Result</th>\n</tr>\n</thead>\n' +
        '<tbody><tr>\n<td align="left">build</td>\n<td align="right"><strong>ok</strong></td>\n</tr>\n</tbody></table>\n',
    );
  });

  it('renders fenced code in an unknown language with its language class and escaped content', () => {
    expect(renderMarkdown('```elm-ish\nconst a = "<b>" && 1;\n```')).toBe(
      '<pre><code class="language-elm-ish">const a = &quot;&lt;b&gt;&quot; &amp;&amp; 1;\n</code></pre>\n',
    );
  });

  it('keeps only the allowed characters of a fence language', () => {
    expect(renderMarkdown('```c++ extra words\nx\n```')).toBe('<pre><code class="hljs language-c++">x\n</code></pre>\n');
    expect(renderMarkdown('```py{1}\nx\n```')).toBe('<pre><code>x\n</code></pre>\n');
  });

  it('renders inline code escaped', () => {
    expect(renderMarkdown('run `a < b && c`')).toBe('<p>run <code>a &lt; b &amp;&amp; c</code></p>\n');
  });

  it('renders unordered, ordered and task lists', () => {
    expect(renderMarkdown('- one\n- two')).toBe('<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n');
    expect(renderMarkdown('3. three\n4. four')).toBe('<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>\n');
    expect(renderMarkdown('- [x] done\n- [ ] todo')).toBe(
      '<ul>\n<li class="task"><span class="task-check task-done">\u2611</span> done</li>\n' +
        '<li class="task"><span class="task-check task-todo">\u2610</span> todo</li>\n</ul>\n',
    );
  });

  it('renders headings, blockquotes and rules', () => {
    expect(renderMarkdown('# Deploy\n\n> shipped\n\n---')).toBe('<h1>Deploy</h1>\n<blockquote>\n<p>shipped</p>\n</blockquote>\n<hr>\n');
  });

  it('shows raw HTML as text instead of dropping it', () => {
    expect(renderMarkdown('<b>hi</b> there')).toBe('<p>&lt;b&gt;hi&lt;/b&gt; there</p>\n');
    expect(renderMarkdown('<div>\nblock\n</div>')).toBe('<p>&lt;div&gt;<br>block<br>&lt;/div&gt;</p>\n');
  });

  it('shows a link with a forbidden destination as its source text', () => {
    expect(renderMarkdown('[click](javascript:alert(1))')).toBe('<p>[click](javascript:alert(1))</p>\n');
  });

  it('shows an image with a forbidden source as its alt text', () => {
    expect(renderMarkdown('![a <b> & c](data:image/png;base64,AAAA)')).toBe('<p>a &lt;b&gt; &amp; c</p>\n');
  });
});

describe('renderMarkdown: robustness', () => {
  it('never throws and stays harmless on deeply nested input', async () => {
    for (const md of [
      '>'.repeat(40_000),
      '> '.repeat(20_000),
      Array.from({ length: 300 }, (_, i) => `${' '.repeat(i * 2)}- x`).join('\n'),
    ]) {
      await expectHarmless(renderMarkdown(md));
    }
  });

  it('keeps nesting deeper than 16 levels as text', () => {
    const html = renderMarkdown(`${'>'.repeat(20)} deep`);
    expect(html.split('<blockquote>').length - 1).toBe(16);
    expect(html).toContain('&gt;&gt;&gt;&gt; deep');
  });

  it('replaces NUL characters', () => {
    expect(renderMarkdown('a\u0000b')).toBe('<p>a\ufffdb</p>\n');
  });

  const realistic =
    '**Build #123** for [switchboard](https://ci.example.com/job/123) finished: _2 warnings_, see `npm test`.\n' +
    '- step one ok\n- step two ok\n\n| stage | time |\n|---|---|\n| test | 12s |\n\n![badge](https://ci.example.com/b.svg)\n\n';

  it.each([
    { label: 'a realistic message', unit: realistic },
    { label: 'intraword underscores', unit: 'a_' },
    { label: 'unmatched emphasis', unit: '*a' },
    { label: 'spaces without a newline', unit: ' ', wrap: (s: string) => `a${s}b` },
    { label: 'bare URLs glued by parentheses', unit: '(http://x' },
    { label: 'unterminated images', unit: '![a](http://x' },
    { label: 'empty links', unit: '[]()' },
    { label: 'nested blockquote markers', unit: '>' },
  ])('renders $label without quadratic growth, up to the 40,000-character limit', ({ unit, wrap }) => {
    const input = (chars: number) => {
      const body = unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
      return wrap ? wrap(body) : body;
    };
    const { ratio, size } = growthRatio((chars) => renderMarkdown(input(chars)), 1_250, 5_000);
    expect(GROWTH * size).toBeLessThanOrEqual(40_000);
    expect(ratio, `${GROWTH}x the characters (${size} -> ${GROWTH * size}) took ${ratio.toFixed(1)}x the time`).toBeLessThan(
      LINEAR_RATIO_MAX,
    );
  });
});

describe("isAllowedHtml (the renderer's own last check)", () => {
  it('accepts what the renderer emits', () => {
    expect(
      isAllowedHtml('<p><a href="https://x.example/?a=1&amp;b" title="t" rel="noopener noreferrer nofollow" target="_blank">x</a></p>'),
    ).toBe(true);
  });

  it('rejects an <img> with an https source: only the image proxy’s signed paths', () => {
    expect(isAllowedHtml('<img src="https://x.example/a.png" alt="a &quot;b&quot;">')).toBe(false);
    const s = 'A'.repeat(43);
    expect(isAllowedHtml(`<img src="/image-proxy?u=https%3A%2F%2Fx.example%2Fa.png&amp;s=${s}" alt="a" loading="lazy">`)).toBe(true);
    expect(isAllowedHtml(`<img src="//evil.example/image-proxy?u=x&amp;s=${s}" alt="">`)).toBe(false);
    expect(isAllowedHtml(`<img src="/image-proxy?u=x&amp;s=${s}&amp;x=1" alt="">`)).toBe(false);
    expect(isAllowedHtml(`<img src="/image-proxy?u=x&amp;s=${s}" onerror="alert(1)">`)).toBe(false);
    expect(isAllowedHtml(`<img src="/image-proxy?u=x&amp;s=${s}" loading="eager">`)).toBe(false);
  });

  it.each([
    '<script>alert(1)</script>',
    '<a href="javascript:alert(1)" rel="noopener noreferrer nofollow" target="_blank">x</a>',
    '<a href="jav&#x61;script:alert(1)">x</a>',
    '<a href="https://x.example" onclick="alert(1)">x</a>',
    '<img src="data:image/png;base64,AAAA" alt="">',
    '<img src=x onerror=alert(1)>',
    '<p style="color:red">x</p>',
    '<p><!-- x --></p>',
    '<code class="language-js x">a</code>',
    '<a href="https://x.example" href="javascript:alert(1)">x</a>',
    '<svg></svg>',
    'a < b',
  ])('rejects %s', (html) => {
    expect(isAllowedHtml(html)).toBe(false);
  });
});
