/**
 * Hostile values shared by the fuzzers: odd Unicode, boundary numbers (also as raw JSON literals that
 * JSON.stringify cannot write: 1e400, -0, 2^53+1), deep nesting, wrong types, broken bodies and
 * content types.
 */
import fc from 'fast-check';

/** A literal spliced into the JSON text as is (numbers JSON.stringify cannot produce, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
  toString(): string {
    return `RawJson(${this.text.length > 60 ? `${this.text.slice(0, 60)}…(${this.text.length})` : this.text})`;
  }
}

/** JSON text of `value`, RawJson spliced in verbatim. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : toJsonText(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value)) if (v !== undefined) parts.push(`${JSON.stringify(k)}:${toJsonText(v)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Characters that break naive code: NUL, controls, RTL overrides, BOM, combining marks, emoji, astral, quotes. */
const ODD_CHARS = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u00ad',
  '\u0301',
  '\u061c',
  '\u200b',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202e',
  '\u2066',
  '\u3000',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '😀',
  '👩‍👩‍👧',
  '🏳️‍🌈',
  '𝕏',
  '\u{10ffff}',
  'é',
  'ß',
  'İ',
  'ﬁ',
  '\u05d0',
  '\u0627',
  '"',
  '\\',
  '/',
  '<',
  '>',
  '&',
  "'",
  '`',
  '\n',
  '\r',
  '\t',
  ' ',
  '%00',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as plain text
  '${x}',
  '{{x}}',
];

/** Lone surrogates: valid in a JS string and in JSON text (as escapes), not in UTF-8. */
export const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b'];

export const oddChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_CHARS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom(...LONE_SURROGATES) },
);

/** Text of odd characters (lone surrogates included unless `wellFormed`). */
export function oddText(options: { minLength?: number; maxLength?: number; wellFormed?: boolean } = {}): fc.Arbitrary<string> {
  const unit = options.wellFormed ? oddChar.filter((c) => !hasLoneSurrogate(c)) : oddChar;
  return fc.string({ unit, minLength: options.minLength ?? 0, maxLength: options.maxLength ?? 12 });
}

/** `text` cut to at most `n` UTF-16 units without splitting a surrogate pair (a lone half breaks test reporting). */
export function clip(text: string, n: number): string {
  if (text.length <= n) return text;
  const end = /[\uD800-\uDBFF]/.test(text[n - 1] ?? '') ? n - 1 : n;
  return `${text.slice(0, end)}…`;
}

export function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/** Length in code points, counted by hand (independent of src/chat/limits.ts). */
export function codePoints(text: string): number {
  return [...text].length;
}

/** A string of exactly `length` UTF-16 units around a limit, of one repeated unit (ASCII, accented, or emoji halves). */
export function textOfLength(lengths: readonly number[]): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom(...lengths), fc.constantFrom('x', 'é', ' ', '\u0000')).map(([n, c]) => c.repeat(n));
}

/** Boundary numbers as JS values (JSON.stringify writes NaN and ±Infinity as null). */
export const boundaryNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    1.5,
    2,
    99,
    100,
    101,
    1e3,
    1e12,
    1e12 + 1,
    2 ** 31,
    2 ** 53,
    2 ** 53 + 2,
    1e308,
    -1e308,
    5e-324,
    Number.MAX_VALUE,
    Number.EPSILON,
    100_000,
    100_001,
    1e5 + 0.5,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Number literals JSON.stringify never writes: overflow to ±Infinity, underflow, -0, beyond 2^53, odd forms. */
export const rawNumber: fc.Arbitrary<RawJson> = fc
  .constantFrom(
    '1e400',
    '-1e400',
    '-0',
    '-0.0',
    '1E-400',
    '9007199254740993',
    '1.0',
    '1e0',
    '100000.0000000001',
    '0.1e1',
    '1e12',
    '1000000000001',
    '1E+2',
  )
  .map((t) => new RawJson(t));

/** Strings that look like numbers, booleans or nothing. */
export const numberishString: fc.Arbitrary<string> = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e308',
  '0x10',
  '1_000',
  '',
  ' 1',
  'null',
  'true',
  '2^53+1',
  '9007199254740993',
);

/** Arrays or objects nested `depth` deep, as raw text (cheap to build, expensive to walk carelessly). */
export const deepNesting: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(2, 64, 1_000, 10_000, 30_000), fc.boolean())
  .map(([depth, arrays]) => new RawJson(arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** Any JSON value (odd strings as keys and values), some of them huge or deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    boundaryNumber,
    rawNumber,
    oddText(),
    numberishString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(oddText({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A wrong value for a field: another type, an odd or huge string, a boundary number, deep nesting. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  boundaryNumber,
  rawNumber,
  oddText(),
  numberishString,
  fc.constant([]),
  fc.constant({}),
  fc.array(oddText({ maxLength: 4 }), { maxLength: 3 }),
  deepNesting,
  textOfLength([10_000]),
);

/** Bodies that are not JSON at all, or almost: truncated, trailing garbage, BOM, single quotes, comments. */
export const brokenJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '{',
    '}',
    '[',
    '{"a":1,}',
    '{"a":1}}',
    '{"a":1} x',
    "{'a':1}",
    '{a:1}',
    'nul',
    'NaN',
    'undefined',
    '\ufeff{}',
    '{"a":1/*c*/}',
    '{"a":"\\x41"}',
    '{"a":"\\u12"}',
    '{"a":01}',
    '{"a":.5}',
    '{"a":+1}',
    '{"a":"tab\there"}',
    '[1,2',
    '"unterminated',
    '{"a"}',
    '{"a" 1}',
  ),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }).filter((t) => !isJson(t)),
);

export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Invalid UTF-8 (lone continuation bytes, overlongs, a CESU-8 surrogate, truncated sequences) inside JSON. */
export const invalidUtf8Body: fc.Arbitrary<Uint8Array> = fc
  .constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xff], [0xfe, 0xff])
  .map((bad) => {
    const head = new TextEncoder().encode('{"message":"a');
    const tail = new TextEncoder().encode('b","name":"n"}');
    return new Uint8Array([...head, ...bad, ...tail]);
  });

/** Content types: JSON (with parameters and case), near misses and others. `undefined` = no header. */
export const CONTENT_TYPES_ACCEPTED = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'Application/Json;charset=UTF-8',
  'application/json ; x=y',
];
export const CONTENT_TYPES_REFUSED = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/ld+json',
  'application/json-patch+json',
  'text/json',
  'json',
  'application/*',
  '*/*',
  'application/json, text/plain',
  'text/html; charset=application/json',
];

export const refusedContentType: fc.Arbitrary<string | undefined> = fc.constantFrom<string | undefined>(
  undefined,
  ...CONTENT_TYPES_REFUSED,
);
export const acceptedContentType: fc.Arbitrary<string> = fc.constantFrom(...CONTENT_TYPES_ACCEPTED);

/** Keys that trip naive object handling. */
export const trickyKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', ''),
  oddText({ minLength: 1, maxLength: 8 }),
);

/**
 * Objects near a schema: a valid one (most often), or a valid one with one field set to a wrong
 * value (the field's own wrong values, or any wrong value), deleted, or joined by an unknown key.
 */
export function nearSchema(
  valid: fc.Arbitrary<Record<string, unknown>>,
  wrong: Record<string, fc.Arbitrary<unknown>>,
): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.keys(wrong);
  const withField = (base: Record<string, unknown>, key: string, value: unknown) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) if (k !== key) out[k] = v;
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    return out;
  };
  return fc.oneof(
    { weight: 4, arbitrary: valid },
    {
      weight: 3,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...fields))
        .chain(([base, key]) =>
          fc.oneof({ weight: 3, arbitrary: wrong[key]! }, { weight: 1, arbitrary: wrongValue }).map((value) => withField(base, key, value)),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(...fields)).map(([base, key]) => {
        const out = { ...base };
        delete out[key];
        return out;
      }),
    },
    { weight: 1, arbitrary: fc.tuple(valid, trickyKey, anyJson).map(([base, key, value]) => withField(base, key, value)) },
  );
}

type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (isLeaf(value)) return out;
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([...prefix, i]);
      pathsOf(v, [...prefix, i], out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      pathsOf(v, [...prefix, k], out);
    }
  }
  return out;
}

/** Class instances (RawJson, placeholders) are leaves: copied as they are, never descended into. */
function isLeaf(value: unknown): boolean {
  return (
    value === null ||
    typeof value !== 'object' ||
    (!Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
  );
}

/** A deep copy that keeps RawJson literals and own keys such as `__proto__`. */
function cloneJson<T>(value: T): T {
  if (isLeaf(value)) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const out = {};
  for (const [k, v] of Object.entries(value as object))
    Object.defineProperty(out, k, { value: cloneJson(v), enumerable: true, writable: true, configurable: true });
  return out as T;
}

function setAt(root: unknown, path: Path, change: (parent: Record<string | number, unknown>, key: string | number) => void): unknown {
  const copy = cloneJson(root);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  change(node, path[path.length - 1]!);
  return copy;
}

/**
 * A valid nested value with one fault anywhere in it: a value replaced (by `wrongFor(key)` or any
 * wrong value), a key deleted, or an unknown key added. Faults are what the verdict decides on, so
 * the generator need not know which of them a schema tolerates (unknown keys, for one).
 */
export function mutateDeep<T>(
  valid: fc.Arbitrary<T>,
  wrongFor: (key: string | number) => fc.Arbitrary<unknown> | undefined,
): fc.Arbitrary<unknown> {
  return valid.chain((base) => {
    const paths = pathsOf(base);
    if (paths.length === 0) return fc.constant<unknown>(base);
    return fc.tuple(fc.constantFrom(...paths), fc.nat(9)).chain(([path, how]) => {
      const key = path[path.length - 1]!;
      if (how === 0) return fc.constant(setAt(base, path, (p, k) => (Array.isArray(p) ? p.splice(k as number, 1) : delete p[k])));
      if (how === 1) {
        return fc.tuple(trickyKey, anyJson).map(([extra, value]) =>
          setAt(base, path, (p, k) => {
            const target = p[k];
            if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
              Object.defineProperty(target, extra, { value, enumerable: true, writable: true, configurable: true });
            }
          }),
        );
      }
      const specific = wrongFor(key);
      const wrong = specific ? fc.oneof({ weight: 3, arbitrary: specific }, { weight: 1, arbitrary: wrongValue }) : wrongValue;
      return wrong.map((value) => setAt(base, path, (p, k) => (p[k] = value)));
    });
  });
}
