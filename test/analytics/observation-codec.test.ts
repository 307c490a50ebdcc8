/**
 * The observation codec's bytes, written out by hand (it is a storage format: an encoder change that
 * moves one byte breaks rows already stored), and toObservations' sharing of dims arrays.
 */
import { describe, expect, it } from 'vitest';
import { DIMENSION_INDEX as D, DIMENSIONS, METRIC_INDEX } from '../../src/analytics/catalog';
import { decodeObservations, encodeObservations, missingNames } from '../../src/analytics/ingest/observation-codec';
import { ingestBodySchema } from '../../src/analytics/ingest/record.schema';
import { toObservations, type DimValues, type Observation } from '../../src/analytics/ingest/to-observations';
import { conversation } from './builders';

function dims(values: Partial<Record<(typeof DIMENSIONS)[number], string | readonly string[]>>): DimValues {
  const out: DimValues = new Array(DIMENSIONS.length).fill(undefined);
  for (const [dim, value] of Object.entries(values)) out[D[dim as keyof typeof D]] = value;
  return out;
}
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('');

describe('observation codec, format version 4', () => {
  const uuid = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
  const upper = 'AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE';
  const session = { conversationId: 'c1', mediaType: 'voice', sessionId: uuid };
  const observations: Observation[] = [
    { metric: 3, emit: 1010, value: 500, dims: dims(session) },
    { metric: 5, emit: 1000, value: 0, dims: dims({ ...session, queueId: 'Q-é' }) },
    { metric: 3, emit: 1020, value: 2, dims: dims(session) },
    { metric: 1, emit: 1020, value: 1, dims: dims({ conversationId: 'c1', participantName: '\ud800', userId: upper }) },
  ];
  // By hand: version, strings, tuples (how many dims changed, then (gap, ref) pairs), observations.
  const strings = [
    '06', // strings
    '00', // 'c1' is the row's id
    '0202', // WORDS[2] = 'voice'
    '01aaaaaaaabbbbccccddddeeeeeeeeeeee', // a lowercase UUID in 16 bytes
    '0c512dc3a9', // 'Q-é': 4 bytes of UTF-8 (head 8 + 4)
    `0308${ascii('"\\ud800"')}`, // a lone surrogate: JSON text
    `2c${ascii(upper)}`, // an upper-case UUID is only 36 bytes of text
  ];
  const observationBytes = [
    '04', // observations: metric, tuple, zigzag(emit − previous), value
    '030014f403',
    '05011300',
    '03002802',
    '01020001',
  ];
  const tuples = [
    '03', // tuples
    '03000105020303', // 3 changed: dim 0 (gap 0) = ref 1, dim 6 (gap 5) = 2, dim 10 (gap 3) = 3
    '010b04', // 1 changed: dim 11 (gap 11) = ref 4
    '0504050006000003000000', // 5 changed: dims 4, 5, 6, 10, 11 (gaps 4, 0, 0, 3, 0) = 5, 6, 0, 0, 0
  ];
  const expected = ['04', ...strings, ...tuples, ...observationBytes].join('');
  // Rows written on 2026-11-27: UTF-8 heads start at 5.
  const version3 = [
    '03',
    '06', // strings
    '00',
    '0202',
    '01aaaaaaaabbbbccccddddeeeeeeeeeeee',
    '09512dc3a9', // 'Q-é': head 5 + 4
    `0308${ascii('"\\ud800"')}`,
    `29${ascii(upper)}`,
    ...tuples,
    ...observationBytes,
  ].join('');
  // Rows written before version 3: UTF-8 heads start at 4, lists are JSON text (below).
  const version2 = [
    '02',
    '06', // strings
    '00',
    '0202',
    '01aaaaaaaabbbbccccddddeeeeeeeeeeee',
    '08512dc3a9', // 'Q-é': head 4 + 4
    `0308${ascii('"\\ud800"')}`,
    `28${ascii(upper)}`,
    ...tuples,
    ...observationBytes,
  ].join('');
  // Rows written before issue 23: tuples as a mask of the changed dims, then their refs.
  const version1 = [
    '01',
    '06', // strings
    '00', // 'c1' is the row's id
    '0202', // WORDS[2] = 'voice'
    '01aaaaaaaabbbbccccddddeeeeeeeeeeee', // a lowercase UUID in 16 bytes
    '08512dc3a9', // 'Q-é': 4 bytes of UTF-8
    `0308${ascii('"\\ud800"')}`, // a lone surrogate: JSON text
    `28${ascii(upper)}`, // an upper-case UUID is only 36 bytes of text
    '03', // tuples
    'c108010203', // dims 0, 6, 10 (mask 1089) = refs 1, 2, 3
    '801004', // dim 11 (mask 2048) = ref 4
    'f0180506000000', // dims 4, 5, 6, 10, 11 (mask 3184) = 5, 6, 0, 0, 0
    '04', // observations: metric, tuple, zigzag(emit − previous), value
    '030014f403',
    '05011300',
    '03002802',
    '01020001',
  ].join('');

  it('writes the bytes of the format', () => {
    expect(encodeObservations(observations, 1000, 'c1')).toBe(expected);
    expect(decodeObservations(expected, 1000, 'c1')).toEqual(observations);
  });

  it('reads rows of version 3', () => {
    expect(decodeObservations(version3, 1000, 'c1')).toEqual(observations);
    // Version 3, one string (a list of 2: 'd1', 'd2' as heads 5 + 2), one tuple with divisionId = ref 1, one observation.
    const row = [
      '03',
      '01',
      `0402 07${ascii('d1')} 07${ascii('d2')}`.replaceAll(' ', ''),
      '01',
      `01${D.divisionId.toString(16).padStart(2, '0')}01`,
      '01',
      '02000001',
    ].join('');
    expect(decodeObservations(row, 5, 'c1')).toEqual([{ metric: 2, emit: 5, value: 1, dims: dims({ divisionId: ['d1', 'd2'] }) }]);
  });

  it('reads rows of version 2', () => {
    expect(decodeObservations(version2, 1000, 'c1')).toEqual(observations);
    // Version 2, one string (a list's JSON text, head 4 + 11), one tuple with divisionId = ref 1, one observation.
    const row = ['02', '01', `0f${ascii('["d1","d2"]')}`, '01', `01${D.divisionId.toString(16).padStart(2, '0')}01`, '01', '02000001'].join(
      '',
    );
    expect(decodeObservations(row, 5, 'c1')).toEqual([{ metric: 2, emit: 5, value: 1, dims: dims({ divisionId: ['d1', 'd2'] }) }]);
  });

  it('reads rows of version 1, a divisionId there being the one value of its list', () => {
    expect(decodeObservations(version1, 1000, 'c1')).toEqual(observations);
    // Version 1, strings ['d-1'], one tuple with dim 2 (mask 4) = ref 1, one observation.
    const row = ['01', '01', `07${ascii('d-1')}`, '01', '0401', '01', '03000000'].join('');
    expect(decodeObservations(row, 0, 'c9')).toEqual([{ metric: 3, emit: 0, value: 0, dims: dims({ divisionId: ['d-1'] }) }]);
  });

  it('keeps a multi-valued dimension as a list of strings, each as compact as a string alone', () => {
    const uuid2 = 'aaaaaaaa-bbbb-cccc-dddd-000000000000';
    const list = [{ metric: 2, emit: 5, value: 1, dims: dims({ divisionId: ['d1', uuid2], requestedRoutingSkillId: ['s'] }) }];
    const hex = encodeObservations(list, 5, 'c1');
    expect(hex).toBe(
      [
        '04',
        '02',
        `0402 0a${ascii('d1')} 01aaaaaaaabbbbccccdddd000000000000`.replaceAll(' ', ''), // a list of 2: 'd1', a UUID
        `0401 09${ascii('s')}`.replaceAll(' ', ''),
        '01',
        '02',
        '0201',
        `${(66 - 3).toString(16)}02`,
        '01',
        '02000001',
      ].join(''),
    );
    expect(decodeObservations(hex, 5, 'c1')).toEqual(list);
  });

  it("writes values derived at ingest and Genesys' enumerated values as words (WORDS is append-only)", () => {
    const words = [
      { metric: 1, emit: 0, value: 1, dims: dims({ conversationId: 'c1', interactionType: 'contactCenter', usedRouting: 'Bullseye' }) },
      { metric: 1, emit: 0, value: 1, dims: dims({ conversationId: 'c1', interactionType: 'enterprise', purpose: 'wrapup' }) },
    ];
    const hex = encodeObservations(words, 0, 'c1');
    // In dimension order (purpose 3, interactionType 44, usedRouting 80), new strings only: 'contactCenter' =
    // WORDS[37], 'Bullseye' = WORDS[41] (the model's values from 39, sorted), 'wrapup' = 162 (two bytes), 'enterprise' = 38.
    expect(hex.startsWith(['04', '05', '00', '0225', '0229', '02a201', '0226'].join(''))).toBe(true);
    expect(decodeObservations(hex, 0, 'c1')).toEqual(words);
  });

  it("keeps a single-valued dimension's value equal to a list's JSON text apart from the list", () => {
    const text = '["d1"]';
    for (const order of [dims({ divisionId: ['d1'], queueId: text }), dims({ queueId: text, divisionId: ['d1'] })]) {
      const one = [{ metric: 1, emit: 0, value: 1, dims: order }];
      expect(decodeObservations(encodeObservations(one, 0, 'c1'), 0, 'c1')).toEqual(one);
    }
    // The text first (a plain string then, shared by the list, which reads it as JSON), and the list first.
    const textFirst = [
      { metric: 1, emit: 0, value: 1, dims: dims({ queueId: text }) },
      { metric: 2, emit: 0, value: 1, dims: dims({ divisionId: ['d1'] }) },
    ];
    expect(decodeObservations(encodeObservations(textFirst, 0, 'c1'), 0, 'c1')).toEqual(textFirst);
    const listFirst = [...textFirst].reverse();
    expect(decodeObservations(encodeObservations(listFirst, 0, 'c1'), 0, 'c1')).toEqual(listFirst);
  });

  it('writes the same bytes when observations share dims arrays', () => {
    const shared = observations.map((o) => ({ ...o }));
    shared[2]!.dims = shared[0]!.dims;
    expect(encodeObservations(shared, 1000, 'c1')).toBe(expected);
    // …and between encodes of different conversations nothing carries over.
    encodeObservations([{ metric: 9, emit: 5, value: 7, dims: dims({ conversationId: 'x', queueId: 'q' }) }], 0, 'x');
    expect(encodeObservations(observations, 1000, 'c1')).toBe(expected);
  });

  it('keeps tuple numbering past the linear search (more than 32 tuples), with repeats', () => {
    const many: Observation[] = Array.from({ length: 120 }, (_, i) => ({
      metric: 1,
      emit: 1000 + i,
      value: i,
      dims: dims({ conversationId: 'c1', queueId: `q${(i * 7) % 40}` }),
    }));
    const hex = encodeObservations(many, 1000, 'c1');
    expect(decodeObservations(hex, 1000, 'c1')).toEqual(many);
    // q values first appear in order 0..39 (7 and 40 are coprime), so observation i uses tuple i % 40;
    // each: metric 01, tuple, zigzag(1 ms later) = 02 (00 for the first), value i.
    const h = (n: number) => n.toString(16).padStart(2, '0');
    const tail = `78${many.map((_, i) => `01${h(i % 40)}${i === 0 ? '00' : '02'}${h(i)}`).join('')}`;
    expect(hex.endsWith(tail)).toBe(true);
  });

  it('writes a value the dictionary holds as its id, where that is shorter, and reads it back through the names given', () => {
    const queue = '11111111-2222-3333-4444-555555555555';
    const team = '66666666-7777-8888-9999-000000000000';
    const rows: Observation[] = [
      { metric: 4, emit: 10, value: 3, dims: dims({ conversationId: 'c1', mediaType: 'voice', queueId: queue, divisionId: ['d1', 'd2'] }) },
      // teamId's value is also a wrapUpCode here: the string is shared, its id found through teamId.
      { metric: 5, emit: 10, value: 1, dims: dims({ conversationId: 'c1', wrapUpCode: team, teamId: team, queueId: 'q' }) },
    ];
    const dictionary = DIMENSIONS.map(() => undefined as Map<string, number> | undefined);
    dictionary[D.queueId] = new Map([
      [queue, 300],
      ['q', 9],
    ]);
    dictionary[D.divisionId] = new Map([['["d1","d2"]', 7]]);
    dictionary[D.mediaType] = new Map([['voice', 1]]);
    dictionary[D.teamId] = new Map([[team, 128]]);
    dictionary[D.conversationId] = new Map([['c1', 2]]);
    const hex = encodeObservations(rows, 10, 'c1', dictionary);
    const prefix = [
      '04',
      '06', // strings in order of first use (dimension order within an observation):
      '00', // 'c1', the row's id: head 0 although the dictionary has it
      '0507', // divisionId's list (dimension 2, before mediaType): its id 7 (head 5)
      '0202', // 'voice' stays a word (as short)
      '05ac02', // queue: id 300, two bytes of varint
      '09' + ascii('q'), // 'q' (one character) stays text: no shorter as an id
      '058001', // the team, id 128 though first met as a wrapUpCode (that dimension has no id for it)
    ].join('');
    expect(hex.slice(0, prefix.length)).toBe(prefix);
    const missing = new Set<number>();
    missingNames(hex, new Map(), missing);
    expect([...missing].sort((a, b) => a - b)).toEqual([7, 128, 300]);
    const names = new Map([
      [7, '["d1","d2"]'],
      [300, queue],
      [128, team],
    ]);
    const none = new Set<number>();
    missingNames(hex, names, none);
    expect(none.size).toBe(0);
    expect(decodeObservations(hex, 10, 'c1', names)).toEqual(rows);
    expect(() => decodeObservations(hex, 10, 'c1', new Map([[7, '["d1","d2"]']]))).toThrow(/dictionary id (300|128)/);
    // Without a dictionary the same observations are written as before.
    expect(decodeObservations(encodeObservations(rows, 10, 'c1'), 10, 'c1')).toEqual(rows);
    // Rows of earlier versions name no ids.
    const earlier = new Set<number>();
    missingNames(version3, new Map(), earlier);
    expect(earlier.size).toBe(0);
  });

  it('writes phone numbers as their digits, two to a byte', () => {
    const phones = ['tel:+15665550538', '+123', 'tel:+1a', '+', 'tel:+', '+0', 'tel:+007'];
    const rows: Observation[] = phones.map((ani, i) => ({ metric: 1, emit: i, value: 1, dims: dims({ ani }) }));
    const hex = encodeObservations(rows, 0, 'c1');
    const prefix = [
      '04',
      '07',
      '070b156655505380', // 'tel:+' and 11 digits (the last nibble unused)
      '06031230', // '+' and 3 digits
      `0f${ascii('tel:+1a')}`, // not only digits: text
      `09${ascii('+')}`, // no digits: text
      `0d${ascii('tel:+')}`,
      '060100', // '+0'
      '07030070', // 'tel:+007': leading zeros kept by the count
    ].join('');
    expect(hex.slice(0, prefix.length)).toBe(prefix);
    expect(decodeObservations(hex, 0, 'c1')).toEqual(rows);
    // A reader finds the dictionary ids past phone numbers and JSON text (lone surrogates) in the string table.
    const more: Observation[] = [
      ...rows,
      { metric: 2, emit: 9, value: 1, dims: dims({ dnis: '\ud800', queueId: 'queue-1', divisionId: ['tel:+1', 'x'] }) },
    ];
    const dictionary = DIMENSIONS.map(() => undefined as Map<string, number> | undefined);
    dictionary[D.queueId] = new Map([['queue-1', 200]]);
    const named = encodeObservations(more, 0, 'c1', dictionary);
    const missing = new Set<number>();
    missingNames(named, new Map(), missing);
    expect([...missing]).toEqual([200]);
    expect(decodeObservations(named, 0, 'c1', new Map([[200, 'queue-1']]))).toEqual(more);
  });
});

describe('toObservations', () => {
  const t = (hms: string) => `2005-03-01T${hms}Z`;
  const record = ingestBodySchema.parse({
    conversations: [
      conversation({
        id: 'conv-share',
        start: t('10:00:00'),
        participants: [
          {
            purpose: 'agent',
            userId: 'u1',
            sessions: [
              {
                id: 's1',
                // Out of order on purpose: the latest segment that started by the emit counts.
                segments: [
                  { start: t('10:05:00'), queueId: 'Q2', wrapUpCode: 'W1', disconnectType: 'client' },
                  { start: t('10:00:00'), queueId: 'Q1' },
                ],
                metrics: [
                  ['tAnswered', 1000, t('10:01:00')],
                  ['tTalk', 2000, t('10:06:00')],
                  ['tHeld', 3000, t('10:01:00')],
                  ['tAcw', 4000, t('10:06:00')],
                  ['nOffered', 1, t('10:06:00')],
                ],
              },
            ],
          },
        ],
      }),
    ],
  }).conversations[0]!;
  // interactionType: no acd participant, so enterprise; and no firstQueue (no queue offered the call).
  const common = {
    conversationId: 'conv-share',
    purpose: 'agent',
    mediaType: 'voice',
    direction: 'inbound',
    sessionId: 's1',
    interactionType: 'enterprise',
  };

  it('gives each metric the dimensions of the segment current at its emit, equal dims sharing one array', () => {
    const out = toObservations(record);
    const early = dims({ ...common, userId: 'u1', queueId: 'Q1' });
    const late = dims({ ...common, userId: 'u1', queueId: 'Q2', wrapUpCode: 'W1', disconnectType: 'client' });
    const m = (name: string) => METRIC_INDEX.get(name)!;
    expect(out).toEqual([
      { metric: m('tAnswered'), emit: Date.parse(t('10:01:00')), value: 1000, dims: early },
      { metric: m('tTalk'), emit: Date.parse(t('10:06:00')), value: 2000, dims: late },
      { metric: m('tHeld'), emit: Date.parse(t('10:01:00')), value: 3000, dims: early },
      { metric: m('tAcw'), emit: Date.parse(t('10:06:00')), value: 4000, dims: late },
      // userId never applies to ACD metrics.
      {
        metric: m('nOffered'),
        emit: Date.parse(t('10:06:00')),
        value: 1,
        dims: dims({ ...common, queueId: 'Q2', wrapUpCode: 'W1', disconnectType: 'client' }),
      },
    ]);
    expect(out[2]!.dims).toBe(out[0]!.dims);
    expect(out[3]!.dims).toBe(out[1]!.dims);
    expect(out[4]!.dims).not.toBe(out[1]!.dims);
    // The record itself is left as it was.
    expect(record.participants[0]!.sessions[0]!.segments!.map((s) => s.queueId)).toEqual(['Q2', 'Q1']);
  });
});
