/**
 * A small, strict XML reader for SOAP envelopes such as Salesforce's Outbound Messages (workerd has
 * no DOMParser, and a dependency is not worth one envelope shape). It reads well-formed XML 1.0 with
 * namespaces, and refuses everything a hostile sender could use: no DOCTYPE (so no entity
 * definitions, external or expanding), no references but the five predefined entities and
 * character references, no processing instructions but the XML declaration, UTF-8 only, and hard
 * bounds on depth, element count and attribute count. It never recurses, so nesting cannot
 * overflow the stack, and it runs in time linear in the input.
 */

export interface XmlElement {
  /** As written, e.g. `soapenv:Envelope`. */
  name: string;
  local: string;
  /** The namespace URI the prefix (or default namespace) resolves to; null for none. */
  namespace: string | null;
  /** By qualified name, as written; namespace declarations included. */
  attributes: ReadonlyMap<string, string>;
  children: XmlElement[];
  /** Character data directly inside this element (CDATA included), references decoded. */
  text: string;
}

export class XmlError extends Error {}

export const XML_LIMITS = { depth: 32, elements: 20_000, attributes: 32 } as const;

const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';
// XML 1.0 `Char`; anything else (most C0 controls, lone surrogates, U+FFFE/U+FFFF) makes the document malformed.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
const NAME = /[A-Za-z_][A-Za-z0-9._-]{0,255}(?::[A-Za-z_][A-Za-z0-9._-]{0,255})?/y;
const SPACE = /[ \t\n]*/y;

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/** Decodes the references in character data or an attribute value; refuses any other entity. */
function decodeReferences(raw: string): string {
  if (!raw.includes('&')) return raw;
  let out = '';
  let at = 0;
  for (;;) {
    const amp = raw.indexOf('&', at);
    if (amp === -1) return out + raw.slice(at);
    out += raw.slice(at, amp);
    const semi = raw.indexOf(';', amp);
    const ref = semi === -1 || semi - amp > 12 ? null : raw.slice(amp + 1, semi);
    if (ref === null) throw new XmlError('A "&" must start a reference such as &amp;.');
    let decoded: string | undefined;
    const numeric = /^#(?:([0-9]{1,7})|x([0-9a-fA-F]{1,6}))$/.exec(ref);
    if (numeric) {
      const code = numeric[1] !== undefined ? Number.parseInt(numeric[1], 10) : Number.parseInt(numeric[2] ?? '', 16);
      if (!isXmlChar(code)) throw new XmlError(`&${ref}; is not a character XML allows.`);
      decoded = String.fromCodePoint(code);
    } else {
      decoded = Object.hasOwn(PREDEFINED, ref) ? PREDEFINED[ref] : undefined;
    }
    if (decoded === undefined)
      throw new XmlError(`The entity &${ref}; is not allowed (only the five predefined ones and character references).`);
    out += decoded;
    at = semi + 1;
  }
}

interface Open {
  element: XmlElement;
  namespaces: ReadonlyMap<string, string>;
}

export function parseXml(input: string): XmlElement {
  if (NOT_XML_CHAR.test(input)) throw new XmlError('The document holds a character XML does not allow.');
  const s = input.replace(/\r\n?/g, '\n');
  let i = 0;
  let elements = 0;
  let root: XmlElement | undefined;
  const stack: Open[] = [];

  const fail = (message: string): never => {
    throw new XmlError(`${message} (at offset ${i}).`);
  };
  const skipSpace = (): void => {
    SPACE.lastIndex = i;
    SPACE.exec(s);
    i = SPACE.lastIndex;
  };
  const readName = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(s);
    if (!m) return fail('Expected a name');
    i = NAME.lastIndex;
    return m[0];
  };
  const readAttributes = (): Map<string, string> => {
    const attributes = new Map<string, string>();
    for (;;) {
      const before = i;
      skipSpace();
      const ch = s[i];
      if (ch === '>' || ch === '/' || ch === '?' || ch === undefined) return attributes;
      if (i === before) fail('Expected whitespace before an attribute');
      const name = readName();
      skipSpace();
      if (s[i] !== '=') fail(`Expected "=" after attribute ${name}`);
      i++;
      skipSpace();
      const q = s[i];
      if (q !== '"' && q !== "'") return fail(`The value of attribute ${name} must be quoted`);
      const end = s.indexOf(q, i + 1);
      if (end === -1) fail('Unterminated attribute value');
      const raw = s.slice(i + 1, end);
      if (raw.includes('<')) fail(`"<" is not allowed in the value of attribute ${name}`);
      if (attributes.has(name)) fail(`Attribute ${name} appears twice`);
      if (attributes.size >= XML_LIMITS.attributes) fail('Too many attributes');
      attributes.set(name, decodeReferences(raw).replace(/[\t\n]/g, ' '));
      i = end + 1;
    }
  };
  const skipComment = (): void => {
    const end = s.indexOf('-->', i + 4);
    if (end === -1) fail('Unterminated comment');
    if (s.slice(i + 4, end).includes('--')) fail('"--" is not allowed inside a comment');
    i = end + 3;
  };

  // Prolog: the XML declaration, if any, comes first of all.
  if (s.startsWith('<?xml') && /[ \t\n?]/.test(s[5] ?? '')) {
    i = 5;
    const declaration = readAttributes();
    if (!s.startsWith('?>', i)) fail('Malformed XML declaration');
    i += 2;
    const version = declaration.get('version');
    if (version === undefined || !/^1\.[0-9]+$/.test(version)) fail('The XML declaration needs version="1.x"');
    const encoding = declaration.get('encoding');
    if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) fail(`Only UTF-8 is accepted, not ${encoding}`);
  }

  for (;;) {
    const current = stack.at(-1);
    if (current === undefined && root !== undefined) {
      // After the root: only whitespace and comments.
      skipSpace();
      if (i >= s.length) return root;
      if (s.startsWith('<!--', i)) {
        skipComment();
        continue;
      }
      return fail('Content after the root element');
    }
    if (current === undefined) {
      skipSpace();
      if (s.startsWith('<!--', i)) {
        skipComment();
        continue;
      }
      if (/^<!DOCTYPE/i.test(s.slice(i, i + 9))) fail('A DOCTYPE is not allowed');
      if (s[i] !== '<') fail(i >= s.length ? 'No root element' : 'Text before the root element');
    } else {
      // Character data up to the next markup.
      const lt = s.indexOf('<', i);
      if (lt === -1) fail(`Element ${current.element.name} is not closed`);
      const raw = s.slice(i, lt);
      if (raw.includes(']]>')) fail('"]]>" is not allowed in text');
      current.element.text += decodeReferences(raw);
      i = lt;
    }

    // At a "<".
    if (s.startsWith('</', i)) {
      if (current === undefined) return fail('Closing tag without an open element');
      i += 2;
      const name = readName();
      skipSpace();
      if (s[i] !== '>') fail('Malformed closing tag');
      i++;
      if (name !== current.element.name) fail(`Expected </${current.element.name}>, found </${name}>`);
      stack.pop();
      continue;
    }
    if (s.startsWith('<!--', i)) {
      skipComment();
      continue;
    }
    if (s.startsWith('<![CDATA[', i)) {
      if (current === undefined) return fail('CDATA outside the root element');
      const end = s.indexOf(']]>', i + 9);
      if (end === -1) fail('Unterminated CDATA section');
      current.element.text += s.slice(i + 9, end);
      i = end + 3;
      continue;
    }
    if (s.startsWith('<!', i)) fail(/^<!DOCTYPE/i.test(s.slice(i, i + 9)) ? 'A DOCTYPE is not allowed' : 'Declarations are not allowed');
    if (s.startsWith('<?', i)) fail('Processing instructions are not allowed');

    // A start tag.
    i++;
    const name = readName();
    const attributes = readAttributes();
    let selfClosing = false;
    if (s.startsWith('/>', i)) {
      selfClosing = true;
      i += 2;
    } else if (s[i] === '>') {
      i++;
    } else {
      fail(`Malformed start tag <${name}>`);
    }
    if (++elements > XML_LIMITS.elements) fail('Too many elements');
    if (stack.length >= XML_LIMITS.depth) fail('Elements are nested too deeply');

    const namespaces = new Map(current?.namespaces ?? [['xml', XML_NAMESPACE]]);
    for (const [attribute, value] of attributes) {
      if (attribute === 'xmlns') namespaces.set('', value);
      else if (attribute.startsWith('xmlns:')) {
        if (value === '') fail(`Namespace prefix ${attribute.slice(6)} cannot be undeclared`);
        namespaces.set(attribute.slice(6), value);
      }
    }
    const colon = name.indexOf(':');
    const prefix = colon === -1 ? '' : name.slice(0, colon);
    const namespace = namespaces.get(prefix);
    if (prefix !== '' && namespace === undefined) fail(`Namespace prefix ${prefix} is not declared`);
    for (const attribute of attributes.keys()) {
      const p = attribute.includes(':') ? attribute.slice(0, attribute.indexOf(':')) : '';
      if (p !== '' && p !== 'xmlns' && !namespaces.has(p)) fail(`Namespace prefix ${p} is not declared`);
    }
    const element: XmlElement = {
      name,
      local: colon === -1 ? name : name.slice(colon + 1),
      namespace: namespace === undefined || namespace === '' ? null : namespace,
      attributes,
      children: [],
      text: '',
    };
    if (current) current.element.children.push(element);
    else root = element;
    if (!selfClosing) stack.push({ element, namespaces });
  }
}

/** The element's children with this local name and namespace. */
export function childrenNamed(element: XmlElement, local: string, namespace?: string | null): XmlElement[] {
  return element.children.filter((c) => c.local === local && (namespace === undefined || c.namespace === namespace));
}
