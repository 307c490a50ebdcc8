/**
 * The renderer's last check, independent of how the HTML was made (marked, the highlighter, the
 * emoji and mention pass): every tag and attribute must be listed here, in canonical escaped form.
 */

import { PROXIED_SRC } from '../image-proxy/sign';

export const LINK_REL = 'noopener noreferrer nofollow';

/** Classes the renderer writes; the room page's markdown.css styles them. */
export const CLASS = {
  mention: 'mention',
  task: 'task',
  taskDone: 'task-check task-done',
  taskTodo: 'task-check task-todo',
} as const;

/** `hljs-title class_ inherited__`: highlight.js writes a scope `a.b.c` as `hljs-a b_ c__`. */
const HIGHLIGHT_CLASS = /^hljs-[a-z]+(?:[_-][a-z]+)*(?: [a-z]+_+)*$/;
/** highlight.js marks a language embedded in another (CSS inside HTML) with `language-<name>`. */
const EMBEDDED_LANGUAGE_CLASS = /^language-[a-z0-9]+$/;
const MENTION_CLASS = /^mention(?: mention-(?:here|channel|everyone|all))?$/;

type AttributeCheck = (value: string) => boolean;
const isHttpOrMailto: AttributeCheck = (v) => /^(?:https?|mailto):[^\u0000-\u0020\u007f]*$/.test(v);
const anyText: AttributeCheck = () => true;
const align: AttributeCheck = (v) => v === 'left' || v === 'center' || v === 'right';
/** The classes highlight.js may write on a span. */
export const isHighlightClass = (v: string): boolean => HIGHLIGHT_CLASS.test(v) || EMBEDDED_LANGUAGE_CLASS.test(v);
const spanClass: AttributeCheck = (v) => isHighlightClass(v) || MENTION_CLASS.test(v) || v === CLASS.taskDone || v === CLASS.taskTodo;
const NO_ATTRIBUTES: Readonly<Record<string, AttributeCheck>> = {};

/** Tags the renderer emits, each with the attributes it may carry and a check of their values. */
const ALLOWED: ReadonlyMap<string, Readonly<Record<string, AttributeCheck>>> = new Map([
  ...[
    'p',
    'br',
    'strong',
    'em',
    'del',
    'pre',
    'ul',
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
  ['li', { class: (v: string) => v === CLASS.task }],
  ['code', { class: (v: string) => /^(?:hljs )?language-[A-Za-z0-9_+-]+$/.test(v) }],
  ['span', { class: spanClass }],
  ['th', { align }],
  ['td', { align }],
  ['a', { href: isHttpOrMailto, title: anyText, rel: (v: string) => v === LINK_REL, target: (v: string) => v === '_blank' }],
  // Only through the image proxy: a signed path on the page's own origin, never the sender's URL.
  ['img', { src: (v: string) => PROXIED_SRC.test(v), alt: anyText, title: anyText, loading: (v: string) => v === 'lazy' }],
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
 * are allowed for it, in canonical escaped form, with allowed values (href schemes included).
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
