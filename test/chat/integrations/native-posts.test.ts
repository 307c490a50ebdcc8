import { describe, expect, it } from 'vitest';
import { expectError, send, type Sent } from '../../helpers';
import { createRoom, createWebhook, history, type PostTarget, roomWithWebhook, webhookPath } from '../helpers';
import {
  ACME,
  BITBUCKET,
  EXPECTED_ACK,
  GH_REPO_URL,
  GITHUB,
  JENKINS,
  JIRA_CASES,
  outboundMessage,
  SALESFORCE_FLOW,
  SALESFORCE_OUTBOUND,
  type Case,
} from './fixtures';

function postRaw(target: PostTarget, body: string, contentType: string, headers: Record<string, string> = {}): Promise<Sent> {
  return send('POST', webhookPath(target), { token: null, body, headers: { 'Content-Type': contentType, ...headers } });
}

function postJson(target: PostTarget, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  return postRaw(target, JSON.stringify(body), 'application/json', headers);
}

async function stored(roomId: string): Promise<{ markdown: string; metadata: string | null; html: string; webhookId: string }[]> {
  const res = await history(roomId);
  expect(res.status).toBe(200);
  return res.body.entities;
}

const LINK = (href: string, text: string) => `<a href="${href}" rel="noopener noreferrer nofollow" target="_blank">${text}</a>`;

const END_TO_END: Array<[string, string, Case, string]> = [
  ['github', 'a push', GITHUB['push of two commits to a branch']!, `${LINK(GH_REPO_URL, 'Codertocat/Hello-World')}`],
  ['github', 'a merged pull request', GITHUB['pull request merged']!, '<code>changes</code> \u2192 <code>master</code>'],
  ['bitbucket', 'a pull request', BITBUCKET['pull request created']!, '<blockquote>\n<p>Explains how to *deploy*.</p>\n</blockquote>'],
  [
    'jira',
    'an issue update',
    JIRA_CASES['issue moved to In Progress and assigned']!,
    '<li><strong>Status</strong>: To Do \u2192 In Progress</li>',
  ],
  ['jenkins', 'a finished build', JENKINS['build completed successfully (the plugin\u2019s sample)']!, '<strong>SUCCESS</strong>'],
  ['salesforce', 'a Flow callout', SALESFORCE_FLOW, '<li><strong>Priority</strong>: High</li>'],
];

describe('native payloads posted to a webhook of their kind', () => {
  it.each(END_TO_END)('a %s webhook stores %s as its translated message, rendered and with its metadata', async (kind, _, c, htmlPart) => {
    const { roomId, hook } = await roomWithWebhook({ kind });
    const res = await postJson(hook, c.body, c.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ deliveries: [{ roomId, messageId: expect.stringMatching(/^[0-9a-f-]{36}$/), seq: 1 }] });
    const [message, ...rest] = await stored(roomId);
    expect(rest).toEqual([]);
    expect(message).toMatchObject({ markdown: c.markdown, metadata: c.metadata, webhookId: hook.id });
    expect(message!.html).toContain(htmlPart);
    expect(message!.html).not.toContain('<img');
  });

  it('takes GitHub\u2019s form-encoded deliveries (payload=<JSON>)', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'github' });
    const c = GITHUB['issue opened']!;
    const res = await postRaw(
      hook,
      new URLSearchParams({ payload: JSON.stringify(c.body) }).toString(),
      'application/x-www-form-urlencoded',
      c.headers,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await stored(roomId)).toMatchObject([{ markdown: c.markdown, metadata: c.metadata }]);
  });

  it('still takes the generic {message, metadata} body, and refuses a broken one as before', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'jenkins' });
    expect((await postJson(hook, { message: '**Deploy** done', metadata: 'prod' })).status).toBe(200);
    expectError(await postJson(hook, { message: '', build: { number: 1 } }), 400, 'invalid.value', 'message');
    expectError(await postJson(hook, { message: 'x', metadata: 5 }), 400, 'invalid.value', 'metadata');
    expect(await stored(roomId)).toMatchObject([{ markdown: '**Deploy** done', metadata: 'prod' }]);
  });

  it('answers a recognised event it does not show with 200, no delivery and the reason, storing nothing and using no rate', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'github', rateLimit: { burst: 1, perSecond: 0.01 } });
    const watch = await postJson(
      hook,
      { action: 'started', repository: { full_name: 'Codertocat/Hello-World' } },
      { 'X-GitHub-Event': 'watch' },
    );
    expect(watch.status).toBe(200);
    expect(watch.headers.get('Content-Type')).toContain('application/json');
    expect(watch.body).toEqual({ deliveries: [], ignored: 'GitHub sends "watch" along with "star"; only "star" is shown.' });
    expect(await stored(roomId)).toEqual([]);
    const c = GITHUB['star added']!;
    expect((await postJson(hook, c.body, c.headers)).status).toBe(200);
    expectError(await postJson(hook, c.body, c.headers), 429, 'too.many.requests');
  });

  it('answers a payload its kind does not recognise with 400 saying what was expected, storing nothing', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'jira' });
    const res = await postJson(hook, { hello: 'world' });
    expectError(res, 400, 'invalid.value', 'webhookEvent');
    expect(res.body.message).toContain('a JSON body with "webhookEvent"');
    const github = await roomWithWebhook({ kind: 'github' });
    expectError(await postJson(github.hook, GITHUB['push of two commits to a branch']!.body), 400, 'invalid.value', 'X-GitHub-Event');
    const jenkins = await roomWithWebhook({ kind: 'jenkins' });
    expectError(await postJson(jenkins.hook, [1, 2, 3]), 400, 'invalid.value', 'body');
    expect(await stored(roomId)).toEqual([]);
    expect(await stored(github.roomId)).toEqual([]);
  });

  it('applies the rate limit, the pause switch and the body limit to native payloads too', async () => {
    const c = JENKINS['build completed successfully (the plugin\u2019s sample)']!;
    const { hook } = await roomWithWebhook({ kind: 'jenkins', rateLimit: { burst: 1, perSecond: 0.01 } });
    expect((await postJson(hook, c.body)).status).toBe(200);
    expectError(await postJson(hook, c.body), 429, 'too.many.requests');

    const paused = await roomWithWebhook({ kind: 'jenkins', active: false });
    expectError(await postJson(paused.hook, c.body), 403, 'webhook.inactive');

    const big = await roomWithWebhook({ kind: 'github' });
    const huge = { ...(GITHUB['star added']!.body as object), padding: 'x'.repeat(600 * 1024) };
    expectError(await postJson(big.hook, huge, { 'X-GitHub-Event': 'star' }), 413, 'payload.too.large');
    const form = new URLSearchParams({ payload: JSON.stringify(huge) }).toString();
    expectError(await postRaw(big.hook, form, 'application/x-www-form-urlencoded', { 'X-GitHub-Event': 'star' }), 413, 'payload.too.large');
    expect(await stored(big.roomId)).toEqual([]);
  });

  it('routes a translated message by its metadata, to every mapped room', async () => {
    const [home, pushes, both] = await Promise.all([createRoom(), createRoom(), createRoom()]);
    const hook = await createWebhook({
      kind: 'github',
      roomId: home!.id,
      rateLimit: { burst: 1_000, perSecond: 1_000 },
      mappings: [
        {
          field: 'metadata',
          match: 'prefix',
          value: 'github:push repo=Codertocat/Hello-World branch=master',
          roomIds: [pushes!.id, both!.id],
        },
      ],
    });
    const push = GITHUB['push of two commits to a branch']!;
    const res = await postJson(hook, push.body, push.headers);
    expect(res.body.deliveries.map((d: { roomId: string }) => d.roomId)).toEqual([pushes!.id, both!.id]);
    const pr = GITHUB['pull request opened']!;
    expect((await postJson(hook, pr.body, pr.headers)).body.deliveries.map((d: { roomId: string }) => d.roomId)).toEqual([home!.id]);
    expect((await stored(both!.id)).map((m) => m.markdown)).toEqual([push.markdown]);
    expect((await stored(home!.id)).map((m) => m.markdown)).toEqual([pr.markdown]);
  });

  it('deduplicates a GitHub redelivery (same X-GitHub-Delivery) and a Jira retry (same X-Atlassian-Webhook-Identifier)', async () => {
    const github = await roomWithWebhook({ kind: 'github' });
    const c = GITHUB['release published']!;
    const headers = { ...c.headers, 'X-GitHub-Delivery': crypto.randomUUID() };
    const first = await postJson(github.hook, c.body, headers);
    const again = await postJson(github.hook, c.body, headers);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await stored(github.roomId)).toHaveLength(1);

    const jira = await roomWithWebhook({ kind: 'jira' });
    const j = JIRA_CASES['comment created']!;
    const id = { 'X-Atlassian-Webhook-Identifier': String(Date.now()) };
    const j1 = await postJson(jira.hook, j.body, id);
    const j2 = await postJson(jira.hook, j.body, { ...id, 'X-Atlassian-Webhook-Retry': '1' });
    expect(j2.body).toEqual(j1.body);
    expect(j2.headers.get('Idempotent-Replayed')).toBe('true');
    expect((await postJson(jira.hook, j.body)).body.deliveries[0].seq).toBe(2);
    expect(await stored(jira.roomId)).toHaveLength(2);
  });

  it('refuses an Idempotency-Key reused for a different native payload with 409', async () => {
    const { hook } = await roomWithWebhook({ kind: 'github' });
    const key = { 'Idempotency-Key': crypto.randomUUID() };
    const a = GITHUB['issue opened']!;
    const b = GITHUB['issue reopened']!;
    expect((await postJson(hook, a.body, { ...a.headers, ...key })).status).toBe(200);
    expectError(await postJson(hook, b.body, { ...b.headers, ...key }), 409, 'conflict');
  });
});

describe('Salesforce Outbound Messages (SOAP)', () => {
  it('stores the notifications as one message and answers the SOAP Ack Salesforce expects', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'salesforce' });
    const c = SALESFORCE_OUTBOUND['one Opportunity notification (the WSDL\u2019s example shape)']!;
    const res = await postRaw(hook, c.xml, 'text/xml; charset=utf-8', { SOAPAction: '""' });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('text/xml; charset=utf-8');
    expect(res.body).toBe(EXPECTED_ACK);
    expect(await stored(roomId)).toMatchObject([{ markdown: c.markdown, metadata: c.metadata }]);
  });

  it('acknowledges a redelivery of the same notification ids without storing it again, even with newer field values', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'salesforce' });
    const first = outboundMessage(ACME);
    expect((await postRaw(hook, first, 'text/xml')).body).toBe(EXPECTED_ACK);
    const redelivered = await postRaw(hook, first.replace('Prospecting', 'Closed Won'), 'text/xml');
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toBe(EXPECTED_ACK);
    expect(redelivered.headers.get('Idempotent-Replayed')).toBe('true');
    const other = outboundMessage(ACME.replace('04l000000000001AAA', '04l000000000009AAA'));
    expect((await postRaw(hook, other, 'text/xml')).headers.get('Idempotent-Replayed')).toBeNull();
    expect((await stored(roomId)).map((m) => m.markdown.split('\n').at(-1))).toEqual([
      '- **StageName**: Prospecting',
      '- **StageName**: Prospecting',
    ]);
  });

  it('refuses hostile XML (DOCTYPE, entities) with 400 and stores nothing', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'salesforce' });
    const bomb = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;">]><lolz>&lol1;</lolz>';
    const res = await postRaw(hook, bomb, 'text/xml');
    expectError(res, 400, 'invalid.value', 'body');
    expect(res.body.message).toMatch(/^Not a Salesforce Outbound Message: A DOCTYPE is not allowed/);
    expectError(await postRaw(hook, outboundMessage(ACME.replace('Prospecting', '&xxe;')), 'text/xml'), 400, 'invalid.value');
    expect(await stored(roomId)).toEqual([]);
  });
});

describe('content types of native payloads', () => {
  it('answers a type the webhook\u2019s kind does not take with 415 naming the ones it does', async () => {
    const github = await roomWithWebhook({ kind: 'github' });
    const xml = await postRaw(github.hook, '<a/>', 'text/xml');
    expectError(xml, 415, 'unsupported.media.type');
    expect(xml.body.message).toBe("Unsupported Content-Type 'text/xml'; send application/json or application/x-www-form-urlencoded.");
    const jenkins = await roomWithWebhook({ kind: 'jenkins' });
    const form = await postRaw(jenkins.hook, 'payload=%7B%7D', 'application/x-www-form-urlencoded');
    expect(form.body.message).toBe("Unsupported Content-Type 'application/x-www-form-urlencoded'; send application/json.");
    expectError(await postRaw(github.hook, '{}', 'text/plain'), 415, 'unsupported.media.type');
  });

  it('gives an unknown id the same 415 as a generic webhook, so XML and forms reveal nothing about ids', async () => {
    const generic = await roomWithWebhook();
    for (const type of ['text/xml', 'application/x-www-form-urlencoded']) {
      const known = await postRaw(generic.hook, '<a/>', type);
      const unknown = await postRaw(crypto.randomUUID(), '<a/>', type);
      expectError(known, 415, 'unsupported.media.type');
      expect({ ...unknown.body, contextId: 'x' }).toEqual({ ...known.body, contextId: 'x' });
      expect(known.body.message).toBe(`Unsupported Content-Type '${type}'; send application/json.`);
    }
  });
});
