import { DIMENSIONS, MULTI_VALUED } from '../catalog';
import type { DimValue, DimValues, Observation } from './to-observations';

/**
 * The observations of one conversation, as stored in `conversations.data`.
 *
 * Current format (a BLOB, version byte 4), all integers unsigned LEB128 varints:
 *   1 · strings: n, then per string a head h: 0 = the row's own id (the conversationId), 1 = a
 *       lowercase UUID in 16 bytes, 2 = WORDS[next varint], 3 = a length and that many bytes of a
 *       JSON string literal (strings with surrogates: UTF-8 cannot hold a lone one), 4 = a list (a
 *       multi-valued dimension's value): its length, then each element as a string of heads 0–3 or
 *       ≥ 6, 5 = the dictionary's value of id [next varint] (dim_values: a dimension's value, a
 *       list's JSON text), 6 = '+' and 7 = 'tel:+' followed by a count of decimal digits and the
 *       digits two to a byte (high nibble first; a phone number in 8 bytes instead of 17),
 *       h ≥ 8 = h − 8 bytes of UTF-8
 *     · dimension tuples: n, then per tuple the number k of DIMENSIONS entries that differ from the
 *       previous tuple (the first: from all absent), and k pairs (gap, ref): the entry's index minus
 *       the previous pair's index minus 1 (the first: its index), and its ref (0 = absent, else 1 +
 *       index of its string).
 *     · observations: n, then per observation metric, tuple, zigzag(emit − previous emit, the first
 *       against `base` = the row's first_emit), value
 * Inside a conversation the same few dimension tuples repeat for every metric of a session, and most
 * strings are UUIDs or Genesys' own vocabulary, so this is about a third of the JSON below. D1 carries
 * parameters and results as JSON, where a BLOB is an array of numbers; so the blob travels as hex text
 * (`unhex(?)` on write, `hex(data)` on read, see DATA_SQL).
 *
 * A value the dictionary holds (a bounded dimension's: queues, agents, teams, divisions, wrap-up codes…)
 * costs 2–3 bytes instead of 17 for a UUID; a reader resolves the ids first (`missingNames`, then
 * dictionary.ts readNames). Only ids the writer's batch guards (ingest's `dictionaryGuard`) are
 * written, so a row never names an id its database lacks.
 *
 * Version 3 (rows written 2026-11-27) had no dictionary or phone heads: h ≥ 5 = h − 5 bytes of UTF-8.
 * Version 2 (before) kept a list as the JSON text of its list (so a list of UUIDs took 39 bytes an
 * element instead of 17), UTF-8 strings with h ≥ 4 = h − 4 bytes. Version 1 (before issue 23, 14
 * dimensions) differs from 2 only in the tuples: a 31-bit mask of the entries that differ, then their
 * refs in index order. All four are read.
 *
 * STORAGE FORMAT: WORDS is part of it. Append only; never reorder.
 */
const VERSION = 4;
const VERSION_LISTS = 3;
const VERSION_TEXT_LISTS = 2;
const VERSION_MASK = 1;
/** Heads of a string: UTF-8 from here on (version 4; 5 in version 3, 4 in versions 1 and 2). */
const UTF8_HEAD = 8;
const LIST_HEAD = 4;
const DICTIONARY_HEAD = 5;
/** '+' digits, then 'tel:+' digits (version 4). */
const PLUS_DIGITS_HEAD = 6;
const TEL_DIGITS_HEAD = 7;
const TEL_PREFIX = 'tel:+';
/** Part of WORDS (so of the storage format): the enumerated values of models.json that WORDS did not hold before, sorted. */
const MODEL_ENUM_WORDS = [
  'AppleMessagesForBusiness',
  'BOT',
  'Bullseye',
  'COMMONMODULE',
  'Conditional',
  'DIGITALBOT',
  'DeliveryFailed',
  'DeliveryPushed',
  'DeliverySuccess',
  'Direct',
  'Discord',
  'EMAILSEND',
  'Email',
  'Facebook',
  'FacebookMessenger',
  'Failed',
  'Finished',
  'Glassdoor',
  'GoogleBusinessProfile',
  'Group',
  'INBOUNDCALL',
  'INBOUNDCHAT',
  'INBOUNDEMAIL',
  'INBOUNDSHORTMESSAGE',
  'INQUEUECALL',
  'INQUEUEEMAIL',
  'INQUEUESHORTMESSAGE',
  'InProgress',
  'InReview',
  'Instagram',
  'KakaoTalk',
  'Last',
  'Line',
  'LinkedIn',
  'Manual',
  'MicrosoftTeams',
  'MobileChat',
  'OUTBOUNDCALL',
  'OpenMessaging',
  'Other',
  'Pending',
  'Predictive',
  'Preferred',
  'Published',
  'QQ',
  'Queued',
  'Read',
  'Received',
  'Reddit',
  'Retracted',
  'SECURECALL',
  'SFDC',
  'SMS',
  'SPEECH',
  'SURVEYINVITE',
  'Sent',
  'ServiceNow',
  'SkillGroup',
  'Snapchat',
  'Standard',
  'Team',
  'Telegram',
  'Threads',
  'Trustpilot',
  'Unspecified',
  'VOICE',
  'VOICEMAIL',
  'VOICESURVEY',
  'Viber',
  'Vip',
  'Voice',
  'WORKFLOW',
  'WORKITEM',
  'WeChat',
  'Web',
  'WebChat',
  'Weibo',
  'WhatsApp',
  'X',
  'Yelp',
  'YouTube',
  'Zendesk',
  'alert',
  'barging',
  'bool',
  'coaching',
  'conferenceTransfer',
  'consultTransfer',
  'contacting',
  'converting',
  'date',
  'delay',
  'dialing',
  'direct',
  'dndEndpoint',
  'dndTransfer',
  'dnis',
  'flow',
  'forwardTransfer',
  'general',
  'hold',
  'inactivity',
  'integer',
  'interact',
  'internalmessage',
  'monitoring',
  'noAnswerTransfer',
  'notAvailableTransfer',
  'parked',
  'real',
  'scheduled',
  'screenmonitoring',
  'sessionExpired',
  'sharing',
  'string',
  'takeover',
  'transmitting',
  'transportFailure',
  'uncallable',
  'unknown',
  'uploading',
  'uuid',
  'voicesurveyflow',
  'wrapup',
] as const;
const WORDS = [
  'inbound',
  'outbound',
  'voice',
  'chat',
  'email',
  'callback',
  'message',
  'screenshare',
  'cobrowse',
  'video',
  'acd',
  'agent',
  'api',
  'botflow',
  'campaign',
  'customer',
  'dialer',
  'external',
  'fax',
  'group',
  'ivr',
  'manual',
  'station',
  'user',
  'voicemail',
  'workflow',
  'client',
  'peer',
  'system',
  'transfer',
  'endpoint',
  'error',
  'timeout',
  'spam',
  'other',
  // Appended 2026-11-27 (version 3): values derived at ingest, then the enumerated values of Genesys'
  // conversation-detail record model (../shared/fixtures/genesys-details/models.json) not above.
  'true',
  'false',
  'contactCenter',
  'enterprise',
  ...MODEL_ENUM_WORDS,
] as const;
const WORD_INDEX = new Map<string, number>(WORDS.map((w, i) => [w, i]));
/** Longer strings skip the WORD_INDEX lookup (and the hashing it costs). */
const LONGEST_WORD = Math.max(...WORDS.map((w) => w.length));

/** The `data` column as the decoder wants it. */
export const DATA_SQL = 'hex(data)';

const D = DIMENSIONS.length;
/** Version 1 rows hold the first 14 dimensions. */
const D_V1 = 14;
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;
  NIBBLE['0123456789ABCDEF'.charCodeAt(i)] = i;
}
const utf8 = new TextEncoder();
// ignoreBOM: keep a leading U+FEFF (a legitimate character of a value) instead of dropping it.
const fromUtf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

const HEX_CODES = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  HEX_CODES[2 * i] = HEX[i]!.charCodeAt(0);
  HEX_CODES[2 * i + 1] = HEX[i]!.charCodeAt(1);
}

/** Each byte's two hex digits as one 16-bit unit (set through bytes, so in the platform's order). */
const HEX_PAIRS = new Uint16Array(256);
new Uint8Array(HEX_PAIRS.buffer).set(HEX_CODES);
/**
 * One output buffer for every encode (the Worker is single-threaded), grown on demand: each byte is
 * written straight as its two hex digits (one 16-bit unit), so the result is one decode of it.
 */
let scratch = new Uint16Array(4096);
let length = 0;

function ensure(extra: number): void {
  if (length + extra <= scratch.length) return;
  const grown = new Uint16Array(Math.max(scratch.length * 2, length + extra));
  grown.set(scratch.subarray(0, length));
  scratch = grown;
}

/** Non-negative integers up to 2^53 (plain arithmetic: bitwise operators stop at 2^31). */
function varint(n: number): void {
  ensure(8);
  while (n >= 0x80) {
    scratch[length++] = HEX_PAIRS[(n % 0x80) | 0x80]!;
    n = Math.floor(n / 0x80);
  }
  scratch[length++] = HEX_PAIRS[n]!;
}

/** Lowercase hex digits only (-1 otherwise): the UUID test and its packing in one pass. */
const LOWER_NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) LOWER_NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;

function scratchHex(): string {
  return fromUtf8.decode(new Uint8Array(scratch.buffer, 0, length * 2));
}

/**
 * Writes head 1 and the 16 bytes when `s` is a lowercase UUID (8-4-4-4-12 hex digits, the only form
 * that survives 16 bytes and back unchanged); otherwise writes nothing and returns false.
 */
function writeUuid(s: string): boolean {
  if (s.length !== 36 || s.charCodeAt(8) !== 45 || s.charCodeAt(13) !== 45 || s.charCodeAt(18) !== 45 || s.charCodeAt(23) !== 45)
    return false;
  ensure(17);
  let p = length + 1;
  for (let i = 0; i < 36; i += 2) {
    if (i === 8 || i === 13 || i === 18 || i === 23) i++;
    const hi = s.charCodeAt(i);
    const lo = s.charCodeAt(i + 1);
    const h = hi < 128 ? LOWER_NIBBLE[hi]! : -1;
    const l = lo < 128 ? LOWER_NIBBLE[lo]! : -1;
    if ((h | l) < 0) return false;
    scratch[p++] = HEX_PAIRS[h * 16 + l]!;
  }
  scratch[length] = HEX_PAIRS[1]!;
  length = p;
  return true;
}

function writeString(s: string): void {
  let ascii = true;
  let surrogates = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) ascii = false;
    if (c >= 0xd800 && c <= 0xdfff) surrogates = true;
  }
  if (ascii) {
    varint(s.length + UTF8_HEAD);
    ensure(s.length);
    for (let i = 0; i < s.length; i++) scratch[length++] = HEX_PAIRS[s.charCodeAt(i)]!;
    return;
  }
  // UTF-8 cannot hold a lone surrogate (JSON input can): such strings keep JSON's \u escapes.
  const bytes = utf8.encode(surrogates ? JSON.stringify(s) : s);
  if (surrogates) {
    varint(3);
    varint(bytes.length);
  } else varint(bytes.length + UTF8_HEAD);
  ensure(bytes.length);
  for (let i = 0; i < bytes.length; i++) scratch[length++] = HEX_PAIRS[bytes[i]!]!;
}

const zigzag = (n: number) => (n >= 0 ? n * 2 : -n * 2 - 1);
const unzigzag = (z: number) => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

// Per-encode state, reused across calls (the Worker is single-threaded) so an encode allocates
// little more than its result: the distinct strings, the dimension tuples as rows of D refs in one
// flat array, and each observation's tuple index.
const strings: string[] = [];
/** The list a string of `strings` is the JSON text of (a multi-valued dimension's value), where it is one. */
const lists: (readonly string[] | undefined)[] = [];
/** The dictionary id of a string of `strings` (0: none known), from the dimensions that use it. */
const dictionaryIds: number[] = [];
/** The encode's dictionary (DictionaryRefs), for stringRef. */
let encodeRefs: DictionaryRefs | undefined;
const stringIndex = new Map<string, number>();
let tupleRefs = new Int32Array(64 * D);
let obsTuple = new Int32Array(1024);
const refs = new Int32Array(D);
const tupleIndex = new Map<string, number>();

/**
 * 1 + the index of `value` (of dimension `d`) among the conversation's strings, added when new (`list`:
 * the list it is the text of). Its dictionary id is the first that a dimension using it has.
 */
function stringRef(value: string, d: number, list?: readonly string[]): number {
  const n = strings.length;
  let i = -1;
  // Linear while small (the usual case: filling a Map costs more than a few comparisons).
  if (n <= 32) {
    for (let k = 0; k < n; k++) {
      if (strings[k] === value) {
        i = k;
        break;
      }
    }
  } else {
    if (stringIndex.size === 0) for (let k = 0; k < n; k++) stringIndex.set(strings[k]!, k);
    i = stringIndex.get(value) ?? -1;
    if (i < 0) stringIndex.set(value, n);
  }
  if (i < 0) {
    i = n;
    strings.push(value);
    lists.push(list);
    dictionaryIds.push(0);
  }
  if (encodeRefs !== undefined && dictionaryIds[i] === 0) dictionaryIds[i] = encodeRefs[d]?.get(value) ?? 0;
  return i + 1;
}

/** The index of the tuple equal to `refs` among the first `n`, or -1. */
function findTuple(n: number): number {
  if (n <= 32) {
    for (let t = 0; t < n; t++) {
      let d = 0;
      const at = t * D;
      while (d < D && tupleRefs[at + d] === refs[d]) d++;
      if (d === D) return t;
    }
    return -1;
  }
  // Linear while small (the usual case); a keyed map bounds the work for huge conversations.
  if (tupleIndex.size === 0) for (let t = 0; t < n; t++) tupleIndex.set(tupleRefs.subarray(t * D, t * D + D).join(','), t);
  return tupleIndex.get(refs.join(',')) ?? -1;
}

/**
 * Writes a phone number's head and digits when `s` is '+' or 'tel:+' followed by decimal digits
 * (what Genesys' ani, dnis and remote hold); otherwise writes nothing and returns false.
 */
function writeDigits(s: string): boolean {
  const from = s.startsWith(TEL_PREFIX) ? TEL_PREFIX.length : s.charCodeAt(0) === 43 ? 1 : -1;
  const n = s.length - from;
  if (from < 0 || n === 0) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  varint(from === 1 ? PLUS_DIGITS_HEAD : TEL_DIGITS_HEAD);
  varint(n);
  ensure((n + 1) >> 1);
  for (let i = from; i < s.length; i += 2) {
    const hi = s.charCodeAt(i) - 48;
    const lo = i + 1 < s.length ? s.charCodeAt(i + 1) - 48 : 0;
    scratch[length++] = HEX_PAIRS[hi * 16 + lo]!;
  }
  return true;
}

/** One string of the table, or one element of a list: its head and bytes. */
function writeEntry(s: string, id: string): void {
  if (s === id) varint(0);
  else if (writeUuid(s)) return;
  else {
    const word = s.length <= LONGEST_WORD ? WORD_INDEX.get(s) : undefined;
    if (word !== undefined) {
      varint(2);
      varint(word);
    } else if (!writeDigits(s)) writeString(s);
  }
}

/**
 * Dictionary ids by dimension index (DIMENSIONS): value (a list's JSON text) → its id in dim_values.
 * Each must be guarded by the batch that writes the row (ingest's dictionaryGuard).
 */
export type DictionaryRefs = readonly (ReadonlyMap<string, number> | undefined)[];

/**
 * The stored form of `observations` (of the conversation `id`), as hex text for `unhex(?)`. Values
 * `dictionary` has an id for are written as that id, where that is shorter (not the row's id or a word).
 */
export function encodeObservations(observations: readonly Observation[], base: number, id: string, dictionary?: DictionaryRefs): string {
  encodeRefs = dictionary;
  strings.length = 0;
  lists.length = 0;
  dictionaryIds.length = 0;
  if (stringIndex.size > 0) stringIndex.clear();
  if (tupleIndex.size > 0) tupleIndex.clear();
  if (obsTuple.length < observations.length) obsTuple = new Int32Array(Math.max(obsTuple.length * 2, observations.length));
  let tuples = 0;
  // Consecutive observations mostly share their dimensions (one session's metrics): compare with the
  // previous one first, and search the few tuples of a conversation only when something changed.
  let previousDims: DimValues | undefined;
  for (let o = 0; o < observations.length; o++) {
    const dims = observations[o]!.dims;
    if (dims === previousDims) {
      obsTuple[o] = obsTuple[o - 1]!;
      continue;
    }
    // refs still holds the previous observation's tuple: only the values that changed need a lookup.
    let same = previousDims !== undefined;
    for (let d = 0; d < D; d++) {
      const value = dims[d];
      let ref: number;
      if (value === undefined) ref = 0;
      else if (previousDims !== undefined && previousDims[d] === value) continue;
      else ref = typeof value === 'string' ? stringRef(value, d) : stringRef(JSON.stringify(value), d, value);
      if (refs[d] !== ref) {
        refs[d] = ref;
        same = false;
      }
    }
    let t = same ? obsTuple[o - 1]! : findTuple(tuples);
    if (t < 0) {
      if (tupleRefs.length < (tuples + 1) * D) {
        const grown = new Int32Array(tupleRefs.length * 2);
        grown.set(tupleRefs);
        tupleRefs = grown;
      }
      tupleRefs.set(refs, tuples * D);
      t = tuples++;
      if (tupleIndex.size > 0) tupleIndex.set(refs.join(','), t);
    }
    obsTuple[o] = t;
    previousDims = dims;
  }

  length = 0;
  varint(VERSION);
  varint(strings.length);
  for (let i = 0; i < strings.length; i++) {
    const list = lists[i];
    const s = strings[i]!;
    const known = dictionaryIds[i]!;
    // A word or the row's id is as short already (a string of one or two characters nearly).
    if (known > 0 && (list !== undefined || (s !== id && s.length > 2 && !(s.length <= LONGEST_WORD && WORD_INDEX.has(s))))) {
      varint(DICTIONARY_HEAD);
      varint(known);
    } else if (list === undefined) writeEntry(s, id);
    else {
      varint(LIST_HEAD);
      varint(list.length);
      for (const element of list) writeEntry(element, id);
    }
  }
  // Not kept alive until the next encode.
  encodeRefs = undefined;
  strings.length = 0;
  lists.length = 0;
  dictionaryIds.length = 0;
  if (stringIndex.size > 0) stringIndex.clear();
  if (tupleIndex.size > 0) tupleIndex.clear();
  varint(tuples);
  for (let t = 0; t < tuples; t++) {
    const at = t * D;
    let changed = 0;
    for (let d = 0; d < D; d++) if (tupleRefs[at + d] !== (t === 0 ? 0 : tupleRefs[at - D + d])) changed++;
    varint(changed);
    let last = -1;
    for (let d = 0; d < D; d++) {
      if (tupleRefs[at + d] === (t === 0 ? 0 : tupleRefs[at - D + d])) continue;
      varint(d - last - 1);
      varint(tupleRefs[at + d]!);
      last = d;
    }
  }
  varint(observations.length);
  let previous = base;
  for (let o = 0; o < observations.length; o++) {
    const obs = observations[o]!;
    varint(obs.metric);
    varint(obsTuple[o]!);
    varint(zigzag(obs.emit - previous));
    previous = obs.emit;
    varint(obs.value);
  }
  return scratchHex();
}

/** Dictionary id → value, as dictionary.ts readNames reads them: what a reader needs for a row's ids. */
export type DictionaryNames = ReadonlyMap<number, string>;

/**
 * The observations of a stored row: `data` as selected by DATA_SQL, `base` its first_emit, `id` its
 * id, `names` holding every dictionary id the row names (missingNames tells which it lacks).
 */
export function decodeObservations(data: string, base: number, id: string, names?: DictionaryNames): Observation[] {
  return decodeBinary(hexBytes(data), base, id, names);
}

/** Adds to `into` the dictionary ids that the row `data` (as DATA_SQL selects it) names and `names` lacks. */
export function missingNames(data: string, names: DictionaryNames, into: Set<number>): void {
  // Only version 4 names ids, in its string table (which this reads straight from the hex, not a byte further).
  if (data.length < 2 || byteAt(data, 0) !== VERSION) return;
  let p = 1;
  const varint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = byteAt(data, p++);
      if (Number.isNaN(b)) throw new Error('observation codec: truncated data');
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  };
  // (`p += varint()` would add to p as it was before varint moved it.)
  const skip = (h: number): void => {
    if (h === 1) p += 16;
    else if (h === 2) varint();
    else if (h === 3) {
      const n = varint();
      p += n;
    } else if (h === DICTIONARY_HEAD) {
      const ref = varint();
      if (!names.has(ref)) into.add(ref);
    } else if (h === PLUS_DIGITS_HEAD || h === TEL_DIGITS_HEAD) {
      const n = varint();
      p += (n + 1) >> 1;
    } else if (h >= UTF8_HEAD) p += h - UTF8_HEAD;
  };
  for (let n = varint(); n > 0; n--) {
    const h = varint();
    if (h !== LIST_HEAD) skip(h);
    else for (let k = varint(); k > 0; k--) skip(varint());
  }
}

/** Byte `i` of hex text (NaN past its end or at a character that is no hex digit). */
function byteAt(hex: string, i: number): number {
  const hi = NIBBLE[hex.charCodeAt(2 * i)] ?? -1;
  const lo = NIBBLE[hex.charCodeAt(2 * i + 1)] ?? -1;
  return (hi | lo) < 0 ? Number.NaN : hi * 16 + lo;
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = NIBBLE[hex.charCodeAt(2 * i)]! * 16 + NIBBLE[hex.charCodeAt(2 * i + 1)]!;
  return out;
}

function decodeBinary(bytes: Uint8Array, base: number, id: string, names: DictionaryNames | undefined): Observation[] {
  let p = 0;
  const varint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = bytes[p++];
      if (b === undefined) throw new Error('observation codec: truncated data');
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  };
  const version = bytes[p++];
  if (version !== VERSION && version !== VERSION_LISTS && version !== VERSION_TEXT_LISTS && version !== VERSION_MASK)
    throw new Error(`observation codec: unknown version ${bytes[0]}`);
  const utf8Head = version === VERSION ? UTF8_HEAD : version === VERSION_LISTS ? 5 : 4;
  const listed = version === VERSION || version === VERSION_LISTS;

  const entry = (h: number): string => {
    if (h === 0) return id;
    if (h === 1) {
      let hex = '';
      for (let k = 0; k < 16; k++) hex += HEX[bytes[p + k]!];
      p += 16;
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    if (h === 2) return WORDS[varint()]!;
    if (h === 3) {
      const n = varint();
      p += n;
      return JSON.parse(fromUtf8.decode(bytes.subarray(p - n, p))) as string;
    }
    if (h < utf8Head) {
      // Version 4's dictionary and phone heads.
      if (h === DICTIONARY_HEAD) {
        const ref = varint();
        const name = names?.get(ref);
        if (name === undefined) throw new Error(`observation codec: dictionary id ${ref} was not read (missingNames)`);
        return name;
      }
      const n = varint();
      let digits = h === TEL_DIGITS_HEAD ? TEL_PREFIX : '+';
      for (let k = 0; k < n; k++) digits += String.fromCharCode(48 + (k % 2 === 0 ? bytes[p + (k >> 1)]! >> 4 : bytes[p + (k >> 1)]! & 15));
      p += (n + 1) >> 1;
      return digits;
    }
    p += h - utf8Head;
    return fromUtf8.decode(bytes.subarray(p - (h - utf8Head), p));
  };
  // A string is undefined where the row keeps a list (version 3) until a single-valued dimension asks for its text.
  const strings: (string | undefined)[] = new Array(varint());
  // A multi-valued dimension's list, read (version 3) or parsed (version 2) once per string of the row.
  const lists = new Map<number, readonly string[]>();
  for (let i = 0; i < strings.length; i++) {
    const h = varint();
    if (h === LIST_HEAD && listed) {
      const list: string[] = new Array(varint());
      for (let k = 0; k < list.length; k++) list[k] = entry(varint());
      lists.set(i + 1, Object.freeze(list));
    } else strings[i] = entry(h);
  }

  const refValue = (d: number, ref: number): DimValue | undefined => {
    if (ref === 0) return undefined;
    if (!MULTI_VALUED[d]) return (strings[ref - 1] ??= JSON.stringify(lists.get(ref)));
    let list = lists.get(ref);
    // Version 1 kept one value of a multi-valued dimension (the first of divisionIds) as a plain string.
    const text = strings[ref - 1]!;
    if (list === undefined) lists.set(ref, (list = Object.freeze(version === VERSION_MASK ? [text] : (JSON.parse(text) as string[]))));
    return list;
  };
  const tuples: DimValues[] = new Array(varint());
  let before: DimValues = new Array(D).fill(undefined);
  for (let t = 0; t < tuples.length; t++) {
    const dims: DimValues = before.slice();
    if (version === VERSION_MASK) {
      const mask = varint();
      for (let d = 0; d < D_V1; d++) if (((mask >> d) & 1) !== 0) dims[d] = refValue(d, varint());
    } else {
      let d = -1;
      for (let k = varint(); k > 0; k--) {
        d += varint() + 1;
        dims[d] = refValue(d, varint());
      }
    }
    tuples[t] = dims;
    before = dims;
  }

  const out: Observation[] = new Array(varint());
  let previous = base;
  for (let i = 0; i < out.length; i++) {
    const metric = varint();
    const dims = tuples[varint()]!;
    const emit = previous + unzigzag(varint());
    previous = emit;
    // Each observation gets its own dims array: callers may change theirs.
    out[i] = { metric, emit, value: varint(), dims: dims.slice() };
  }
  return out;
}
