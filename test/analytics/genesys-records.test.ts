/// <reference types="vite/client" />
/**
 * The 186 real conversation-detail records of test/fixtures/shared/genesys-details (see its README),
 * sent as the bytes they are (an envelope of records, an async job's page, or one conversation as
 * `GET …/conversations/{id}/details` answers it): every well-formed one is stored, the one whose author typed 14 dates by
 * hand is refused with the field named, and what is stored adds up to what the records say, counted
 * here by a plain walk over the JSON (not by the ingest code).
 */
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { OBSERVED_METRIC_NAMES } from '../../src/analytics/catalog';
import { send } from '../helpers';
import { INGEST, queryOk } from './analytics-api';
import { CONVERSATION_ID_SQL } from '../../src/analytics/ingest/conversation-key';

const FILES = import.meta.glob('../fixtures/shared/genesys-details/*.json', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

const RECORD_FILES = Object.entries(FILES)
  .map(([path, text]) => ({ name: path.split('/').pop()!, text }))
  .filter((f) => f.name !== 'manifest.json' && f.name !== 'models.json')
  .sort((a, b) => (a.name < b.name ? -1 : 1));

/** The one record its author edited by hand (README: "14 timestamps have a one-digit day"). */
const HAND_EDITED = 'GenesysCloudBlueprints__conversation-model-to-sql-blueprint__conversations__conversation2.json';

interface Metric {
  name: string;
  value: number;
  emitDate: string;
}
interface Session {
  sessionId: string;
  mediaType: string;
  metrics?: Metric[];
}
interface DetailRecord {
  conversationId: string;
  participants: { purpose: string; sessions?: Session[] }[];
}

function records(text: string): DetailRecord[] {
  const parsed = JSON.parse(text) as { conversations?: DetailRecord[] } & DetailRecord;
  return parsed.conversations ?? [parsed];
}

const post = (text: string) =>
  send('POST', INGEST, { body: text, headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${env.ADMIN_TOKEN}` } });

const OBSERVED = new Set(OBSERVED_METRIC_NAMES);

/** Distinct (session, name, emitDate) observations of the catalogue's metrics, and the names of the others. */
function tally(list: DetailRecord[]) {
  const seen = new Set<string>();
  const skipped: { [name: string]: number } = {};
  for (const r of list)
    for (const p of r.participants)
      for (const s of p.sessions ?? [])
        for (const m of s.metrics ?? []) {
          if (OBSERVED.has(m.name)) seen.add(`${r.conversationId}|${s.sessionId}|${m.name}|${Date.parse(m.emitDate)}`);
          else skipped[m.name] = (skipped[m.name] ?? 0) + 1;
        }
  return { observations: seen.size, skipped };
}

describe('real Genesys conversation-detail records', () => {
  it('stores every well-formed record of every file, sent as it is, and refuses only the hand-edited one', async () => {
    expect(RECORD_FILES).toHaveLength(7);
    const stored = new Set<string>();
    let totalEmpty = 0;
    for (const file of RECORD_FILES) {
      const list = records(file.text);
      const res = await post(file.text);
      if (file.name === HAND_EDITED) {
        expect(res.status, file.name).toBe(400);
        expect(res.body.code).toBe('invalid.date');
        expect(res.body.details[0].fieldName).toMatch(
          /^conversations\[0\]\.participants\[\d+\]\.sessions\[\d+\]\.segments\[\d+\]\.segment(Start|End)$/,
        );
        expect(res.body.errors).toHaveLength(1);
        expect(res.body.errors[0].entityId).toBe(list[0]!.conversationId);
        continue;
      }
      expect(res.status, `${file.name}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
      const fresh = list.filter((r) => !stored.has(r.conversationId));
      const expected = tally(list);
      expect(res.body.conversations, file.name).toBe(new Set(list.map((r) => r.conversationId)).size);
      expect(res.body.skippedMetrics, file.name).toEqual(expected.skipped);
      // The 2016 records (segments, no metrics) are named: nothing of them is stored.
      const empty = list.filter((r) => tally([r]).observations === 0).map((r) => r.conversationId);
      expect(res.body.withoutObservations, file.name).toEqual({ count: empty.length, conversationIds: empty });
      totalEmpty += empty.length;
      // The blueprint's index.md is a trimmed copy of conversation1: its observations are already stored.
      if (fresh.length === list.length) expect(res.body.observations, file.name).toBe(expected.observations);
      else expect(res.body.observations + res.body.duplicates, file.name).toBe(expected.observations);
      for (const r of list) stored.add(r.conversationId);
    }
    expect(stored.size).toBe(185);
    expect(totalEmpty).toBe(25);
    // A conversation is kept as a row once it has observations: the 2016 records carry no metrics yet.
    const withMetrics = RECORD_FILES.filter((f) => f.name !== HAND_EDITED)
      .flatMap((f) => records(f.text))
      .filter((r) => tally([r]).observations > 0);
    const ids = [...new Set(withMetrics.map((r) => r.conversationId))];
    expect(ids.length).toBe(160);
    const rows = await env.DB.prepare(
      `SELECT count(*) AS n FROM conversations WHERE ${CONVERSATION_ID_SQL} IN (SELECT value FROM json_each(?))`,
    )
      .bind(JSON.stringify(ids))
      .first<number>('n');
    expect(rows).toBe(ids.length);
  });

  it('sends each file as it is: four are one conversation, not an envelope', async () => {
    const lone = RECORD_FILES.filter((f) => !('conversations' in JSON.parse(f.text)));
    expect(lone).toHaveLength(4);
    for (const f of lone) expect(JSON.parse(f.text).conversationId, f.name).toEqual(expect.any(String));
  });

  it('refuses a body of neither shape, saying which shapes it takes and what it got', async () => {
    const real = records(RECORD_FILES.find((f) => f.name.startsWith('xfaith4__GenesysCloud-API-Explorer_v3__'))!.text)[0]!;
    const one = { ...real, conversationId: crypto.randomUUID() };
    const cases: [string, string][] = [
      [JSON.stringify([one]), 'got a JSON array'],
      [JSON.stringify({ records: [one] }), 'got no "conversations"'],
      [JSON.stringify({ conversations: one }), 'got "conversations" as an object'],
      ['"conversations"', 'got "conversations"'],
    ];
    for (const [text, got] of cases) {
      const res = await post(text);
      expect(res.status, text.slice(0, 40)).toBe(400);
      expect(res.body.code).toBe('invalid.value');
      expect(res.body.message).toContain('Expected the records in "conversations"');
      expect(res.body.message).toContain('or one conversation with its conversationId at the top level');
      expect(res.body.message).toContain(got);
      expect(res.body.details[0].fieldName).toBe('conversations');
    }
    const stored = await env.DB.prepare(`SELECT count(*) AS n FROM conversations WHERE ${CONVERSATION_ID_SQL} = ?`)
      .bind(one.conversationId)
      .first<number>('n');
    expect(stored).toBe(0);
  });

  it('takes each record alone too (as the issue measured them): 185 stored or already there, 1 refused', async () => {
    let ok = 0;
    let refused = 0;
    for (const file of RECORD_FILES)
      for (const r of records(file.text)) {
        const res = await post(JSON.stringify(r));
        if (res.status === 200) ok++;
        else {
          expect(res.status).toBe(400);
          expect(res.body.errors[0].entityId).toBe(r.conversationId);
          refused++;
        }
      }
    // 187 records in the files (the blueprint's trimmed copy repeats conversation1).
    expect([ok, refused]).toEqual([186, 1]);
  });

  it('answers counts and sums that match the records of the 148-conversation export, by media type', async () => {
    const file = RECORD_FILES.find((f) => f.name.startsWith('xfaith4__Genesys-API-Explorer__'))!;
    const list = records(file.text);
    expect((await post(file.text)).status).toBe(200);
    // Expected, from the JSON: per media type, nOffered count and tHandle count/sum, by distinct observation.
    const want = new Map<string, { nOffered: number; handleCount: number; handleSum: number }>();
    const seen = new Set<string>();
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    for (const r of list)
      for (const p of r.participants)
        for (const s of p.sessions ?? [])
          for (const m of s.metrics ?? []) {
            if (m.name !== 'nOffered' && m.name !== 'tHandle') continue;
            const emit = Date.parse(m.emitDate);
            const key = `${r.conversationId}|${s.sessionId}|${m.name}|${emit}`;
            if (seen.has(key)) continue;
            seen.add(key);
            first = Math.min(first, emit);
            last = Math.max(last, emit);
            const w = want.get(s.mediaType) ?? { nOffered: 0, handleCount: 0, handleSum: 0 };
            if (m.name === 'nOffered') w.nOffered++;
            else {
              w.handleCount++;
              w.handleSum += m.value;
            }
            want.set(s.mediaType, w);
          }
    expect(want.get('voice')).toMatchObject({ nOffered: 7, handleCount: 63 }); // a census of the file, by hand
    const day = 86_400_000;
    const from = new Date(Math.floor(first / day) * day).toISOString();
    const to = new Date((Math.floor(last / day) + 1) * day).toISOString();
    const answer = await queryOk({ interval: `${from}/${to}`, groupBy: ['mediaType'], metrics: ['nOffered', 'tHandle'] });
    const got = new Map<string, { nOffered: number; handleCount: number; handleSum: number }>();
    for (const g of answer.results) {
      const stats = (name: string) => g.data[0].metrics.find((m: { metric: string }) => m.metric === name)?.stats;
      got.set(g.group.mediaType, {
        nOffered: stats('nOffered')?.count ?? 0,
        handleCount: stats('tHandle')?.count ?? 0,
        handleSum: stats('tHandle')?.sum ?? 0,
      });
    }
    expect(got).toEqual(want);
  });
});
