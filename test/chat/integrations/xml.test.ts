import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GROWTH, growthRatio, LINEAR_RATIO_MAX } from '../../support/growth';
import { parseXml, XML_LIMITS, XmlError, type XmlElement } from '../../../src/chat/integrations/xml';

function refuses(xml: string, reason: RegExp): void {
  let error: unknown;
  try {
    parseXml(xml);
  } catch (err) {
    error = err;
  }
  expect(error, xml.slice(0, 80)).toBeInstanceOf(XmlError);
  expect((error as Error).message).toMatch(reason);
}

/** A compact picture of the tree, to compare with what the document says, written by hand. */
function outline(e: XmlElement): unknown {
  return {
    name: e.name,
    ns: e.namespace,
    ...(e.attributes.size > 0 ? { attrs: Object.fromEntries(e.attributes) } : {}),
    ...(e.text.trim() !== '' ? { text: e.text } : {}),
    ...(e.children.length > 0 ? { children: e.children.map(outline) } : {}),
  };
}

describe('the strict XML reader', () => {
  it('reads elements, attributes, namespaces, text, references, CDATA and comments', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\r\n<!-- before -->\n' +
      '<s:Envelope xmlns:s="urn:soap" xmlns="urn:default" a=\'1\' b="x &amp; &lt;y&gt; &#65;&#x42;">' +
      '<Body><n:item xmlns:n="urn:n" n:k="v">caf\u00e9 &quot;&apos; 😀<![CDATA[<raw & text>]]></n:item><empty/></Body>' +
      '</s:Envelope>\n<!-- after -->\n';
    expect(outline(parseXml(xml))).toEqual({
      name: 's:Envelope',
      ns: 'urn:soap',
      attrs: { 'xmlns:s': 'urn:soap', xmlns: 'urn:default', a: '1', b: 'x & <y> AB' },
      children: [
        {
          name: 'Body',
          ns: 'urn:default',
          children: [
            { name: 'n:item', ns: 'urn:n', attrs: { 'xmlns:n': 'urn:n', 'n:k': 'v' }, text: 'caf\u00e9 "\' 😀<raw & text>' },
            { name: 'empty', ns: 'urn:default' },
          ],
        },
      ],
    });
  });

  it.each([
    [
      'a DOCTYPE (billion laughs)',
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><a>&lol2;</a>',
      /DOCTYPE/,
    ],
    ['a DOCTYPE with an external entity', '<!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><a>&xxe;</a>', /DOCTYPE/],
    ['a DOCTYPE inside the root', '<a><!DOCTYPE a></a>', /DOCTYPE/],
    ['an undeclared entity', '<a>&xxe;</a>', /entity &xxe;/],
    ['an entity in an attribute', '<a b="&nbsp;"/>', /entity &nbsp;/],
    ['a bare ampersand', '<a>fish & chips</a>', /"&"/],
    ['a character reference to NUL', '<a>&#0;</a>', /not a character/],
    ['a raw control character', '<a>\u0001</a>', /character XML does not allow/],
    ['a processing instruction', '<a><?php echo 1; ?></a>', /Processing instructions/],
    ['a declaration that is not UTF-8', '<?xml version="1.0" encoding="ISO-8859-1"?><a/>', /UTF-8/],
    ['mismatched tags', '<a><b></a></b>', /Expected <\/b>/],
    ['an unclosed element', '<a><b>', /not closed/],
    ['two roots', '<a/><b/>', /after the root/],
    ['text before the root', 'x<a/>', /before the root/],
    ['an unquoted attribute', '<a b=1/>', /must be quoted/],
    ['a duplicate attribute', '<a b="1" b="2"/>', /twice/],
    ['"<" in an attribute', '<a b="<"/>', /"<" is not allowed/],
    ['an undeclared prefix', '<x:a/>', /not declared/],
    ['"]]>" in text', '<a>]]></a>', /"]]>"/],
    ['"--" in a comment', '<a><!-- a -- b --></a>', /"--"/],
    ['an empty document', '', /No root/],
  ])('refuses %s', (_, xml, reason) => {
    refuses(xml, reason);
  });

  it(`refuses nesting deeper than ${XML_LIMITS.depth} without recursing, even 100,000 deep`, () => {
    const ok = '<a>'.repeat(XML_LIMITS.depth) + '</a>'.repeat(XML_LIMITS.depth);
    expect(parseXml(ok).name).toBe('a');
    refuses('<a>'.repeat(XML_LIMITS.depth + 1) + '</a>'.repeat(XML_LIMITS.depth + 1), /nested too deeply/);
    refuses('<a>'.repeat(100_000), /nested too deeply/);
  });

  it(`refuses more than ${XML_LIMITS.elements} elements and more than ${XML_LIMITS.attributes} attributes`, () => {
    refuses(`<a>${'<b/>'.repeat(XML_LIMITS.elements)}</a>`, /Too many elements/);
    const attributes = Array.from({ length: XML_LIMITS.attributes + 1 }, (_, i) => ` a${i}="1"`).join('');
    refuses(`<a${attributes}/>`, /Too many attributes/);
  });

  it('reads half a megabyte of text in linear time', () => {
    expect(parseXml(`<a>${'x&amp;'.repeat(100_000)}</a>`).text.length).toBe(200_000);
    const { ratio, size } = growthRatio((n) => parseXml(`<a>${'x&amp;'.repeat(n)}</a>`), 3_125, 12_500);
    expect(ratio, `${GROWTH}x the text (${size} -> ${GROWTH * size} entities) took ${ratio.toFixed(1)}x the time`).toBeLessThan(
      LINEAR_RATIO_MAX,
    );
  });

  it('either reads or refuses (with XmlError) any string of XML-ish characters, never anything else', () => {
    const pieces = [
      '<',
      '>',
      '/',
      '</a>',
      '<a>',
      '<b x="1">',
      '&',
      '&amp;',
      '&#',
      ';',
      '"',
      "'",
      '=',
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<?',
      '?>',
      'a',
      ' ',
      ':',
      'xmlns:p="u"',
      '<p:a>',
      '<!DOCTYPE',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        try {
          parseXml(parts.join(''));
        } catch (err) {
          expect(err).toBeInstanceOf(XmlError);
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
