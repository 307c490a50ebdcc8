import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { conversation } from '../analytics/builders';
import { HAND_DAY, QA, QB, UA, UB } from '../analytics/fixtures/hand-day';
import { startDevServer, type DevServer } from './support/dev-server';
import { watchdog } from './support/watchdog';

/**
 * Genesys Cloud's own JavaScript SDK (purecloud-platform-client-v2), unchanged, pointed at a local
 * `wrangler dev`: it must get the same answers as any client, and our ErrorBody on a bad request.
 * Expected values are worked out by hand for the hand-built day (test/analytics/fixtures/hand-day.ts).
 */
const require = createRequire(import.meta.url);
const platformClient = require('purecloud-platform-client-v2');

const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';
/** How long a job may stay QUEUED or PENDING here (its answer takes well under a second). */
const SETTLE_MS = 60_000;
const MORNING = '2002-03-04T00:00:00.000Z/2002-03-04T12:00:00.000Z';
const AFTERNOON = '2002-03-04T12:00:00.000Z/2002-03-05T00:00:00.000Z';
const voice = { dimension: 'mediaType', value: 'voice' };
const timer = (...v: number[]) => ({ max: Math.max(...v), min: Math.min(...v), count: v.length, sum: v.reduce((a, b) => a + b, 0) });

/**
 * One queued call with issue 23's wider record: two divisions, two requested skills on its queue
 * segment, and two proposed agents ranked 1 and 5 (Genesys' predictive routing).
 */
const MULTI_DAY = '2003-05-06T00:00:00.000Z/2003-05-07T00:00:00.000Z';
const MULTI = {
  conversationId: 'sdk-multi',
  conversationStart: '2003-05-06T10:00:00.000Z',
  divisionIds: ['div-a', 'div-b'],
  participants: [
    {
      participantId: 'p-acd',
      purpose: 'acd',
      sessions: [
        {
          sessionId: 's-acd',
          mediaType: 'voice',
          direction: 'inbound',
          usedRouting: 'Predictive',
          proposedAgents: [
            { proposedAgentId: 'agent-1', agentRank: 1 },
            { proposedAgentId: 'agent-5', agentRank: 5 },
          ],
          segments: [
            {
              segmentStart: '2003-05-06T10:00:00.000Z',
              segmentType: 'interact',
              queueId: 'q-multi',
              requestedRoutingSkillIds: ['sk-1', 'sk-2'],
            },
          ],
          metrics: [
            { name: 'nOffered', value: 1, emitDate: '2003-05-06T10:00:00.000Z' },
            { name: 'tAcd', value: 5000, emitDate: '2003-05-06T10:00:05.000Z' },
            { name: 'nFlow', value: 1, emitDate: '2003-05-06T10:00:05.000Z' },
          ],
        },
      ],
    },
  ],
};

let server: DevServer;
let api: { postAnalyticsConversationsAggregatesQuery(body: unknown): Promise<any> };
/** The view-only API token the tests above log in with. */
let apiToken: string;

async function post(path: string, body: unknown, token = server.adminToken): Promise<any> {
  const res = await fetch(server.baseUrl + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return res.json();
}

beforeAll(async () => {
  server = await startDevServer();
  const berlinQueue = 'q-sdk-berlin';
  const offered = (at: string) =>
    conversation({
      start: at,
      participants: [{ purpose: 'acd', sessions: [{ segments: [{ start: at, queueId: berlinQueue }], metrics: [['nOffered', 1, at]] }] }],
    });
  await post('/api/v2/analytics/conversations/details/ingest', {
    conversations: [
      MULTI,
      ...HAND_DAY,
      offered('2024-03-30T22:30:00.000Z'),
      offered('2024-03-30T23:00:00.000Z'),
      offered('2024-03-31T21:59:59.000Z'),
    ],
  });
  // A token with only the view permission, as a reporting integration would have.
  const { token } = await post('/api/v1/tokens', { name: 'sdk', permissions: ['analytics:conversationAggregate:view'] });
  apiToken = token;

  // One gateway for both of the SDK's hosts: the API (api.<env>) and the login host (login.<env>, /oauth/token).
  const client = platformClient.ApiClient.instance;
  client.setGateway({ host: '127.0.0.1', protocol: 'http', port: server.port, path_params_api: '' });
  client.setAccessToken(token);
  api = new platformClient.AnalyticsApi();
}, 180_000);

afterAll(async () => {
  await server?.dispose();
});

describe('Genesys Cloud JavaScript SDK against Switchboard', () => {
  it('answers the seed query shape', async () => {
    const res = await api.postAnalyticsConversationsAggregatesQuery({
      interval: DAY,
      granularity: 'PT12H',
      groupBy: ['queueId', 'userId'],
      filter: { type: 'and', predicates: [voice, { dimension: 'direction', value: 'outbound' }] },
      metrics: ['nOutboundConnected', 'nOutboundAbandoned', 'tTalk'],
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice', queueId: QB, userId: UB },
        data: [
          {
            interval: MORNING,
            metrics: [
              { metric: 'nOutboundConnected', stats: { count: 1 } },
              { metric: 'tTalk', stats: timer(100000) },
            ],
          },
          { interval: AFTERNOON, metrics: [{ metric: 'nOutboundAbandoned', stats: { count: 1 } }] },
        ],
      },
    ]);
  });

  it('answers an or filter with a clause and exists/notExists', async () => {
    // nOffered from QB, or with no queue at all (none on this day: every ACD leg has one) -> c3, c6.
    const res = await api.postAnalyticsConversationsAggregatesQuery({
      interval: DAY,
      metrics: ['nOffered'],
      filter: {
        type: 'and',
        predicates: [voice],
        clauses: [
          {
            type: 'or',
            predicates: [
              { dimension: 'queueId', value: QB },
              { dimension: 'queueId', operator: 'notExists' },
            ],
          },
        ],
      },
    });
    expect(res.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'nOffered', stats: { count: 2 } }] }] },
    ]);
  });

  it('answers a metric predicate and a view', async () => {
    const res = await api.postAnalyticsConversationsAggregatesQuery({
      interval: DAY,
      metrics: ['tHandle'],
      filter: { type: 'and', predicates: [voice, { type: 'metric', metric: 'tHandle', range: { gte: 150000 } }] },
      views: [{ target: 'tHandle', name: 'overFiveMinutes', function: 'rangeBound', range: { gte: 300000 } }],
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: DAY,
            metrics: [{ metric: 'tHandle', stats: timer(510000, 200000) }],
            views: [{ name: 'overFiveMinutes', stats: timer(510000) }],
          },
        ],
      },
    ]);
  });

  it('answers topN with sortMetric and limit', async () => {
    const res = await api.postAnalyticsConversationsAggregatesQuery({
      interval: DAY,
      groupBy: ['userId'],
      metrics: ['tHandle'],
      queryType: 'topN',
      sortMetric: { name: 'tHandle', function: 'sum' },
      limit: 1,
    });
    expect(res.results).toEqual([
      { group: { mediaType: 'voice', userId: UA }, data: [{ interval: DAY, metrics: [{ metric: 'tHandle', stats: timer(510000) }] }] },
    ]);
  });

  it("runs an asynchronous aggregate job through the SDK's job calls, and the job survives a restart of the dev server", async () => {
    const jobs = api as unknown as {
      postAnalyticsConversationsAggregatesJobs(body: unknown): Promise<{ jobId: string }>;
      getAnalyticsConversationsAggregatesJob(id: string): Promise<{ state: string; completionDate?: string; expirationDate?: string }>;
      getAnalyticsConversationsAggregatesJobResults(id: string, opts?: { cursor?: string }): Promise<{ results: any[]; cursor?: string }>;
      deleteAnalyticsConversationsAggregatesJob(id: string): Promise<unknown>;
    };
    const body = {
      interval: DAY,
      granularity: 'PT12H',
      groupBy: ['queueId', 'userId'],
      metrics: ['nOffered', 'tHandle', 'tTalk'],
      pageSize: 2,
    };
    const { pageSize: _, ...query } = body;
    // Its first attempt in one run timed out at 180 s, saying nothing of where (it passed on its retry).
    const steps = watchdog('the SDK job test', 150_000, () => server);
    onTestFinished(() => steps.done());
    steps.step('the query answered at once');
    const sync = await api.postAnalyticsConversationsAggregatesQuery(query);
    const settled = async (jobId: string) => {
      const deadline = Date.now() + SETTLE_MS;
      let state = '';
      while (Date.now() < deadline) {
        const status = await jobs.getAnalyticsConversationsAggregatesJob(jobId);
        if (status.state !== state) steps.step(`job ${jobId.slice(0, 8)} ${(state = status.state)}`);
        if (status.state !== 'QUEUED' && status.state !== 'PENDING') return status;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the job was still ${state} after ${SETTLE_MS / 1000} s; wrangler dev said:\n${server.logTail(30)}`);
    };
    const everyPage = async (jobId: string) => {
      const results: any[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await jobs.getAnalyticsConversationsAggregatesJobResults(jobId, cursor ? { cursor } : {});
        expect(page.results.length).toBeLessThanOrEqual(2);
        results.push(...page.results);
        cursor = page.cursor;
        pages++;
      } while (cursor);
      return { results, pages };
    };
    const byGroup = (results: any[]) => [...results].sort((a, b) => JSON.stringify(a.group).localeCompare(JSON.stringify(b.group)));

    steps.step('first job submitted');
    const first = await jobs.postAnalyticsConversationsAggregatesJobs(body);
    expect((await settled(first.jobId)).state).toBe('FULFILLED');
    steps.step('first job read');
    const answered = await everyPage(first.jobId);
    expect(answered.pages).toBe(Math.ceil(sync.results.length / 2));
    expect(byGroup(answered.results)).toEqual(byGroup(sync.results));

    // Submitted, then the dev server restarts at once: the job is answered after it (its runner's alarm
    // is stored), and the first job's results are still there.
    steps.step('second job submitted');
    const second = await jobs.postAnalyticsConversationsAggregatesJobs(body);
    steps.step('dev server restarting');
    await server.restart();
    expect((await settled(second.jobId)).state).toBe('FULFILLED');
    expect(byGroup((await everyPage(second.jobId)).results)).toEqual(byGroup(sync.results));
    expect(byGroup((await everyPage(first.jobId)).results)).toEqual(byGroup(sync.results));

    steps.step('jobs read again; the first deleted');
    await jobs.deleteAnalyticsConversationsAggregatesJob(first.jobId);
    const gone = await jobs.getAnalyticsConversationsAggregatesJob(first.jobId).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(gone).toMatchObject({ status: 404, code: 'not.found' });
  });

  it('answers P1D in a time zone across a DST change, with service level in queue groups', async () => {
    const tz = await api.postAnalyticsConversationsAggregatesQuery({
      interval: '2024-03-30T00:00:00+01:00/2024-04-01T00:00:00+02:00',
      granularity: 'P1D',
      timeZone: 'Europe/Berlin',
      metrics: ['nOffered'],
      filter: { type: 'and', predicates: [{ dimension: 'queueId', value: 'q-sdk-berlin' }] },
    });
    expect(tz.results[0].data).toEqual([
      { interval: '2024-03-29T23:00:00.000Z/2024-03-30T23:00:00.000Z', metrics: [{ metric: 'nOffered', stats: { count: 1 } }] },
      { interval: '2024-03-30T23:00:00.000Z/2024-03-31T22:00:00.000Z', metrics: [{ metric: 'nOffered', stats: { count: 2 } }] },
    ]);
    const sl = await api.postAnalyticsConversationsAggregatesQuery({
      interval: DAY,
      groupBy: ['queueId'],
      metrics: ['oServiceLevel'],
      filter: { type: 'and', predicates: [voice, { dimension: 'queueId', value: QA }] },
      flattenMultivaluedDimensions: true,
    });
    // QA voice: answered 2, over SLA 1, abandoned 1 -> 1 / 3 under the default settings.
    expect(sl.results).toEqual([
      {
        group: { mediaType: 'voice', queueId: QA },
        data: [
          { interval: DAY, metrics: [{ metric: 'oServiceLevel', stats: { ratio: 1 / 3, numerator: 1, denominator: 3, target: 0.8 } }] },
        ],
      },
    ]);
  });

  it('groups by a multi-valued dimension per value, or flattened, and filters a numeric one by range (issue 23)', async () => {
    const byDivision = await api.postAnalyticsConversationsAggregatesQuery({
      interval: MULTI_DAY,
      groupBy: ['divisionId'],
      metrics: ['nOffered'],
    });
    const offered = [{ interval: MULTI_DAY, metrics: [{ metric: 'nOffered', stats: { count: 1 } }] }];
    expect(byDivision.results).toEqual([
      { group: { mediaType: 'voice', divisionId: 'div-a' }, data: offered },
      { group: { mediaType: 'voice', divisionId: 'div-b' }, data: offered },
    ]);
    const flattened = await api.postAnalyticsConversationsAggregatesQuery({
      interval: MULTI_DAY,
      groupBy: ['divisionId', 'usedRouting'],
      metrics: ['nOffered'],
      flattenMultivaluedDimensions: true,
    });
    expect(flattened.results).toEqual([
      { group: { mediaType: 'voice', divisionId: 'div-a,div-b', usedRouting: 'Predictive' }, data: offered },
    ]);
    const bySkill = await api.postAnalyticsConversationsAggregatesQuery({
      interval: MULTI_DAY,
      groupBy: ['requestedRoutingSkillId'],
      metrics: ['tAcd'],
      filter: { type: 'and', predicates: [{ dimension: 'agentRank', range: { gte: 4 } }] },
    });
    const acd = [{ interval: MULTI_DAY, metrics: [{ metric: 'tAcd', stats: timer(5000) }] }];
    expect(bySkill.results).toEqual([
      { group: { mediaType: 'voice', requestedRoutingSkillId: 'sk-1' }, data: acd },
      { group: { mediaType: 'voice', requestedRoutingSkillId: 'sk-2' }, data: acd },
    ]);
    // No proposed agent ranked above 5: nothing matches.
    const none = await api.postAnalyticsConversationsAggregatesQuery({
      interval: MULTI_DAY,
      metrics: ['tAcd'],
      filter: { type: 'and', predicates: [{ dimension: 'agentRank', range: { gt: 5 } }] },
    });
    expect(none.results).toEqual([]);
  });

  it('names a key it does not read instead of ignoring it', async () => {
    const error = await api.postAnalyticsConversationsAggregatesQuery({ interval: MULTI_DAY, groupby: ['queueId'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'invalid.value', status: 400, details: [{ errorCode: 'invalid.value', fieldName: 'groupby' }] });
  });

  it('rejects a bad request with our ErrorBody in the error promise', async () => {
    const error = await api.postAnalyticsConversationsAggregatesQuery({ interval: DAY, granularity: 'PT7H', metrics: ['nOffered'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: 'invalid.value',
      status: 400,
      details: [{ errorCode: 'invalid.value', fieldName: 'granularity' }],
      errors: [],
    });
    expect((error as { contextId: string }).contextId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('Genesys Cloud JavaScript SDK logging in with the client-credentials grant', () => {
  afterAll(() => {
    platformClient.ApiClient.instance.setAccessToken(apiToken);
  });

  it('logs in with loginClientCredentialsGrant and queries with the token it got', async () => {
    const oauthClient = await post('/api/v2/oauth/clients', {
      name: 'sdk wallboard',
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['analytics:conversationAggregate:view'],
    });
    const client = platformClient.ApiClient.instance;
    client.setAccessToken(undefined);
    const before = Date.now();
    const authData = await client.loginClientCredentialsGrant(oauthClient.id, oauthClient.secret);
    // The SDK keeps the token and counts its expiry from expires_in (86399 s for a default client).
    expect(authData.accessToken).toMatch(/^sba_[A-Za-z0-9_-]{43}$/);
    expect(authData.tokenExpiryTime - before).toBeGreaterThanOrEqual(86_399_000);
    expect(authData.tokenExpiryTime - Date.now()).toBeLessThanOrEqual(86_399_000);

    const res = await api.postAnalyticsConversationsAggregatesQuery({
      interval: DAY,
      groupBy: ['queueId'],
      metrics: ['nOffered'],
      filter: { type: 'and', predicates: [voice, { dimension: 'queueId', value: QB }] },
    });
    // The hand-built day: QB offered c3 and c6 (as in the or-filter test above).
    expect(res.results).toEqual([
      { group: { mediaType: 'voice', queueId: QB }, data: [{ interval: DAY, metrics: [{ metric: 'nOffered', stats: { count: 2 } }] }] },
    ]);

    // Revoking the client ends the token the SDK holds.
    const revoked = await fetch(`${server.baseUrl}/api/v2/oauth/clients/${oauthClient.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${server.adminToken}` },
    });
    expect(revoked.status).toBe(204);
    const error = await api.postAnalyticsConversationsAggregatesQuery({ interval: DAY, metrics: ['nOffered'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 401, code: 'bad.credentials' });
  });

  it('rejects a wrong secret with the OAuth error in the login promise', async () => {
    const oauthClient = await post('/api/v2/oauth/clients', {
      name: 'sdk wrong secret',
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['analytics:conversationAggregate:view'],
    });
    const error = await platformClient.ApiClient.instance.loginClientCredentialsGrant(oauthClient.id, `${oauthClient.secret}x`).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The SDK rejects with its HTTP client's error, which carries our RFC 6749 answer.
    expect(error).toMatchObject({
      response: {
        status: 401,
        data: { error: 'invalid_client', error_description: expect.any(String) },
        headers: expect.objectContaining({ 'www-authenticate': expect.stringMatching(/^Basic /) }),
      },
    });
  });
});
