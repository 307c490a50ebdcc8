import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { renderMarkdown } from '../../../src/chat/markdown';
import { GH_REPO_URL, GITHUB, GITHUB_IGNORED, ghCommit, ghPullRequest, ghPush, ghRepository, ghSender, shown } from './fixtures';
import { nativePost } from './support';
import type { MessageLevel } from '../../../src/chat/protocol';
import CHECK_RUN from '../../fixtures/shared/native-payloads/github/octokit-webhooks__check_run__completed.payload.json';
import DEPLOYMENT_STATUS from '../../fixtures/shared/native-payloads/github/octokit-webhooks__deployment_status__payload.json';
import FORK from '../../fixtures/shared/native-payloads/github/octokit-webhooks__fork__payload.json';
import PR_LABELED from '../../fixtures/shared/native-payloads/github/octokit-webhooks__pull_request__labeled.payload.json';
import PR_SYNCHRONIZE from '../../fixtures/shared/native-payloads/github/octokit-webhooks__pull_request__synchronize.payload.json';
import REVIEW_COMMENT from '../../fixtures/shared/native-payloads/github/octokit-webhooks__pull_request_review_comment__created.payload.json';
import STATUS from '../../fixtures/shared/native-payloads/github/octokit-webhooks__status__payload.json';
import WORKFLOW_RUN from '../../fixtures/shared/native-payloads/github/octokit-webhooks__workflow_run__completed.payload.json';
import PR_FROM_FORK from '../../fixtures/shared/native-payloads/github/ailisp-reallyfastci__webhook-pr-from-fork.json';
import OLD_PUSH from '../../fixtures/shared/native-payloads/github/idobata-idobata-hooks__branch_deleted_as_push.json';
import OLD_COMMIT_COMMENT from '../../fixtures/shared/native-payloads/github/idobata-idobata-hooks__commit_comment.json';
import GOLLUM from '../../fixtures/shared/native-payloads/github/idobata-idobata-hooks__gollum.json';
import OLD_REVIEW_COMMENT from '../../fixtures/shared/native-payloads/github/idobata-idobata-hooks__pull_request_review_comment.json';
import STATUS_FAILURE from '../../fixtures/shared/native-payloads/github/idobata-idobata-hooks__status_failure.json';

describe('GitHub payloads', () => {
  it.each(Object.entries(GITHUB))('turns %s into its message and metadata', (_, c) => {
    expect(translate('github', nativePost(c.body, c.headers))).toEqual(shown(c));
  });

  it.each(Object.entries(GITHUB_IGNORED))('recognises %s and says why it is not shown', (_, c) => {
    expect(translate('github', nativePost(c.body, c.headers))).toEqual({ kind: 'ignored', reason: c.reason });
  });

  it('reads the JSON in the payload field of a form-encoded delivery', () => {
    const c = GITHUB['push of two commits to a branch']!;
    const form = new URLSearchParams({ payload: JSON.stringify(c.body) }).toString();
    expect(translate('github', nativePost(form, c.headers, 'application/x-www-form-urlencoded'))).toEqual({
      kind: 'message',
      markdown: c.markdown,
      metadata: c.metadata,
    });
  });

  it('lists ten commits of a large push and counts the rest', () => {
    const commits = Array.from({ length: 12 }, (_, i) => ghCommit(`${String(i).padStart(2, '0')}${'a'.repeat(38)}`, `Commit ${i}`));
    const result = translate('github', nativePost(ghPush({ commits, compare: null }), { 'X-GitHub-Event': 'push' }));
    expect(result).toMatchObject({ kind: 'message' });
    const lines = (result as { markdown: string }).markdown.split('\n');
    expect(lines[0]).toBe(`Codertocat pushed 12 commits to \`master\` in [Codertocat/Hello-World](${GH_REPO_URL}):`);
    expect(lines).toHaveLength(12);
    expect(lines[10]).toBe(`- [\`09aaaaa\`](${GH_REPO_URL}/commit/09${'a'.repeat(38)}) Commit 9`);
    expect(lines[11]).toBe('- \u2026 and 2 more commits');
  });

  it('keeps a hostile title, branch and body from forging links, images or formatting', () => {
    const body = {
      action: 'opened',
      number: 3,
      pull_request: ghPullRequest({
        number: 3,
        title: 'Fix](https://evil.example) ![x](https://evil.example/x.png) <img src=x onerror=alert(1)> **bold**',
        head: { ref: 'a`b` [c](javascript:alert(1))' },
        body: '[click me](javascript:alert(1))\n<script>alert(1)</script>\n![tracker](https://evil.example/t.png)',
        html_url: 'javascript:alert(1)',
      }),
      repository: ghRepository(),
      sender: { ...ghSender, login: '<b>mallory</b>' },
    };
    const result = translate('github', nativePost(body, { 'X-GitHub-Event': 'pull_request' }));
    expect(result).toEqual({
      kind: 'message',
      markdown:
        '\\<b>mallory\\</b> opened pull request #3 Fix\\](https\\://evil.example) !\\[x\\](https\\://evil.example/x.png) \\<img src=x onerror=alert(1)> \\*\\*bold\\*\\* ' +
        `in [Codertocat/Hello-World](${GH_REPO_URL}) (\`\`a\`b\` [c](javascript:alert(1))\`\` \u2192 \`master\`):\n\n` +
        '> \\[click me\\](javascript:alert(1))\n> \\<script>alert(1)\\</script>\n' +
        '> !\\[tracker\\]([https\\://evil.example/t.png](https://evil.example/t.png))',
      metadata: 'github:pull_request repo=Codertocat/Hello-World action=opened pr=3 branch=master',
    });
    const html = renderMarkdown((result as { markdown: string }).markdown);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<strong>');
    // The only links: the repository, and a URL written in the body, shown as itself.
    expect([...html.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((m) => [m[1], m[2]])).toEqual([
      [GH_REPO_URL, 'Codertocat/Hello-World'],
      ['https://evil.example/t.png', 'https://evil.example/t.png'],
    ]);
  });

  it('answers a delivery without X-GitHub-Event as unrecognised, naming the header', () => {
    expect(translate('github', nativePost(GITHUB['push of two commits to a branch']!.body))).toEqual({
      kind: 'unrecognised',
      expected: expect.stringContaining('X-GitHub-Event header'),
      fieldName: 'X-GitHub-Event',
    });
  });

  it('answers a payload that does not fit its event as unrecognised, naming the field', () => {
    expect(translate('github', nativePost({ ref: 'refs/heads/main' }, { 'X-GitHub-Event': 'push' }))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a GitHub webhook payload (push): repository: Invalid input: expected object, received undefined.',
      fieldName: 'body',
    });
    expect(translate('github', nativePost([1, 2], { 'X-GitHub-Event': 'issues' }))).toMatchObject({ kind: 'unrecognised' });
    expect(
      translate('github', nativePost('payload=%7Bnot-json', { 'X-GitHub-Event': 'push' }, 'application/x-www-form-urlencoded')),
    ).toEqual({
      kind: 'unrecognised',
      expected: 'The "payload" field of a GitHub delivery must be JSON.',
      fieldName: 'payload',
    });
    expect(translate('github', nativePost('other=1', { 'X-GitHub-Event': 'push' }, 'application/x-www-form-urlencoded'))).toMatchObject({
      kind: 'unrecognised',
      fieldName: 'payload',
    });
  });
});

/** What a translation must be: a message with exactly this markdown and metadata. */
function shows(event: string, body: unknown, markdown: string, metadata: string, level?: MessageLevel): void {
  expect(translate('github', nativePost(body, { 'X-GitHub-Event': event }))).toEqual(shown({ markdown, metadata, level }));
}

const repoMd = (r: { full_name: string; html_url: string }) => `[${r.full_name}](${r.html_url})`;
const prMd = (pr: { number: number; title: string; html_url: string }) => `[#${pr.number} ${pr.title}](${pr.html_url})`;

describe('GitHub payloads Zulip shows too (real payloads from octokit/webhooks and idobata-hooks)', () => {
  it('names a workflow run by its workflow when the run name is empty', () => {
    const run = WORKFLOW_RUN.workflow_run;
    expect(run.name).toBe('');
    shows(
      'workflow_run',
      WORKFLOW_RUN,
      `\u2705 Workflow [${WORKFLOW_RUN.workflow.name} #${run.run_number}](${run.html_url}) succeeded on \`${run.head_branch}\` in ${repoMd(WORKFLOW_RUN.repository)}.`,
      `github:workflow_run repo=${WORKFLOW_RUN.repository.full_name} action=completed workflow=${WORKFLOW_RUN.workflow.name} branch=${run.head_branch} conclusion=success`,
      'success',
    );
  });

  it('names the repository of a 2014-format push (no full_name) from its owner and name', () => {
    const repo = OLD_PUSH.repository;
    expect(repo).not.toHaveProperty('full_name');
    const fullName = `${repo.owner.name}/${repo.name}`;
    shows(
      'push',
      OLD_PUSH,
      `${OLD_PUSH.pusher.name} deleted branch \`${OLD_PUSH.ref.replace('refs/heads/', '')}\` in [${fullName}](${repo.url}).`,
      `github:push repo=${fullName} branch=${OLD_PUSH.ref.replace('refs/heads/', '')}`,
    );
    // owner.login works too; an API URL is not linked; without owner or name it is refused, naming the field.
    const byLogin = { ...OLD_PUSH, repository: { name: 'r', owner: { login: 'o' }, url: 'https://api.github.com/repos/o/r' } };
    expect(translate('github', nativePost(byLogin, { 'X-GitHub-Event': 'push' }))).toMatchObject({
      markdown: 'tricknotes deleted branch `hi` in o/r.',
    });
    expect(translate('github', nativePost({ ...OLD_PUSH, repository: { name: 'r' } }, { 'X-GitHub-Event': 'push' }))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a GitHub webhook payload (push): repository.full_name: expected full_name, or owner and name.',
      fieldName: 'body',
    });
  });

  it('shows a pull request synchronize (new commits pushed)', () => {
    const pr = PR_SYNCHRONIZE.pull_request;
    shows(
      'pull_request',
      PR_SYNCHRONIZE,
      `${PR_SYNCHRONIZE.sender.login} updated pull request ${prMd(pr)} in ${repoMd(PR_SYNCHRONIZE.repository)} (\`${pr.head.ref}\` \u2192 \`${pr.base.ref}\`).`,
      `github:pull_request repo=${PR_SYNCHRONIZE.repository.full_name} action=synchronize pr=${pr.number} branch=${pr.base.ref}`,
    );
  });

  it('names the branch of a pull request from a fork as owner:branch', () => {
    const pr = PR_FROM_FORK.pull_request;
    expect(pr.head.repo.full_name).not.toBe(PR_FROM_FORK.repository.full_name);
    shows(
      'pull_request',
      PR_FROM_FORK,
      `${PR_FROM_FORK.sender.login} updated pull request ${prMd(pr)} in ${repoMd(PR_FROM_FORK.repository)} (\`${pr.head.label}\` \u2192 \`${pr.base.ref}\`).`,
      `github:pull_request repo=${PR_FROM_FORK.repository.full_name} action=${PR_FROM_FORK.action} pr=${pr.number} branch=${pr.base.ref}`,
    );
  });

  it('shows a label added to or removed from a pull request', () => {
    const pr = PR_LABELED.pull_request;
    const tail = `pull request ${prMd(pr)} in ${repoMd(PR_LABELED.repository)}.`;
    const meta = (action: string) =>
      `github:pull_request repo=${PR_LABELED.repository.full_name} action=${action} pr=${pr.number} branch=${pr.base.ref} label=${PR_LABELED.label.name}`;
    shows(
      'pull_request',
      PR_LABELED,
      `${PR_LABELED.sender.login} added the label \`${PR_LABELED.label.name}\` to ${tail}`,
      meta('labeled'),
    );
    shows(
      'pull_request',
      { ...PR_LABELED, action: 'unlabeled' },
      `${PR_LABELED.sender.login} removed the label \`${PR_LABELED.label.name}\` from ${tail}`,
      meta('unlabeled'),
    );
  });

  it('shows a pull request assigned or unassigned', () => {
    const pr = PR_SYNCHRONIZE.pull_request;
    const assignee = { login: 'hubot', html_url: 'https://github.com/hubot' };
    const meta = (action: string) =>
      `github:pull_request repo=${PR_SYNCHRONIZE.repository.full_name} action=${action} pr=${pr.number} branch=${pr.base.ref} assignee=hubot`;
    const tail = `pull request ${prMd(pr)} in ${repoMd(PR_SYNCHRONIZE.repository)}.`;
    shows('pull_request', { ...PR_SYNCHRONIZE, action: 'assigned', assignee }, `Codertocat assigned hubot to ${tail}`, meta('assigned'));
    shows(
      'pull_request',
      { ...PR_SYNCHRONIZE, action: 'unassigned', assignee },
      `Codertocat unassigned hubot from ${tail}`,
      meta('unassigned'),
    );
    expect(translate('github', nativePost({ ...PR_SYNCHRONIZE, action: 'assigned' }, { 'X-GitHub-Event': 'pull_request' }))).toMatchObject({
      kind: 'unrecognised',
    });
  });

  it('shows an inline review comment with its file and text', () => {
    const c = REVIEW_COMMENT.comment;
    shows(
      'pull_request_review_comment',
      REVIEW_COMMENT,
      `${REVIEW_COMMENT.sender.login} [commented](${c.html_url}) on \`${c.path}\` in pull request ${prMd(REVIEW_COMMENT.pull_request)} in ${repoMd(REVIEW_COMMENT.repository)}:\n\n> ${c.body}`,
      `github:pull_request_review_comment repo=${REVIEW_COMMENT.repository.full_name} action=created pr=${REVIEW_COMMENT.pull_request.number}`,
    );
  });

  it('shows a 2013 inline review comment (no action, no pull_request) with the pull request its URL names', () => {
    const c = OLD_REVIEW_COMMENT.comment;
    const prUrl = c.html_url.replace(/#.*$/, '');
    const number = prUrl.split('/').at(-1);
    shows(
      'pull_request_review_comment',
      OLD_REVIEW_COMMENT,
      `${OLD_REVIEW_COMMENT.sender.login} [commented](${c.html_url}) on \`${c.path}\` in pull request [#${number}](${prUrl}) in ${repoMd(OLD_REVIEW_COMMENT.repository)}:\n\n> ${c.body.trim().replace(/:(?=\w+:)/g, '\\:')}`, // a shortcode's opening `:` is escaped: the comment's text as typed
      `github:pull_request_review_comment repo=${OLD_REVIEW_COMMENT.repository.full_name} action=created pr=${number}`,
    );
  });

  it('shows a commit comment, linked to the comment and the commit', () => {
    const c = OLD_COMMIT_COMMENT.comment;
    const repo = OLD_COMMIT_COMMENT.repository;
    const result = translate('github', nativePost(OLD_COMMIT_COMMENT, { 'X-GitHub-Event': 'commit_comment' }));
    expect(result).toMatchObject({
      kind: 'message',
      markdown: expect.stringMatching(
        new RegExp(
          `^${escapeRegExp(`${OLD_COMMIT_COMMENT.sender.login} [commented](${c.html_url}) on commit [\`${c.commit_id.slice(0, 7)}\`](${repo.html_url}/commit/${c.commit_id}) in ${repoMd(repo)}:\n\n> `)}`,
        ),
      ),
      metadata: `github:commit_comment repo=${repo.full_name} action=created commit=${c.commit_id.slice(0, 7)}`,
    });
    expect(renderMarkdown((result as { markdown: string }).markdown)).toContain(`<blockquote>\n<p>${c.body.split('\n')[0]}`);
  });

  it('shows a commit status, linked to its target, with its description', () => {
    const s = STATUS_FAILURE;
    shows(
      'status',
      s,
      `\u274c Status \`${s.context}\` [failed](${s.target_url}) for commit [\`${s.sha.slice(0, 7)}\`](${s.commit.html_url}) on \`${s.branches[0]!.name}\` in ${repoMd(s.repository)}: ${s.description}`,
      `github:status repo=${s.repository.full_name} state=failure context=${s.context} branch=${s.branches[0]!.name} commit=${s.sha.slice(0, 7)}`,
      'critical',
    );
    shows(
      'status',
      STATUS,
      `\u2705 Status \`${STATUS.context}\` succeeded for commit [\`${STATUS.sha.slice(0, 7)}\`](${STATUS.commit.html_url}) in ${repoMd(STATUS.repository)}.`,
      `github:status repo=${STATUS.repository.full_name} state=success context=${STATUS.context} commit=${STATUS.sha.slice(0, 7)}`,
      'success',
    );
  });

  it('shows a completed check run', () => {
    const run = CHECK_RUN.check_run;
    shows(
      'check_run',
      CHECK_RUN,
      `\u2705 Check [${run.name}](${run.html_url}) by ${run.app.name} succeeded on \`${run.check_suite.head_branch}\` (\`${run.head_sha.slice(0, 7)}\`) in ${repoMd(CHECK_RUN.repository)}.`,
      `github:check_run repo=${CHECK_RUN.repository.full_name} action=completed check=${run.name} app=${run.app.name} branch=${run.check_suite.head_branch} conclusion=success`,
      'success',
    );
  });

  it('shows a deployment status', () => {
    const d = DEPLOYMENT_STATUS.deployment;
    shows(
      'deployment_status',
      DEPLOYMENT_STATUS,
      `\u2705 Deployment of \`${d.ref}\` (\`${d.sha.slice(0, 7)}\`) to \`${d.environment}\` succeeded in ${repoMd(DEPLOYMENT_STATUS.repository)}.`,
      `github:deployment_status repo=${DEPLOYMENT_STATUS.repository.full_name} action=created environment=${d.environment} state=success ref=${d.ref}`,
      'success',
    );
    const failed = {
      ...DEPLOYMENT_STATUS,
      deployment_status: {
        ...DEPLOYMENT_STATUS.deployment_status,
        state: 'failure',
        log_url: 'https://ci.example/log/1',
        description: 'Timed out',
      },
    };
    expect(translate('github', nativePost(failed, { 'X-GitHub-Event': 'deployment_status' }))).toMatchObject({
      markdown: `\u274c Deployment of \`${d.ref}\` (\`${d.sha.slice(0, 7)}\`) to \`${d.environment}\` [failed](https://ci.example/log/1) in ${repoMd(DEPLOYMENT_STATUS.repository)}: Timed out`,
      level: 'critical',
    });
  });

  it('shows a fork', () => {
    shows(
      'fork',
      FORK,
      `${FORK.sender.login} forked ${repoMd(FORK.repository)} to ${repoMd(FORK.forkee)}.`,
      `github:fork repo=${FORK.repository.full_name} fork=${FORK.forkee.full_name}`,
    );
  });

  it('shows a wiki page edit (gollum)', () => {
    const page = GOLLUM.pages[0]!;
    shows(
      'gollum',
      GOLLUM,
      `${GOLLUM.sender.login} ${page.action} [${page.title}](${page.html_url}) in the wiki of ${repoMd(GOLLUM.repository)}.`,
      `github:gollum repo=${GOLLUM.repository.full_name}`,
    );
  });

  it('shows a collaborator added (member) and a team given access (team)', () => {
    const repository = ghRepository();
    shows(
      'member',
      { action: 'added', member: { login: 'octocat', html_url: 'https://github.com/octocat' }, repository, sender: ghSender },
      `Codertocat added [octocat](https://github.com/octocat) to [Codertocat/Hello-World](${GH_REPO_URL}).`,
      'github:member repo=Codertocat/Hello-World action=added member=octocat',
    );
    shows(
      'team',
      {
        action: 'added_to_repository',
        team: { name: 'Justice League', html_url: 'https://github.com/orgs/Octocoders/teams/justice-league' },
        organization: { login: 'Octocoders' },
        repository,
        sender: ghSender,
      },
      `Codertocat gave team [Justice League](https://github.com/orgs/Octocoders/teams/justice-league) access to [Codertocat/Hello-World](${GH_REPO_URL}).`,
      'github:team repo=Codertocat/Hello-World action=added_to_repository team=Justice%20League',
    );
  });

  it('keeps hostile labels, paths, contexts and comments as text', () => {
    const evil = '**x** [a](javascript:alert(1)) <img src=x onerror=alert(1)> ![t](https://evil.example/t.png)';
    const results = [
      translate('github', nativePost({ ...PR_LABELED, label: { name: evil } }, { 'X-GitHub-Event': 'pull_request' })),
      translate(
        'github',
        nativePost({ ...PR_SYNCHRONIZE, action: 'assigned', assignee: { login: evil } }, { 'X-GitHub-Event': 'pull_request' }),
      ),
      translate(
        'github',
        nativePost(
          { ...REVIEW_COMMENT, comment: { ...REVIEW_COMMENT.comment, path: evil, body: evil, html_url: 'javascript:alert(1)' } },
          { 'X-GitHub-Event': 'pull_request_review_comment' },
        ),
      ),
      translate(
        'github',
        nativePost(
          { ...STATUS_FAILURE, context: evil, description: evil, target_url: 'javascript:alert(1)' },
          { 'X-GitHub-Event': 'status' },
        ),
      ),
      translate(
        'github',
        nativePost({ ...CHECK_RUN, check_run: { ...CHECK_RUN.check_run, name: evil } }, { 'X-GitHub-Event': 'check_run' }),
      ),
      translate('github', nativePost({ ...GOLLUM, pages: [{ ...GOLLUM.pages[0], title: evil }] }, { 'X-GitHub-Event': 'gollum' })),
      translate(
        'github',
        nativePost(
          { ...OLD_COMMIT_COMMENT, comment: { ...OLD_COMMIT_COMMENT.comment, body: evil, path: evil } },
          { 'X-GitHub-Event': 'commit_comment' },
        ),
      ),
      translate(
        'github',
        nativePost(
          {
            ...DEPLOYMENT_STATUS,
            deployment: { ...DEPLOYMENT_STATUS.deployment, ref: evil, environment: evil },
            deployment_status: {
              ...DEPLOYMENT_STATUS.deployment_status,
              state: evil,
              description: evil,
              target_url: 'javascript:alert(1)',
            },
          },
          { 'X-GitHub-Event': 'deployment_status' },
        ),
      ),
      translate(
        'github',
        nativePost(
          { action: 'added', member: { login: evil }, repository: ghRepository(), sender: ghSender },
          { 'X-GitHub-Event': 'member' },
        ),
      ),
      translate(
        'github',
        nativePost(
          { action: 'created', team: { name: evil }, organization: { login: evil }, sender: ghSender },
          { 'X-GitHub-Event': 'team' },
        ),
      ),
    ];
    for (const result of results) {
      expect(result).toMatchObject({ kind: 'message' });
      const html = renderMarkdown((result as { markdown: string }).markdown);
      expect(html).not.toContain('<img');
      expect(html).not.toContain('<strong>');
      // Links: only the payload's http(s) URLs, and the bare URL in the text, shown as itself.
      for (const [, href, text] of html.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)) {
        expect(href).toMatch(/^https:\/\//);
        if (href!.includes('evil.example')) expect(text).toBe(href);
      }
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
