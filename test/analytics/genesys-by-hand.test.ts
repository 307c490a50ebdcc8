/// <reference types="vite/client" />
/**
 * Aggregates of real Genesys records worked out by hand from the records themselves (their JSON is
 * quoted in the comments), ingested as the files are: a blueprint's chat conversation and a 2024 voice
 * call with three divisions, two agents, a redirected alert and two wrap-up codes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import CHAT from '../fixtures/shared/genesys-details/GenesysCloudBlueprints__conversation-model-to-sql-blueprint__conversations__conversation1.json?raw';
import VOICE from '../fixtures/shared/genesys-details/Mailson-Almeida__relatorio-de-chamadas-desconexao__src__functions__get-conversation-detail.js.json?raw';
import { send } from '../helpers';
import { INGEST, queryOk, timer } from './analytics-api';

const post = (record: string) =>
  send('POST', INGEST, { body: `{"conversations":[${record}]}`, headers: { 'Content-Type': 'application/json' } });
const only = (conversationId: string) => ({ type: 'and', predicates: [{ dimension: 'conversationId', value: conversationId }] });

const CHAT_ID = '1bc96a39-6725-40c4-9345-db72aa67b8c6';
const CHAT_HOUR = '2021-04-01T12:00:00.000Z/2021-04-01T13:00:00.000Z';
const QUEUE = 'a623d83c-96d7-4baa-af1f-d46ad6700d8b';
const AGENT = '50fcd33c-f432-4726-abc9-979f3ca01555';

const VOICE_ID = '32d23263-e5bd-4567-bff3-143e38f7b095';
const VOICE_HOUR = '2024-04-29T17:00:00.000Z/2024-04-29T18:00:00.000Z';

beforeAll(async () => {
  for (const record of [CHAT, VOICE]) expect((await post(record)).status).toBe(200);
});

describe('real records, answers worked out by hand', () => {
  it('a chat: customer, queue and agent groups, and the service level of the queue group', async () => {
    const res = await queryOk({
      interval: CHAT_HOUR,
      groupBy: ['queueId', 'userId', 'requestedRouting'],
      filter: only(CHAT_ID),
      metrics: ['nConnected', 'nOffered', 'tAcd', 'tAnswered', 'tTalk', 'tHeld', 'tHandle', 'nError', 'oServiceLevel'],
    });
    const data = (metrics: unknown[]) => [{ interval: CHAT_HOUR, metrics }];
    expect(res.results).toEqual([
      // The customer's session: nConnected 1 at 12:27:53.386; queueId never applies to it; requestedRoutings ["Standard"].
      { group: { mediaType: 'chat', requestedRouting: 'Standard' }, data: data([{ metric: 'nConnected', stats: { count: 1 } }]) },
      // The acd session (queue a623…): nOffered 1, tAcd 11179; the agent's tAnswered (1, not over the SLA) makes 1 / 1.
      {
        group: { mediaType: 'chat', queueId: QUEUE, requestedRouting: 'Standard' },
        data: data([
          { metric: 'nOffered', stats: { count: 1 } },
          { metric: 'tAcd', stats: timer(11179) },
          { metric: 'oServiceLevel', stats: { ratio: 1, numerator: 1, denominator: 1, target: 0.8 } },
        ]),
      },
      // The agent 50fc…: tAnswered 11179, tTalk 374561, tHeld 544176, tHandle 918737, nError 1.
      {
        group: { mediaType: 'chat', queueId: QUEUE, userId: AGENT, requestedRouting: 'Standard' },
        data: data([
          { metric: 'tAnswered', stats: timer(11179) },
          { metric: 'tTalk', stats: timer(374561) },
          { metric: 'tHeld', stats: timer(544176) },
          { metric: 'tHandle', stats: timer(918737) },
          { metric: 'nError', stats: { count: 1 } },
        ]),
      },
    ]);
  });

  it('a voice call with three divisions: every metric in each division group', async () => {
    const res = await queryOk({
      interval: VOICE_HOUR,
      groupBy: ['divisionId'],
      filter: only(VOICE_ID),
      metrics: ['tHandle', 'nError', 'tIvr'],
    });
    // tHandle 57000 (agent 8dd0…, alerted, not answering) and 377894 (agent 2eb5…); nError 1 (8dd0…); tIvr 64488.
    const data = [
      {
        interval: VOICE_HOUR,
        metrics: [
          { metric: 'tHandle', stats: timer(57000, 377894) },
          { metric: 'nError', stats: { count: 1 } },
          { metric: 'tIvr', stats: timer(64488) },
        ],
      },
    ];
    expect(res.results).toEqual(
      ['5b703b3e-b3d6-4733-994e-bf09ceecd1a1', 'bb150765-0427-47c1-a541-4460d0032ef0', 'd72e496f-c880-46a1-a9a1-964553bba379'].map((d) => ({
        group: { mediaType: 'voice', divisionId: d },
        data,
      })),
    );
    const flat = await queryOk({
      interval: VOICE_HOUR,
      groupBy: ['divisionId'],
      filter: only(VOICE_ID),
      metrics: ['nError'],
      flattenMultivaluedDimensions: true,
    });
    // Joined in record order.
    expect(flat.results.map((r: { group: unknown }) => r.group)).toEqual([
      {
        mediaType: 'voice',
        divisionId: '5b703b3e-b3d6-4733-994e-bf09ceecd1a1,d72e496f-c880-46a1-a9a1-964553bba379,bb150765-0427-47c1-a541-4460d0032ef0',
      },
    ]);
  });

  it('a wrap-up code reaches the metrics emitted at or after its wrap-up segment started, and no earlier one', async () => {
    const res = await queryOk({
      interval: VOICE_HOUR,
      groupBy: ['wrapUpCode'],
      filter: only(VOICE_ID),
      metrics: ['tHandle', 'tAcw', 'tTalk', 'nError'],
    });
    const data = (metrics: unknown[]) => [{ interval: VOICE_HOUR, metrics }];
    expect(res.results).toEqual([
      // Agent 8dd0…'s nError at 17:31:55.377, 0.249 s before its wrap-up segment (17:31:55.626): no code.
      { group: { mediaType: 'voice' }, data: data([{ metric: 'nError', stats: { count: 1 } }]) },
      // Its tAcw and tHandle (57000 each) at 17:32:52.789, after: code 659abad8….
      {
        group: { mediaType: 'voice', wrapUpCode: '659abad8-a6ef-4f03-abde-0346b6b2e814' },
        data: data([
          { metric: 'tHandle', stats: timer(57000) },
          { metric: 'tAcw', stats: timer(57000) },
        ]),
      },
      // Agent 2eb5…: tTalk 374894 exactly at its wrap-up's start (17:38:14.974), tAcw 3000 and tHandle 377894 after.
      {
        group: { mediaType: 'voice', wrapUpCode: 'ININ-WRAP-UP-TIMEOUT' },
        data: data([
          { metric: 'tHandle', stats: timer(377894) },
          { metric: 'tAcw', stats: timer(3000) },
          { metric: 'tTalk', stats: timer(374894) },
        ]),
      },
    ]);
  });
});
