/// <reference types="vite/client" />
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_KINDS } from '../../src/chat/limits';
import type { ChatMessage, MessageLevel } from '../../src/chat/protocol';
import { expectError, send, type Sent } from '../helpers';
import { createRoom, createWebhook, history, post, type PostTarget, roomWithWebhook, unique, Viewer, webhookPath } from './helpers';
import GH_CHECK_RUN from '../fixtures/shared/native-payloads/github/octokit-webhooks__check_run__completed.payload.json?raw';
import GH_CHECK_SUITE from '../fixtures/shared/native-payloads/github/octokit-webhooks__check_suite__completed.payload.json?raw';
import GH_PUSH from '../fixtures/shared/native-payloads/github/octokit-webhooks__push__payload.json?raw';
import GH_STATUS_FAILURE from '../fixtures/shared/native-payloads/github/idobata-idobata-hooks__status_failure.json?raw';
import GH_WORKFLOW_RUN from '../fixtures/shared/native-payloads/github/octokit-webhooks__workflow_run__completed.payload.json?raw';
import BB_COMMIT_STATUS from '../fixtures/shared/native-payloads/bitbucket/go-playground-webhooks__repo-commit-status-updated.json?raw';
import JENKINS_COMPLETED from '../fixtures/shared/native-payloads/jenkins/1syo-hubot-jenkins-integration__completed.json?raw';
import JENKINS_STARTED from '../fixtures/shared/native-payloads/jenkins/1syo-hubot-jenkins-integration__started.json?raw';
import JIRA_CREATED from '../fixtures/shared/native-payloads/jira/mattermost-mattermost-plugin-jira__webhook-issue-created.json?raw';
import JIRA_COMMENT from '../fixtures/shared/native-payloads/jira/mattermost-mattermost-plugin-jira__webhook-cloud-comment-created.json?raw';
import JIRA_CLOSED from '../fixtures/shared/native-payloads/jira/mattermost-mattermost-plugin-jira__webhook-server-issue-updated-closed.json?raw';
import ALERTMANAGER from '../fixtures/shared/slack-format/alertmanager__zulip__zulip__zerver__webhooks__slack_incoming__fixtures__attachment.json?raw';
import GATUS_MATTERMOST_DOWN from '../fixtures/shared/slack-format/gatus__TwiN__gatus__alerting__provider__mattermost__mattermost_test.go__L154.json?raw';
import GATUS_SLACK_UP from '../fixtures/shared/slack-format/gatus__TwiN__gatus__alerting__provider__slack__slack_test.go__L182.json?raw';
import GRAFANA from '../fixtures/shared/slack-format/grafana__grafana__grafana__pkg__tests__api__alerting__api_notification_channel_test.go__L153.json?raw';
import MATTERMOST_DOC from '../fixtures/shared/slack-format/mattermost__mattermost__mattermost-developer-documentation__site__content__integrate__webhooks__incoming___index.md__L96.json?raw';
import ZULIP_FIELDS from '../fixtures/shared/slack-format/zulip__zulip__zulip__zerver__webhooks__slack_incoming__fixtures__attachment_fields.json?raw';
import ZULIP_TEXT from '../fixtures/shared/slack-format/zulip__zulip__zulip__zerver__webhooks__slack_incoming__fixtures__text.json?raw';

/**
 * Issue 25, items 1 and 3: every message carries its sender (the webhook's name and icon, or the
 * post's own where the webhook allows overrides) and its level (from our body, or derived from a
 * tool's payload), stored in D1, in live frames, in replays and in history.
 */

const ICON = 'https://icons.example/ci.png';

function postRaw(target: PostTarget, body: string, contentType: string, headers: Record<string, string> = {}): Promise<Sent> {
  return send('POST', webhookPath(target), { token: null, body, headers: { 'Content-Type': contentType, ...headers } });
}

async function entities(roomId: string): Promise<ChatMessage[]> {
  const res = await history(roomId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.entities;
}

/** The message's row in D1, as the room flushed it (history flushes first). */
async function row(messageId: string): Promise<Record<string, unknown> | null> {
  return env.DB.prepare('SELECT sender_name, sender_icon_url, level FROM messages WHERE id = ?').bind(messageId).first();
}

async function postedOne(target: PostTarget, body: unknown, headers: Record<string, string> = {}): Promise<{ messageId: string }> {
  const res = await post(target, body, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.deliveries[0];
}

describe('sender identity', () => {
  it.each(WEBHOOK_KINDS)('a %s webhook signs its messages with its name and its kind’s icon by default', async (kind) => {
    const room = await createRoom();
    const hook = await createWebhook({ roomId: room.id, kind });
    expect(hook).toMatchObject({ avatarUrl: null, allowOverrides: false });
    const { messageId } = await postedOne(hook, { message: 'hello' });
    const [message] = await entities(room.id);
    expect(message).toMatchObject({ id: messageId, sender: { name: hook.name, iconUrl: `/assets/chat/icons/${kind}.svg` }, level: 'info' });
    expect(await row(messageId)).toEqual({ sender_name: hook.name, sender_icon_url: `/assets/chat/icons/${kind}.svg`, level: 'info' });
  });

  it('uses the webhook’s avatarUrl, set on create and changed by PATCH; earlier messages keep the sender they were posted with', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'Prod alerts', avatarUrl: ICON });
    expect(hook).toMatchObject({ avatarUrl: ICON });
    await postedOne(hook, { message: 'one' });

    const renamed = await send('PATCH', `/api/v1/webhooks/${hook.id}`, {
      json: { name: 'Alerts', avatarUrl: 'https://icons.example/b.png' },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Alerts', avatarUrl: 'https://icons.example/b.png' });
    await postedOne(hook, { message: 'two' });

    const cleared = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { avatarUrl: null } });
    expect(cleared.body).toMatchObject({ avatarUrl: null });
    await postedOne(hook, { message: 'three' });

    expect((await entities(roomId)).map((m) => m.sender)).toEqual([
      { name: 'Prod alerts', iconUrl: ICON },
      { name: 'Alerts', iconUrl: 'https://icons.example/b.png' },
      { name: 'Alerts', iconUrl: '/assets/chat/icons/generic.svg' },
    ]);
    expect((await send('GET', `/api/v1/webhooks/${hook.id}`)).body).toMatchObject({ avatarUrl: null, allowOverrides: false });
  });

  it('refuses an avatarUrl that is not an https URL within the limit, naming the field, and changes nothing', async () => {
    const room = await createRoom();
    const bad = [
      'http://icons.example/a.png',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      '/assets/chat/icons/generic.svg',
      'https://icons.example/a b.png',
      'https://user:pw@icons.example/a.png',
      `https://icons.example/${'a'.repeat(2_048)}`,
      '',
      42,
    ];
    for (const avatarUrl of bad) {
      const res = await send('POST', '/api/v1/webhooks', { json: { name: unique('hook'), kind: 'generic', roomId: room.id, avatarUrl } });
      expectError(res, 400, 'invalid.value', 'avatarUrl');
    }
    const hook = await createWebhook({ roomId: room.id });
    for (const avatarUrl of bad) {
      expectError(await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { avatarUrl } }), 400, 'invalid.value', 'avatarUrl');
    }
    expectError(
      await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { allowOverrides: 'yes' } }),
      400,
      'invalid.value',
      'allowOverrides',
    );
    expect((await send('GET', `/api/v1/webhooks/${hook.id}`)).body).toMatchObject({ avatarUrl: null, allowOverrides: false });
    expect((await send('GET', '/api/v1/webhooks')).body.entities.filter((w: { roomId: string }) => w.roomId === room.id)).toHaveLength(1);
  });

  it('ignores a post’s own username and icon when the webhook does not allow overrides, even ones it would refuse', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'CI' });
    await postedOne(hook, { message: 'a', username: 'Someone else', iconUrl: 'https://evil.example/x.png' });
    await postedOne(hook, { message: 'b', username: 'x'.repeat(500), iconUrl: 'javascript:alert(1)' });
    const slack = await createWebhook({ roomId, kind: 'slack', name: 'Grafana' });
    expect((await postRaw(slack, GRAFANA, 'application/json')).status).toBe(200);
    expect((await entities(roomId)).map((m) => m.sender)).toEqual([
      { name: 'CI', iconUrl: '/assets/chat/icons/generic.svg' },
      { name: 'CI', iconUrl: '/assets/chat/icons/generic.svg' },
      { name: 'Grafana', iconUrl: '/assets/chat/icons/slack.svg' },
    ]);
  });

  it('takes our body’s username and iconUrl where allowed: trimmed; a blank or null one leaves the webhook’s', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'CI', avatarUrl: ICON, allowOverrides: true });
    await postedOne(hook, { message: 'a', username: '  Deploy bot  ', iconUrl: ' https://icons.example/deploy.png ' });
    await postedOne(hook, { message: 'b', username: 'Nightly' });
    await postedOne(hook, { message: 'c', iconUrl: 'https://icons.example/n.png' });
    await postedOne(hook, { message: 'd', username: '   ', iconUrl: null });
    await postedOne(hook, { message: 'e', username: '🚀 Release 🚀' });
    expect((await entities(roomId)).map((m) => m.sender)).toEqual([
      { name: 'Deploy bot', iconUrl: 'https://icons.example/deploy.png' },
      { name: 'Nightly', iconUrl: ICON },
      { name: 'CI', iconUrl: 'https://icons.example/n.png' },
      { name: 'CI', iconUrl: ICON },
      { name: '🚀 Release 🚀', iconUrl: ICON },
    ]);
  });

  it('takes Slack’s and Mattermost’s username / icon_url (JSON and payload= form) and Discord’s username / avatar_url', async () => {
    const room = await createRoom();
    const slack = await createWebhook({ roomId: room.id, kind: 'slack', allowOverrides: true });
    const discord = await createWebhook({ roomId: room.id, kind: 'discord', allowOverrides: true });
    const generic = await createWebhook({ roomId: room.id, kind: 'generic', allowOverrides: true });

    // Real bodies: Grafana's (Slack), Mattermost's documented one, Gatus' for Mattermost.
    expect((await postRaw(slack, GRAFANA, 'application/json')).status).toBe(200);
    expect((await postRaw(slack, MATTERMOST_DOC, 'application/json')).status).toBe(200);
    expect((await postRaw(slack, GATUS_MATTERMOST_DOWN, 'application/json')).status).toBe(200);
    const form = new URLSearchParams({ payload: JSON.stringify({ text: 'deployed', username: 'slackistrano', icon_url: ICON }) });
    expect((await postRaw(slack, form.toString(), 'application/x-www-form-urlencoded')).status).toBe(200);
    const discordBody = { content: 'Build **failed**', username: 'GitHub Actions', avatar_url: 'https://icons.example/gh.png' };
    expect((await post(discord, discordBody)).status).toBe(200);
    // A Slack body sent to a discord webhook is Slack's: its spelling counts.
    expect(
      (await post(discord, { text: 'via /slack', username: 'Slack-ish', icon_url: ICON, avatar_url: 'https://icons.example/no.png' }))
        .status,
    ).toBe(200);
    // Bodies a generic webhook reads as Slack's or Discord's.
    expect((await post(generic, { text: 'slack on generic', username: 'S', icon_url: ICON })).status).toBe(200);
    expect((await post(generic, { content: 'discord on generic', username: 'D', avatar_url: ICON })).status).toBe(200);
    // Discord's multipart form.
    const multipart = new FormData();
    multipart.append('payload_json', JSON.stringify({ content: 'report', username: 'reporter', avatar_url: ICON }));
    const req = new Request('http://x/', { method: 'POST', body: multipart });
    expect((await postRaw(discord, await req.text(), req.headers.get('Content-Type')!)).status).toBe(200);

    expect((await entities(room.id)).map((m) => m.sender)).toEqual([
      { name: 'Integration Test', iconUrl: 'https://awesomeemoji.com/rocket' },
      { name: 'test-automation', iconUrl: 'https://mattermost.com/wp-content/uploads/2022/02/icon.png' },
      { name: 'gatus', iconUrl: 'https://raw.githubusercontent.com/TwiN/gatus/master/.github/assets/logo.png' },
      { name: 'slackistrano', iconUrl: ICON },
      { name: 'GitHub Actions', iconUrl: 'https://icons.example/gh.png' },
      { name: 'Slack-ish', iconUrl: ICON },
      { name: 'S', iconUrl: ICON },
      { name: 'D', iconUrl: ICON },
      { name: 'reporter', iconUrl: ICON },
    ]);
  });

  it('answers a bad override with 400 naming the field as the sender spelled it, and stores nothing', async () => {
    const room = await createRoom();
    const generic = await createWebhook({ roomId: room.id, kind: 'generic', allowOverrides: true });
    const slack = await createWebhook({ roomId: room.id, kind: 'slack', allowOverrides: true });
    const discord = await createWebhook({ roomId: room.id, kind: 'discord', allowOverrides: true });
    const cases: Array<[PostTarget, unknown, string]> = [
      [generic, { message: 'm', username: 'x'.repeat(81) }, 'username'],
      [generic, { message: 'm', username: 'bell\u0007' }, 'username'],
      [generic, { message: 'm', username: 'admin\u202egnp.exe' }, 'username'],
      [generic, { message: 'm', username: 'zero\u200bwidth' }, 'username'],
      [generic, { message: 'm', username: 'two\nlines' }, 'username'],
      [generic, { message: 'm', username: 42 }, 'username'],
      [generic, { message: 'm', iconUrl: 'http://icons.example/a.png' }, 'iconUrl'],
      [generic, { message: 'm', iconUrl: 'javascript:alert(1)' }, 'iconUrl'],
      [generic, { message: 'm', iconUrl: `https://icons.example/${'a'.repeat(2_048)}` }, 'iconUrl'],
      [generic, { message: 'm', iconUrl: ['https://icons.example/a.png'] }, 'iconUrl'],
      [slack, { text: 't', username: 'x'.repeat(81) }, 'username'],
      [slack, { text: 't', icon_url: 'data:image/png;base64,AAAA' }, 'icon_url'],
      [slack, { text: 't', props: { card: 'c' }, icon_url: 'ftp://icons.example/a.png' }, 'icon_url'],
      [discord, { content: 'c', avatar_url: 'http://icons.example/a.png' }, 'avatar_url'],
      [discord, { content: 'c', username: '\u0000' }, 'username'],
    ];
    for (const [target, body, field] of cases) {
      const res = await post(target, body);
      expectError(res, 400, 'invalid.value', field);
      expect(res.body.message).toContain(field);
    }
    expect(await entities(room.id)).toEqual([]);
  });

  it('accepts a username of exactly 80 characters (code points)', async () => {
    const { roomId, hook } = await roomWithWebhook({ allowOverrides: true });
    await postedOne(hook, { message: 'm', username: '😀'.repeat(80) });
    expect((await entities(roomId))[0]!.sender.name).toBe('😀'.repeat(80));
  });
});

describe('level', () => {
  it('takes level from our body (info when absent or null) and refuses any other value, storing nothing', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const levels: MessageLevel[] = ['info', 'success', 'warning', 'critical'];
    for (const level of levels) await postedOne(hook, { message: level, level });
    await postedOne(hook, { message: 'none' });
    await postedOne(hook, { message: 'null', level: null });
    for (const level of ['error', 'CRITICAL', 3, '', { level: 'info' }]) {
      expectError(await post(hook, { message: 'bad', level }), 400, 'invalid.value', 'level');
    }
    expect((await entities(roomId)).map((m) => [m.markdown, m.level])).toEqual([
      ['info', 'info'],
      ['success', 'success'],
      ['warning', 'warning'],
      ['critical', 'critical'],
      ['none', 'info'],
      ['null', 'info'],
    ]);
  });

  // Expected levels worked out by hand from each payload (docs/integrations.md, "Levels").
  const NATIVE: Array<[string, string, string, Record<string, string>, MessageLevel]> = [
    ['github', 'workflow_run completed, conclusion success', GH_WORKFLOW_RUN, { 'X-GitHub-Event': 'workflow_run' }, 'success'],
    ['github', 'check_run completed, conclusion success', GH_CHECK_RUN, { 'X-GitHub-Event': 'check_run' }, 'success'],
    ['github', 'check_suite completed, conclusion success', GH_CHECK_SUITE, { 'X-GitHub-Event': 'check_suite' }, 'success'],
    ['github', 'a commit status failure', GH_STATUS_FAILURE, { 'X-GitHub-Event': 'status' }, 'critical'],
    ['github', 'a push', GH_PUSH, { 'X-GitHub-Event': 'push' }, 'info'],
    ['bitbucket', 'a build SUCCESSFUL', BB_COMMIT_STATUS, { 'X-Event-Key': 'repo:commit_status_updated' }, 'success'],
    ['jenkins', 'a build COMPLETED with SUCCESS', JENKINS_COMPLETED, {}, 'success'],
    ['jenkins', 'a build STARTED', JENKINS_STARTED, {}, 'info'],
    ['jira', 'an issue created with priority High', JIRA_CREATED, {}, 'warning'],
    ['jira', 'an issue closed, priority Medium', JIRA_CLOSED, {}, 'info'],
    ['jira', 'a comment on a High issue (comments do not take the issue’s priority)', JIRA_COMMENT, {}, 'info'],
    ['slack', 'Alertmanager: attachment colour danger', ALERTMANAGER, {}, 'critical'],
    ['slack', 'Grafana: attachment colour #D63232 (red)', GRAFANA, {}, 'critical'],
    ['slack', 'Gatus for Mattermost: #DD0000 (red)', GATUS_MATTERMOST_DOWN, {}, 'critical'],
    ['slack', 'Gatus resolved: #36A64F (green)', GATUS_SLACK_UP, {}, 'success'],
    ['slack', 'Zulip’s attachment fields: colour good', ZULIP_FIELDS, {}, 'success'],
    ['slack', 'plain text, no colour', ZULIP_TEXT, {}, 'info'],
  ];

  it.each(NATIVE)('a %s webhook derives the level of %s', async (kind, _, body, headers, level) => {
    const { roomId, hook } = await roomWithWebhook({ kind });
    const res = await postRaw(hook, body, 'application/json', headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [message] = await entities(roomId);
    expect(message!.level).toBe(level);
    expect(await row(message!.id)).toMatchObject({ level });
  });

  it('derives critical from failed builds and a P1 issue, warning from an unstable build (real payloads, result changed here)', async () => {
    const cases: Array<[string, unknown, Record<string, string>, MessageLevel]> = [];
    const run = JSON.parse(GH_WORKFLOW_RUN);
    for (const [conclusion, level] of [
      ['failure', 'critical'],
      ['timed_out', 'critical'],
      ['action_required', 'warning'],
      ['cancelled', 'info'],
    ] as const) {
      cases.push(['github', { ...run, workflow_run: { ...run.workflow_run, conclusion } }, { 'X-GitHub-Event': 'workflow_run' }, level]);
    }
    const suite = JSON.parse(GH_CHECK_SUITE);
    cases.push([
      'github',
      { ...suite, check_suite: { ...suite.check_suite, conclusion: 'failure' } },
      { 'X-GitHub-Event': 'check_suite' },
      'critical',
    ]);
    const check = JSON.parse(GH_CHECK_RUN);
    cases.push([
      'github',
      { ...check, check_run: { ...check.check_run, conclusion: 'timed_out' } },
      { 'X-GitHub-Event': 'check_run' },
      'critical',
    ]);
    const jenkins = JSON.parse(JENKINS_COMPLETED);
    cases.push(['jenkins', { ...jenkins, build: { ...jenkins.build, status: 'FAILURE' } }, {}, 'critical']);
    cases.push(['jenkins', { ...jenkins, build: { ...jenkins.build, status: 'UNSTABLE' } }, {}, 'warning']);
    const bb = JSON.parse(BB_COMMIT_STATUS);
    cases.push([
      'bitbucket',
      { ...bb, commit_status: { ...bb.commit_status, state: 'FAILED' } },
      { 'X-Event-Key': 'repo:commit_status_updated' },
      'critical',
    ]);
    cases.push([
      'bitbucket',
      { ...bb, commit_status: { ...bb.commit_status, state: 'INPROGRESS' } },
      { 'X-Event-Key': 'repo:commit_status_created' },
      'info',
    ]);
    const jira = JSON.parse(JIRA_CREATED);
    for (const [priority, level] of [
      ['Highest', 'critical'],
      ['Blocker', 'critical'],
      ['P1', 'critical'],
      ['P2', 'warning'],
      ['Low', 'info'],
    ] as const) {
      cases.push([
        'jira',
        { ...jira, issue: { ...jira.issue, fields: { ...jira.issue.fields, priority: { name: priority } } } },
        {},
        level,
      ]);
    }
    for (const [kind, body, headers, level] of cases) {
      const { roomId, hook } = await roomWithWebhook({ kind });
      const res = await postRaw(hook, JSON.stringify(body), 'application/json', headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await entities(roomId))[0]!.level, `${kind} ${JSON.stringify(headers)} → ${level}`).toBe(level);
    }
  });

  it('reads Slack and Discord colours (named and hex) and Mattermost’s priority; the most urgent one counts', async () => {
    const cases: Array<[string, unknown, MessageLevel]> = [
      ['slack', { attachments: [{ text: 'a', color: 'warning' }] }, 'warning'],
      ['slack', { attachments: [{ text: 'a', color: '#f2c744' }] }, 'warning'],
      [
        'slack',
        {
          attachments: [
            { text: 'a', color: 'good' },
            { text: 'b', color: 'danger' },
          ],
        },
        'critical',
      ],
      ['slack', { attachments: [{ text: 'a', color: '#439FE0' }] }, 'info'],
      ['slack', { text: 'deploy', priority: { priority: 'urgent' } }, 'critical'],
      ['slack', { text: 'deploy', priority: { priority: 'important' }, attachments: [{ text: 'ok', color: 'good' }] }, 'warning'],
      ['discord', { embeds: [{ description: 'down', color: 0xdd0000 }] }, 'critical'],
      ['discord', { embeds: [{ description: 'up', color: 0x36a64f }] }, 'success'],
      ['discord', { embeds: [{ description: 'slow', color: 0xffcc00 }] }, 'warning'],
    ];
    for (const [kind, body, level] of cases) {
      const { roomId, hook } = await roomWithWebhook({ kind });
      expect((await post(hook, body)).status).toBe(200);
      expect((await entities(roomId))[0]!.level, JSON.stringify(body)).toBe(level);
    }
  });
});

describe('sender and level travel with the message', () => {
  it('live frames, a replay and history carry the same sender and level', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'Deploys', allowOverrides: true });
    const live = await Viewer.open(roomId);
    await live.ready();
    await postedOne(hook, { message: 'shipped', level: 'success', username: 'Release train', iconUrl: ICON });
    await postedOne(hook, { message: 'rollback', level: 'critical' });
    await live.untilSeq(2);
    const replay = await Viewer.open(roomId, { query: '?after=0' });
    await replay.ready();
    const fromHistory = await entities(roomId);
    const expected = [
      { seq: 1, sender: { name: 'Release train', iconUrl: ICON }, level: 'success' },
      { seq: 2, sender: { name: 'Deploys', iconUrl: '/assets/chat/icons/generic.svg' }, level: 'critical' },
    ];
    for (const messages of [live.messages, replay.messages, fromHistory]) {
      expect(messages.map(({ seq, sender, level }) => ({ seq, sender, level }))).toEqual(expected);
    }
    expect(fromHistory).toEqual(live.messages);
    live.close();
    replay.close();
  });

  it('a multi-room post carries one sender and level into every room', async () => {
    const a = await createRoom();
    const b = await createRoom();
    const hook = await createWebhook({
      roomId: a.id,
      name: 'Fan-out',
      mappings: [{ field: 'metadata', match: 'exact', value: 'both', roomIds: [a.id, b.id] }],
      rateLimit: { burst: 1_000, perSecond: 1_000 },
    });
    const res = await post(hook, { message: 'everywhere', metadata: 'both', level: 'warning' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const roomId of [a.id, b.id]) {
      expect(await entities(roomId)).toMatchObject([
        { sender: { name: 'Fan-out', iconUrl: '/assets/chat/icons/generic.svg' }, level: 'warning' },
      ]);
    }
  });

  it('a retried keyed post answers the first answer, and the one message keeps its sender and level, even after a rename', async () => {
    const { roomId, hook } = await roomWithWebhook({ name: 'CI', allowOverrides: true });
    const body = { message: 'build 7 failed', level: 'critical', username: 'Nightly' };
    const first = await post(hook, body, { 'Idempotency-Key': 'build-7' });
    expect(first.status).toBe(200);
    await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { name: 'CI renamed', avatarUrl: ICON } });
    const again = await post(hook, body, { 'Idempotency-Key': 'build-7' });
    expect(again.status).toBe(200);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // The same key for another level or another sender is another message: refused.
    expectError(await post(hook, { ...body, level: 'warning' }, { 'Idempotency-Key': 'build-7' }), 409, 'conflict');
    expectError(await post(hook, { ...body, username: 'Other' }, { 'Idempotency-Key': 'build-7' }), 409, 'conflict');
    const stored = await entities(roomId);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      id: first.body.deliveries[0].messageId,
      sender: { name: 'Nightly', iconUrl: '/assets/chat/icons/generic.svg' },
      level: 'critical',
    });
  });

  it('a key used before sender and level existed keeps its fingerprint: a plain repeat is still the same post', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const first = await post(hook, { message: 'plain', metadata: 'ci' }, { 'Idempotency-Key': 'plain-1' });
    const again = await post(hook, { message: 'plain', metadata: 'ci', level: 'info' }, { 'Idempotency-Key': 'plain-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await entities(roomId)).toHaveLength(1);
  });
});
