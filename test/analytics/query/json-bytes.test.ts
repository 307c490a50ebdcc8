import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPiece, JsonBytes } from '../../../src/analytics/query/json-bytes';

const decode = (out: JsonBytes) => new TextDecoder().decode(out.bytes());

/** Writes `values` as a JSON array through the writer (2-byte start: every write crosses a growth). */
function writeArray(values: number[]): string {
  const out = new JsonBytes(2);
  out.char(0x5b);
  values.forEach((v, i) => {
    if (i > 0) out.char(0x2c);
    out.number(v);
  });
  out.char(0x5d);
  return decode(out);
}

describe('JsonBytes: the answer writer', () => {
  it('writes every number exactly as JSON.stringify does', () => {
    const edge = [
      0,
      -0,
      1,
      -1,
      9,
      10,
      11,
      99,
      100,
      999_999,
      1e12,
      -1e12,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
      2 ** 53,
      1e21,
      1.5,
      -0.25,
      1 / 3,
      5e-324,
      Number.MAX_VALUE,
      NaN,
      Infinity,
      -Infinity,
    ];
    expect(writeArray(edge)).toBe(JSON.stringify(edge));
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 }), fc.maxSafeInteger(), fc.double())), (values) => {
        expect(writeArray(values)).toBe(JSON.stringify(values));
      }),
      { numRuns: 500 },
    );
  });

  it('encodes text as UTF-8, ASCII or not, and pieces as given', () => {
    for (const text of ['queue é', 'ü\u0080\u07ff', 'Zürich → 東京', '😀 agent', '\ud800 lone', 'tab\tand "quotes"']) {
      const out = new JsonBytes(1);
      out.text(JSON.stringify(text));
      expect(out.bytes()).toEqual(new TextEncoder().encode(JSON.stringify(text)));
      expect(JSON.parse(decode(out))).toBe(text);
    }
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary' }),
            fc.string({ unit: fc.integer({ min: 0x20, max: 0x900 }).map((c) => String.fromCharCode(c)) }),
          ),
          { maxLength: 8 },
        ),
        (strings) => {
          const out = new JsonBytes(1);
          const json = JSON.stringify(strings);
          const piece = jsonPiece('{"k":');
          out.piece(piece);
          out.text(json);
          out.char(0x7d);
          expect(decode(out)).toBe(`{"k":${json}}`);
          expect(out.bytes()).toEqual(new TextEncoder().encode(`{"k":${json}}`));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rewinds to drop what a part wrote', () => {
    const out = new JsonBytes(4);
    out.text('[1');
    const mark = out.length;
    out.text(',"dropped, and long enough to grow the buffer"');
    out.rewind(mark);
    out.char(0x5d);
    expect(decode(out)).toBe('[1]');
  });
});
