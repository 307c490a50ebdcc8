import type { MessageLevel } from '../../../src/chat/protocol';

/**
 * Native payloads, written from each tool's published samples and payload reference, each with the
 * message and metadata they must become, worked out by hand.
 *
 * - GitHub: the webhook payload examples of docs.github.com "Webhook events and payloads" (the
 *   Codertocat/Hello-World samples, also in octokit/webhooks payload-examples); trimmed of the URL
 *   fields nobody reads, kept otherwise as sent.
 * - Bitbucket Cloud: support.atlassian.com "Event payloads" (repo:push, pullrequest:*; the common
 *   Account, Repository, Pull request and Comment entities).
 * - Jira: developer.atlassian.com "Webhooks" (the jira:issue_updated example with its changelog) and
 *   the REST API issue/comment shapes the payloads embed.
 * - Jenkins: the Notification plugin's documented JSON (the "asgard" sample).
 * - Salesforce: the Outbound Messaging WSDL's notifications() message and its notificationsResponse.
 */

export interface Case {
  headers: Record<string, string>;
  body: unknown;
  markdown: string;
  metadata: string;
  /** The level the payload makes (decided by hand from it); none: info. */
  level?: MessageLevel;
}

/** The translation a shown case must give. */
export function shown(c: Pick<Case, 'markdown' | 'metadata' | 'level'>): Record<string, unknown> {
  return { kind: 'message', markdown: c.markdown, metadata: c.metadata, ...(c.level ? { level: c.level } : {}) };
}

// ---------------------------------------------------------------------------------------------
// GitHub
// ---------------------------------------------------------------------------------------------

export const GH_REPO_URL = 'https://github.com/Codertocat/Hello-World';
const REPO_MD = `[Codertocat/Hello-World](${GH_REPO_URL})`;

export function ghRepository(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 186853002,
    node_id: 'MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=',
    name: 'Hello-World',
    full_name: 'Codertocat/Hello-World',
    private: false,
    owner: { login: 'Codertocat', id: 21031067, type: 'User', html_url: 'https://github.com/Codertocat' },
    html_url: GH_REPO_URL,
    description: null,
    fork: false,
    url: 'https://api.github.com/repos/Codertocat/Hello-World',
    created_at: '2019-05-15T15:19:25Z',
    updated_at: '2019-05-15T15:21:03Z',
    pushed_at: '2019-05-15T15:20:57Z',
    stargazers_count: 0,
    watchers_count: 0,
    language: 'Ruby',
    default_branch: 'master',
    ...extra,
  };
}

export const ghSender = {
  login: 'Codertocat',
  id: 21031067,
  node_id: 'MDQ6VXNlcjIxMDMxMDY3',
  avatar_url: 'https://avatars1.githubusercontent.com/u/21031067?v=4',
  html_url: 'https://github.com/Codertocat',
  type: 'User',
  site_admin: false,
};

function gh(event: string): Record<string, string> {
  return { 'X-GitHub-Event': event, 'User-Agent': 'GitHub-Hookshot/044aadd' };
}

const C1 = '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c';
const C2 = '6113728f27ae82c7b1a177c8d03f9e96e0adf246';

export function ghCommit(id: string, message: string, username = 'Codertocat', name = 'Codertocat'): Record<string, unknown> {
  return {
    id,
    tree_id: 'f9d2a07e9488b91af2641b26b9407fe22a451433',
    distinct: true,
    message,
    timestamp: '2019-05-15T15:20:30-05:00',
    url: `${GH_REPO_URL}/commit/${id}`,
    author: { name, email: `${username}@users.noreply.github.com`, username },
    committer: { name, email: `${username}@users.noreply.github.com`, username },
    added: [],
    removed: [],
    modified: ['README.md'],
  };
}

export function ghPush(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    ref: 'refs/heads/master',
    before: '9049f1265b7d7fe2d3e7b6be44fd4bbc26a8a8a2',
    after: C1,
    created: false,
    deleted: false,
    forced: false,
    base_ref: null,
    compare: `${GH_REPO_URL}/compare/9049f1265b7d...0d1a26e67d8f`,
    commits: [],
    head_commit: null,
    repository: ghRepository(),
    pusher: { name: 'Codertocat', email: '21031067+Codertocat@users.noreply.github.com' },
    sender: ghSender,
    ...extra,
  };
}

const PR_TITLE = 'Update the README with new information.';
const PR_URL = `${GH_REPO_URL}/pull/2`;
const PR_MD = `[#2 Update the README with new information.](${PR_URL})`;

export function ghPullRequest(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2',
    id: 279147437,
    html_url: PR_URL,
    number: 2,
    state: 'open',
    locked: false,
    title: PR_TITLE,
    user: ghSender,
    body: 'This is a pretty simple change that we need to pull into master.',
    created_at: '2019-05-15T15:20:33Z',
    draft: false,
    merged: false,
    merged_by: null,
    head: { label: 'Codertocat:changes', ref: 'changes', sha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821' },
    base: { label: 'Codertocat:master', ref: 'master', sha: 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e' },
    ...extra,
  };
}

function prEvent(action: string, pr: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { action, number: 2, pull_request: ghPullRequest(pr), repository: ghRepository(), sender: ghSender, ...extra };
}

const ISSUE_URL = `${GH_REPO_URL}/issues/1`;
const ISSUE_MD = `[#1 Spelling error in the README file](${ISSUE_URL})`;

export function ghIssue(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    url: 'https://api.github.com/repos/Codertocat/Hello-World/issues/1',
    html_url: ISSUE_URL,
    id: 444500041,
    number: 1,
    title: 'Spelling error in the README file',
    user: ghSender,
    labels: [],
    state: 'open',
    comments: 0,
    body: "It looks like you accidently spelled 'commit' with two 't's.",
    ...extra,
  };
}

const sha7 = (sha: string) => sha.slice(0, 7);

export const GITHUB: Record<string, Case> = {
  'ping from a repository webhook': {
    headers: gh('ping'),
    body: {
      zen: 'Non-blocking is better than blocking.',
      hook_id: 109948940,
      hook: {
        type: 'Repository',
        id: 109948940,
        name: 'web',
        active: true,
        events: ['push', 'pull_request'],
        config: { content_type: 'json', insecure_ssl: '0', url: 'https://switchboard.example/webhooks/api/v1/webhook/x' },
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `GitHub webhook is set up for ${REPO_MD} (events: \`push\`, \`pull_request\`).`,
    metadata: 'github:ping repo=Codertocat/Hello-World',
  },
  'ping from an organization webhook for every event': {
    headers: gh('ping'),
    body: {
      zen: 'Design for failure.',
      hook_id: 1,
      hook: { type: 'Organization', id: 1, name: 'web', active: true, events: ['*'], config: { content_type: 'form' } },
      organization: { login: 'Octocoders', id: 38302899, url: 'https://api.github.com/orgs/Octocoders' },
      sender: ghSender,
    },
    markdown: 'GitHub webhook is set up for organization Octocoders (all events).',
    metadata: 'github:ping org=Octocoders',
  },
  'push of two commits to a branch': {
    headers: gh('push'),
    body: ghPush({
      commits: [ghCommit(C1, 'Update README.md'), ghCommit(C2, 'Fix the *build* on [main]\n\nLonger description.', 'octocat', 'Mona Lisa')],
      head_commit: ghCommit(C2, 'Fix the *build* on [main]\n\nLonger description.', 'octocat', 'Mona Lisa'),
    }),
    markdown:
      `Codertocat pushed 2 commits to \`master\` in ${REPO_MD} ([compare](${GH_REPO_URL}/compare/9049f1265b7d...0d1a26e67d8f)):\n` +
      `- [\`${sha7(C1)}\`](${GH_REPO_URL}/commit/${C1}) Update README.md\n` +
      `- [\`${sha7(C2)}\`](${GH_REPO_URL}/commit/${C2}) Fix the \\*build\\* on \\[main\\] (octocat)`,
    metadata: 'github:push repo=Codertocat/Hello-World branch=master',
  },
  'force push': {
    headers: gh('push'),
    body: ghPush({ forced: true, commits: [ghCommit(C1, 'Rewrite history')] }),
    markdown:
      `Codertocat force-pushed 1 commit to \`master\` in ${REPO_MD} ([compare](${GH_REPO_URL}/compare/9049f1265b7d...0d1a26e67d8f)):\n` +
      `- [\`${sha7(C1)}\`](${GH_REPO_URL}/commit/${C1}) Rewrite history`,
    metadata: 'github:push repo=Codertocat/Hello-World branch=master',
  },
  'push that creates a branch': {
    headers: gh('push'),
    body: ghPush({
      ref: 'refs/heads/feature/login',
      before: '0000000000000000000000000000000000000000',
      created: true,
      compare: `${GH_REPO_URL}/compare/feature/login`,
      commits: [ghCommit(C1, 'Add the login form')],
    }),
    markdown:
      `Codertocat created branch \`feature/login\` in ${REPO_MD} with 1 commit ([compare](${GH_REPO_URL}/compare/feature/login)):\n` +
      `- [\`${sha7(C1)}\`](${GH_REPO_URL}/commit/${C1}) Add the login form`,
    metadata: 'github:push repo=Codertocat/Hello-World branch=feature/login',
  },
  'push of a new tag': {
    headers: gh('push'),
    body: ghPush({
      ref: 'refs/tags/v1.0.0',
      before: '0000000000000000000000000000000000000000',
      created: true,
      compare: `${GH_REPO_URL}/compare/v1.0.0`,
    }),
    markdown: `Codertocat pushed tag \`v1.0.0\` to ${REPO_MD}.`,
    metadata: 'github:push repo=Codertocat/Hello-World tag=v1.0.0',
  },
  'push that deletes a tag (GitHub\u2019s own sample)': {
    headers: gh('push'),
    body: ghPush({
      ref: 'refs/tags/simple-tag',
      before: C2,
      after: '0000000000000000000000000000000000000000',
      deleted: true,
      compare: `${GH_REPO_URL}/compare/6113728f27ae...000000000000`,
    }),
    markdown: `Codertocat deleted tag \`simple-tag\` in ${REPO_MD}.`,
    metadata: 'github:push repo=Codertocat/Hello-World tag=simple-tag',
  },
  'push that deletes a branch': {
    headers: gh('push'),
    body: ghPush({ ref: 'refs/heads/old-feature', deleted: true, after: '0000000000000000000000000000000000000000' }),
    markdown: `Codertocat deleted branch \`old-feature\` in ${REPO_MD}.`,
    metadata: 'github:push repo=Codertocat/Hello-World branch=old-feature',
  },
  'pull request opened': {
    headers: gh('pull_request'),
    body: prEvent('opened'),
    markdown:
      `Codertocat opened pull request ${PR_MD} in ${REPO_MD} (\`changes\` \u2192 \`master\`):\n\n` +
      '> This is a pretty simple change that we need to pull into master.',
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=opened pr=2 branch=master',
  },
  'draft pull request opened without a description': {
    headers: gh('pull_request'),
    body: prEvent('opened', { draft: true, body: null }),
    markdown: `Codertocat opened draft pull request ${PR_MD} in ${REPO_MD} (\`changes\` \u2192 \`master\`).`,
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=opened pr=2 branch=master',
  },
  'pull request merged': {
    headers: gh('pull_request'),
    body: prEvent('closed', { state: 'closed', merged: true, merged_by: ghSender }),
    markdown: `Codertocat merged pull request ${PR_MD} in ${REPO_MD} (\`changes\` \u2192 \`master\`).`,
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=closed pr=2 branch=master',
  },
  'pull request closed without merging': {
    headers: gh('pull_request'),
    body: prEvent('closed', { state: 'closed', merged: false }),
    markdown: `Codertocat closed pull request ${PR_MD} in ${REPO_MD} without merging.`,
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=closed pr=2 branch=master',
  },
  'pull request reopened': {
    headers: gh('pull_request'),
    body: prEvent('reopened'),
    markdown: `Codertocat reopened pull request ${PR_MD} in ${REPO_MD}.`,
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=reopened pr=2 branch=master',
  },
  'review requested from a person': {
    headers: gh('pull_request'),
    body: prEvent('review_requested', {}, { requested_reviewer: { login: 'hubot', id: 1, type: 'User' } }),
    markdown: `Codertocat requested a review from hubot on pull request ${PR_MD} in ${REPO_MD}.`,
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=review_requested pr=2 branch=master',
  },
  'review requested from a team': {
    headers: gh('pull_request'),
    body: prEvent('review_requested', {}, { requested_team: { name: 'Core maintainers', id: 3, slug: 'core' } }),
    markdown: `Codertocat requested a review from team Core maintainers on pull request ${PR_MD} in ${REPO_MD}.`,
    metadata: 'github:pull_request repo=Codertocat/Hello-World action=review_requested pr=2 branch=master',
  },
  'review approved': {
    headers: gh('pull_request_review'),
    body: {
      action: 'submitted',
      review: {
        id: 237895671,
        user: ghSender,
        body: 'Looks great!',
        commit_id: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
        submitted_at: '2019-05-15T15:20:38Z',
        state: 'approved',
        html_url: `${PR_URL}#pullrequestreview-237895671`,
      },
      pull_request: ghPullRequest(),
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `Codertocat [approved](${PR_URL}#pullrequestreview-237895671) pull request ${PR_MD} in ${REPO_MD}:\n\n> Looks great\\!`,
    metadata: 'github:pull_request_review repo=Codertocat/Hello-World action=submitted pr=2 state=approved',
  },
  'review requesting changes': {
    headers: gh('pull_request_review'),
    body: {
      action: 'submitted',
      review: { id: 7, user: ghSender, body: '', state: 'changes_requested', html_url: `${PR_URL}#pullrequestreview-7` },
      pull_request: ghPullRequest(),
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `Codertocat [requested changes on](${PR_URL}#pullrequestreview-7) pull request ${PR_MD} in ${REPO_MD}.`,
    metadata: 'github:pull_request_review repo=Codertocat/Hello-World action=submitted pr=2 state=changes_requested',
  },
  'issue opened': {
    headers: gh('issues'),
    body: { action: 'opened', issue: ghIssue(), repository: ghRepository(), sender: ghSender },
    markdown: `Codertocat opened issue ${ISSUE_MD} in ${REPO_MD}:\n\n> It looks like you accidently spelled 'commit' with two 't's.`,
    metadata: 'github:issues repo=Codertocat/Hello-World action=opened issue=1',
  },
  'issue closed as not planned': {
    headers: gh('issues'),
    body: {
      action: 'closed',
      issue: ghIssue({ state: 'closed', state_reason: 'not_planned' }),
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `Codertocat closed issue ${ISSUE_MD} in ${REPO_MD} as not planned.`,
    metadata: 'github:issues repo=Codertocat/Hello-World action=closed issue=1',
  },
  'issue reopened': {
    headers: gh('issues'),
    body: { action: 'reopened', issue: ghIssue(), repository: ghRepository(), sender: ghSender },
    markdown: `Codertocat reopened issue ${ISSUE_MD} in ${REPO_MD}.`,
    metadata: 'github:issues repo=Codertocat/Hello-World action=reopened issue=1',
  },
  'comment on an issue': {
    headers: gh('issue_comment'),
    body: {
      action: 'created',
      issue: ghIssue(),
      comment: {
        url: 'https://api.github.com/repos/Codertocat/Hello-World/issues/comments/492700400',
        html_url: `${ISSUE_URL}#issuecomment-492700400`,
        id: 492700400,
        user: ghSender,
        body: "You are totally right! I'll get this fixed right away.",
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown:
      `Codertocat [commented](${ISSUE_URL}#issuecomment-492700400) on issue ${ISSUE_MD} in ${REPO_MD}:\n\n` +
      "> You are totally right! I'll get this fixed right away.",
    metadata: 'github:issue_comment repo=Codertocat/Hello-World action=created issue=1',
  },
  'comment on a pull request': {
    headers: gh('issue_comment'),
    body: {
      action: 'created',
      issue: ghIssue({
        number: 2,
        title: PR_TITLE,
        html_url: PR_URL,
        pull_request: { url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2' },
      }),
      comment: { html_url: `${PR_URL}#issuecomment-1`, id: 1, user: ghSender, body: 'Rebased.' },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `Codertocat [commented](${PR_URL}#issuecomment-1) on pull request ${PR_MD} in ${REPO_MD}:\n\n> Rebased.`,
    metadata: 'github:issue_comment repo=Codertocat/Hello-World action=created pr=2',
  },
  'release published': {
    headers: gh('release'),
    body: {
      action: 'published',
      release: {
        url: 'https://api.github.com/repos/Codertocat/Hello-World/releases/11248810',
        html_url: `${GH_REPO_URL}/releases/tag/0.0.1`,
        id: 11248810,
        tag_name: '0.0.1',
        target_commitish: 'master',
        name: null,
        draft: false,
        author: ghSender,
        prerelease: false,
        body: null,
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `Codertocat published release [0.0.1](${GH_REPO_URL}/releases/tag/0.0.1) in ${REPO_MD}.`,
    metadata: 'github:release repo=Codertocat/Hello-World action=published tag=0.0.1',
  },
  'pre-release published with notes': {
    headers: gh('release'),
    body: {
      action: 'published',
      release: {
        html_url: `${GH_REPO_URL}/releases/tag/v2.0.0-rc.1`,
        tag_name: 'v2.0.0-rc.1',
        name: 'Version 2 (release candidate)',
        prerelease: true,
        draft: false,
        body: '## Changes\r\n- Faster start-up\r\n- New _dark_ theme',
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown:
      `Codertocat published pre-release [Version 2 (release candidate)](${GH_REPO_URL}/releases/tag/v2.0.0-rc.1) (\`v2.0.0-rc.1\`) in ${REPO_MD}:\n\n` +
      '> \\## Changes\n> \\- Faster start-up\n> \\- New \\_dark\\_ theme',
    metadata: 'github:release repo=Codertocat/Hello-World action=published tag=v2.0.0-rc.1',
  },
  'workflow run succeeded': {
    headers: gh('workflow_run'),
    body: {
      action: 'completed',
      workflow_run: {
        id: 30433642,
        name: 'Build',
        head_branch: 'master',
        head_sha: 'acb5820ced9479c074f688cc328bf03f341a511d',
        run_number: 562,
        event: 'push',
        status: 'completed',
        conclusion: 'success',
        workflow_id: 159038,
        html_url: `${GH_REPO_URL}/actions/runs/30433642`,
      },
      workflow: { id: 159038, name: 'Build', path: '.github/workflows/build.yml' },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `\u2705 Workflow [Build #562](${GH_REPO_URL}/actions/runs/30433642) succeeded on \`master\` in ${REPO_MD}.`,
    metadata: 'github:workflow_run repo=Codertocat/Hello-World action=completed workflow=Build branch=master conclusion=success',
    level: 'success',
  },
  'workflow run failed': {
    headers: gh('workflow_run'),
    body: {
      action: 'completed',
      workflow_run: {
        name: 'Build',
        head_branch: 'feature/login',
        run_number: 563,
        status: 'completed',
        conclusion: 'failure',
        html_url: `${GH_REPO_URL}/actions/runs/30433643`,
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `\u274c Workflow [Build #563](${GH_REPO_URL}/actions/runs/30433643) failed on \`feature/login\` in ${REPO_MD}.`,
    metadata: 'github:workflow_run repo=Codertocat/Hello-World action=completed workflow=Build branch=feature/login conclusion=failure',
    level: 'critical',
  },
  'check suite completed': {
    headers: gh('check_suite'),
    body: {
      action: 'completed',
      check_suite: {
        id: 118578147,
        head_branch: 'changes',
        head_sha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
        status: 'completed',
        conclusion: 'success',
        url: 'https://api.github.com/repos/Codertocat/Hello-World/check-suites/118578147',
        app: { id: 29310, slug: 'octocoders-linter', name: 'Octocoders-linter' },
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `\u2705 Checks by Octocoders-linter succeeded on \`changes\` (\`ec26c3e\`) in ${REPO_MD}.`,
    metadata: 'github:check_suite repo=Codertocat/Hello-World action=completed app=Octocoders-linter branch=changes conclusion=success',
    level: 'success',
  },
  'check suite timed out': {
    headers: gh('check_suite'),
    body: {
      action: 'completed',
      check_suite: {
        head_branch: null,
        head_sha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
        status: 'completed',
        conclusion: 'timed_out',
        app: { name: 'GitHub Actions' },
      },
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `\u274c Checks by GitHub Actions timed out (\`ec26c3e\`) in ${REPO_MD}.`,
    metadata: 'github:check_suite repo=Codertocat/Hello-World action=completed app=GitHub%20Actions conclusion=timed_out',
    level: 'critical',
  },
  'tag created': {
    headers: gh('create'),
    body: {
      ref: 'simple-tag',
      ref_type: 'tag',
      master_branch: 'master',
      description: null,
      pusher_type: 'user',
      repository: ghRepository(),
      sender: ghSender,
    },
    markdown: `Codertocat created tag \`simple-tag\` in ${REPO_MD}.`,
    metadata: 'github:create repo=Codertocat/Hello-World tag=simple-tag',
  },
  'branch deleted': {
    headers: gh('delete'),
    body: { ref: 'feature/login', ref_type: 'branch', pusher_type: 'user', repository: ghRepository(), sender: ghSender },
    markdown: `Codertocat deleted branch \`feature/login\` in ${REPO_MD}.`,
    metadata: 'github:delete repo=Codertocat/Hello-World branch=feature/login',
  },
  'star added': {
    headers: gh('star'),
    body: { action: 'created', starred_at: '2019-05-15T15:20:40Z', repository: ghRepository({ stargazers_count: 1 }), sender: ghSender },
    markdown: `Codertocat starred ${REPO_MD} (1 star).`,
    metadata: 'github:star repo=Codertocat/Hello-World action=created',
  },
};

export const GITHUB_IGNORED: Record<string, { headers: Record<string, string>; body: unknown; reason: string }> = {
  'a pull request edited': {
    headers: gh('pull_request'),
    body: prEvent('edited'),
    reason: 'GitHub pull_request action "edited" is not shown.',
  },
  'an inline review comment deleted': {
    headers: gh('pull_request_review_comment'),
    body: {
      action: 'deleted',
      comment: { body: 'x', html_url: `${PR_URL}#discussion_r1`, path: 'README.md' },
      pull_request: ghPullRequest(),
      repository: ghRepository(),
      sender: ghSender,
    },
    reason: 'GitHub pull_request_review_comment action "deleted" is not shown.',
  },
  'a check run created': {
    headers: gh('check_run'),
    body: {
      action: 'created',
      check_run: { name: 'lint', status: 'queued', conclusion: null },
      repository: ghRepository(),
      sender: ghSender,
    },
    reason: 'GitHub check_run action "created" is not shown (only "completed").',
  },
  'a label created': {
    headers: gh('label'),
    body: { action: 'created', label: { name: 'bug' }, repository: ghRepository(), sender: ghSender },
    reason: 'GitHub event "label" is not shown.',
  },
  'a review without a summary': {
    headers: gh('pull_request_review'),
    body: {
      action: 'submitted',
      review: { id: 8, body: null, state: 'commented', html_url: `${PR_URL}#pullrequestreview-8` },
      pull_request: ghPullRequest(),
      repository: ghRepository(),
      sender: ghSender,
    },
    reason: 'A review without a summary is not shown (each of its comments is a pull_request_review_comment).',
  },
  'an issue labeled': {
    headers: gh('issues'),
    body: { action: 'labeled', issue: ghIssue(), label: { name: 'bug' }, repository: ghRepository(), sender: ghSender },
    reason: 'GitHub issues action "labeled" is not shown.',
  },
  'a workflow run requested': {
    headers: gh('workflow_run'),
    body: {
      action: 'requested',
      workflow_run: { name: 'Build', status: 'queued', conclusion: null },
      repository: ghRepository(),
      sender: ghSender,
    },
    reason: 'GitHub workflow_run action "requested" is not shown (only "completed").',
  },
  'a star removed': {
    headers: gh('star'),
    body: { action: 'deleted', starred_at: null, repository: ghRepository(), sender: ghSender },
    reason: 'Removed stars are not shown.',
  },
  'a watch (sent along with star)': {
    headers: gh('watch'),
    body: { action: 'started', repository: ghRepository(), sender: ghSender },
    reason: 'GitHub sends "watch" along with "star"; only "star" is shown.',
  },
};

// ---------------------------------------------------------------------------------------------
// Bitbucket Cloud
// ---------------------------------------------------------------------------------------------

const BB_REPO_URL = 'https://bitbucket.org/teamsinspace/documentation-tests';
const BB_REPO_MD = `[teamsinspace/documentation-tests](${BB_REPO_URL})`;

const bbActor = {
  type: 'user',
  display_name: 'Emma',
  uuid: '{a54f16da-24e9-4d7f-a3a7-b1ba2cd98aa3}',
  nickname: 'emma',
  account_id: '557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443',
  links: { html: { href: 'https://bitbucket.org/%7Ba54f16da-24e9-4d7f-a3a7-b1ba2cd98aa3%7D/' } },
};

export const bbRepository = {
  type: 'repository',
  name: 'documentation-tests',
  full_name: 'teamsinspace/documentation-tests',
  uuid: '{3f8bb8a6-3ef8-4e92-9de2-5bfd2c8a9f4a}',
  scm: 'git',
  is_private: true,
  links: {
    self: { href: 'https://api.bitbucket.org/2.0/repositories/teamsinspace/documentation-tests' },
    html: { href: BB_REPO_URL },
  },
  owner: { type: 'team', display_name: 'Teams In Space', username: 'teamsinspace' },
};

const H1 = '709d658dc5b6d6afcd46049c2f332ee3f515a67d';
const H0 = '1e65c05c1d5171631d92438a13901ca7dae9618c';
const H2 = '03f4a7270240708834de475bcf21532d6134777e';

function bbCommit(hash: string, message: string): Record<string, unknown> {
  return {
    hash,
    type: 'commit',
    message,
    author: { raw: 'Emma <emma@example.com>', type: 'author', user: bbActor },
    date: '2024-05-15T09:45:32+00:00',
    links: {
      self: { href: `https://api.bitbucket.org/2.0/repositories/teamsinspace/documentation-tests/commit/${hash}` },
      html: { href: `${BB_REPO_URL}/commits/${hash}` },
    },
  };
}

function bbRef(type: string, name: string, hash: string): Record<string, unknown> {
  return {
    type,
    name,
    target: { type: 'commit', hash },
    links: { html: { href: `${BB_REPO_URL}/branch/${name}` } },
  };
}

function bbPush(changes: unknown[]): Record<string, unknown> {
  return { actor: bbActor, repository: bbRepository, push: { changes } };
}

const BB_PR_URL = `${BB_REPO_URL}/pull-requests/1`;
const BB_PR_MD = `[#1 Add the deployment guide](${BB_PR_URL})`;

export function bbPullRequest(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 1,
    type: 'pullrequest',
    title: 'Add the deployment guide',
    description: 'Explains how to *deploy*.',
    state: 'OPEN',
    author: bbActor,
    source: { branch: { name: 'feature/deploy-docs' }, commit: { hash: H1.slice(0, 12) }, repository: bbRepository },
    destination: { branch: { name: 'main' }, commit: { hash: H0.slice(0, 12) }, repository: bbRepository },
    merge_commit: null,
    participants: [],
    reviewers: [],
    close_source_branch: true,
    closed_by: null,
    reason: '',
    created_on: '2024-05-15T09:46:01.123456+00:00',
    updated_on: '2024-05-15T09:46:01.123456+00:00',
    links: {
      self: { href: 'https://api.bitbucket.org/2.0/repositories/teamsinspace/documentation-tests/pullrequests/1' },
      html: { href: BB_PR_URL },
    },
    ...extra,
  };
}

function bb(eventKey: string): Record<string, string> {
  return {
    'X-Event-Key': eventKey,
    'X-Hook-UUID': '3e2b1a0c-8f16-4b8e-9b0d-2f2c6e0c8f11',
    'X-Request-UUID': 'e2f4c8a0-6c3b-4a1e-8d2b-5f6a7b8c9d0e',
    'X-Attempt-Number': '1',
    'User-Agent': 'Bitbucket-Webhooks/2.0',
  };
}

export const BITBUCKET: Record<string, Case> = {
  'push of one commit': {
    headers: bb('repo:push'),
    body: bbPush([
      {
        new: bbRef('branch', 'main', H1),
        old: bbRef('branch', 'main', H0),
        links: {
          html: { href: `${BB_REPO_URL}/branches/compare/${H1}..${H0}` },
          diff: { href: `https://api.bitbucket.org/2.0/repositories/teamsinspace/documentation-tests/diff/${H1}..${H0}` },
        },
        created: false,
        forced: false,
        closed: false,
        commits: [bbCommit(H1, 'Add the deployment guide\n')],
        truncated: false,
      },
    ]),
    markdown:
      `Emma pushed 1 commit to \`main\` in ${BB_REPO_MD} ([compare](${BB_REPO_URL}/branches/compare/${H1}..${H0})):\n` +
      `- [\`709d658\`](${BB_REPO_URL}/commits/${H1}) Add the deployment guide`,
    metadata: 'bitbucket:repo:push repo=teamsinspace/documentation-tests branch=main',
  },
  'push that creates a branch, force push and tag in one delivery': {
    headers: bb('repo:push'),
    body: bbPush([
      {
        new: bbRef('branch', 'feature/login', H2),
        old: null,
        created: true,
        forced: false,
        closed: false,
        commits: [bbCommit(H2, 'Login form'), bbCommit(H1, 'Login *styles*')],
        truncated: true,
        links: {},
      },
      {
        new: bbRef('branch', 'main', H1),
        old: bbRef('branch', 'main', H2),
        created: false,
        forced: true,
        closed: false,
        commits: [],
        truncated: false,
        links: {},
      },
      { new: bbRef('tag', 'v1.2', H1), old: null, created: true, forced: false, closed: false, commits: [], truncated: false, links: {} },
    ]),
    markdown:
      `Emma created branch \`feature/login\` in ${BB_REPO_MD} with more than 2 commits:\n` +
      `- [\`03f4a72\`](${BB_REPO_URL}/commits/${H2}) Login form\n` +
      `- [\`709d658\`](${BB_REPO_URL}/commits/${H1}) Login \\*styles\\*\n` +
      '- \u2026\n\n' +
      `Emma force-pushed to \`main\` in ${BB_REPO_MD}.\n\n` +
      `Emma pushed tag \`v1.2\` to ${BB_REPO_MD}.`,
    metadata: 'bitbucket:repo:push repo=teamsinspace/documentation-tests branch=feature/login',
  },
  'push that deletes a branch': {
    headers: bb('repo:push'),
    body: bbPush([
      { new: null, old: bbRef('branch', 'old-feature', H0), created: false, forced: false, closed: true, commits: [], truncated: false },
    ]),
    markdown: `Emma deleted branch \`old-feature\` in ${BB_REPO_MD}.`,
    metadata: 'bitbucket:repo:push repo=teamsinspace/documentation-tests branch=old-feature',
  },
  'pull request created': {
    headers: bb('pullrequest:created'),
    body: { actor: bbActor, pullrequest: bbPullRequest(), repository: bbRepository },
    markdown:
      `Emma opened pull request ${BB_PR_MD} in ${BB_REPO_MD} (\`feature/deploy-docs\` \u2192 \`main\`):\n\n` +
      '> Explains how to \\*deploy\\*.',
    metadata: 'bitbucket:pullrequest:created repo=teamsinspace/documentation-tests pr=1 branch=main',
  },
  'pull request merged': {
    headers: bb('pullrequest:fulfilled'),
    body: { actor: bbActor, pullrequest: bbPullRequest({ state: 'MERGED', closed_by: bbActor }), repository: bbRepository },
    markdown: `Emma merged pull request ${BB_PR_MD} in ${BB_REPO_MD} (\`feature/deploy-docs\` \u2192 \`main\`).`,
    metadata: 'bitbucket:pullrequest:fulfilled repo=teamsinspace/documentation-tests pr=1 branch=main',
  },
  'pull request declined with a reason': {
    headers: bb('pullrequest:rejected'),
    body: { actor: bbActor, pullrequest: bbPullRequest({ state: 'DECLINED', reason: 'Superseded by #2' }), repository: bbRepository },
    markdown: `Emma declined pull request ${BB_PR_MD} in ${BB_REPO_MD}:\n\n> Superseded by #2`,
    metadata: 'bitbucket:pullrequest:rejected repo=teamsinspace/documentation-tests pr=1 branch=main',
  },
  'inline comment on a pull request': {
    headers: bb('pullrequest:comment_created'),
    body: {
      actor: bbActor,
      pullrequest: bbPullRequest(),
      repository: bbRepository,
      comment: {
        id: 17,
        parent: null,
        content: { raw: 'Can you add a diagram?', markup: 'markdown', html: '<p>Can you add a diagram?</p>' },
        inline: { path: 'docs/deploy.md', from: null, to: 12 },
        created_on: '2024-05-15T10:01:00+00:00',
        updated_on: '2024-05-15T10:01:00+00:00',
        links: {
          self: { href: 'https://api.bitbucket.org/2.0/repositories/teamsinspace/documentation-tests/pullrequests/1/comments/17' },
          html: { href: `${BB_PR_URL}/_/diff#comment-17` },
        },
      },
    },
    markdown:
      `Emma [commented](${BB_PR_URL}/_/diff#comment-17) on pull request ${BB_PR_MD} in ${BB_REPO_MD} (on \`docs/deploy.md\`):\n\n` +
      '> Can you add a diagram?',
    metadata: 'bitbucket:pullrequest:comment_created repo=teamsinspace/documentation-tests pr=1 branch=main',
  },
};

// ---------------------------------------------------------------------------------------------
// Jira
// ---------------------------------------------------------------------------------------------

const JIRA = 'https://example.atlassian.net';
const jiraUser = {
  self: `${JIRA}/rest/api/2/user?accountId=5b10a2844c20165700ede21g`,
  accountId: '5b10a2844c20165700ede21g',
  displayName: 'Mia Krystof',
  active: true,
  timeZone: 'Europe/Berlin',
  accountType: 'atlassian',
};

export function jiraIssue(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '10002',
    self: `${JIRA}/rest/api/2/issue/10002`,
    key: 'SUP-42',
    fields: {
      issuetype: { self: `${JIRA}/rest/api/2/issuetype/10004`, id: '10004', name: 'Bug', subtask: false },
      project: { self: `${JIRA}/rest/api/2/project/10000`, id: '10000', key: 'SUP', name: 'Support' },
      priority: { self: `${JIRA}/rest/api/2/priority/2`, name: 'High', id: '2' },
      assignee: null,
      status: { self: `${JIRA}/rest/api/2/status/10000`, name: 'To Do', id: '10000' },
      summary: 'Login page shows a blank screen',
      description: 'Steps:\n# Open /login\n# See nothing',
      reporter: jiraUser,
      created: '2024-05-15T09:45:32.000+0200',
      updated: '2024-05-15T09:45:32.000+0200',
      ...fields,
    },
  };
}

const SUP42 = `[SUP-42: Login page shows a blank screen](${JIRA}/browse/SUP-42)`;

export const JIRA_CASES: Record<string, Case> = {
  'issue created': {
    headers: {},
    body: {
      timestamp: 1715759132000,
      webhookEvent: 'jira:issue_created',
      issue_event_type_name: 'issue_created',
      user: jiraUser,
      issue: jiraIssue(),
    },
    markdown:
      `Mia Krystof created ${SUP42}:\n- **Type**: Bug\n- **Priority**: High\n- **Assignee**: Unassigned\n\n` +
      '> Steps:\n> \\# Open /login\n> \\# See nothing',
    metadata: 'jira:issue_created project=SUP issue=SUP-42 status=To%20Do',
    level: 'warning',
  },
  'issue moved to In Progress and assigned': {
    headers: {},
    body: {
      timestamp: 1715760000000,
      webhookEvent: 'jira:issue_updated',
      issue_event_type_name: 'issue_generic',
      user: jiraUser,
      issue: jiraIssue({ status: { name: 'In Progress', id: '3' }, assignee: jiraUser }),
      changelog: {
        id: '10124',
        items: [
          { field: 'status', fieldtype: 'jira', fieldId: 'status', from: '10000', fromString: 'To Do', to: '3', toString: 'In Progress' },
          {
            field: 'assignee',
            fieldtype: 'jira',
            fieldId: 'assignee',
            from: null,
            fromString: null,
            to: '5b10a2844c20165700ede21g',
            toString: 'Mia Krystof',
          },
          { field: 'resolution', fieldtype: 'jira', fieldId: 'resolution', from: null, fromString: null, to: '10000', toString: 'Done' },
        ],
      },
    },
    markdown: `Mia Krystof updated ${SUP42}:\n- **Status**: To Do \u2192 In Progress\n- **Assignee**: Unassigned \u2192 Mia Krystof\n- **resolution**: None \u2192 Done`,
    metadata: 'jira:issue_updated project=SUP issue=SUP-42 status=In%20Progress',
    level: 'warning',
  },
  'issue priority raised': {
    headers: {},
    body: {
      webhookEvent: 'jira:issue_updated',
      user: jiraUser,
      issue: jiraIssue({ priority: { name: 'Highest', id: '1' } }),
      changelog: { items: [{ field: 'priority', fieldtype: 'jira', from: '2', fromString: 'High', to: '1', toString: 'Highest' }] },
    },
    markdown: `Mia Krystof updated ${SUP42}:\n- **Priority**: High \u2192 Highest`,
    metadata: 'jira:issue_updated project=SUP issue=SUP-42 status=To%20Do',
    level: 'critical',
  },
  'Atlassian\u2019s documented jira:issue_updated sample': {
    headers: {},
    body: {
      timestamp: 1525698237764,
      webhookEvent: 'jira:issue_updated',
      user: {
        self: 'https://jira.atlassian.com/rest/api/2/user?username=brollins',
        name: 'brollins',
        key: 'brollins',
        emailAddress: 'bryansemail at atlassian dot com',
        displayName: 'Bryan Rollins [Atlassian]',
        active: true,
      },
      issue: {
        id: '99291',
        self: 'https://jira.atlassian.com/rest/api/2/issue/99291',
        key: 'JRA-20002',
        fields: {
          summary: 'I feel the need for speed',
          created: '2009-12-16T23:46:10.612-0600',
          description: 'Make the issue nav load 10x faster',
          labels: ['UI', 'dialogue', 'move'],
          priority: 'Minor',
        },
      },
      changelog: {
        items: [
          {
            toString: 'A new summary.',
            to: null,
            fromString: 'What is going on here?????',
            from: null,
            fieldtype: 'jira',
            field: 'summary',
          },
          { toString: 'New Feature', to: '2', fromString: 'Improvement', from: '4', fieldtype: 'jira', field: 'issuetype' },
        ],
        id: 10124,
      },
    },
    markdown:
      'Bryan Rollins \\[Atlassian\\] updated [JRA-20002: I feel the need for speed](https://jira.atlassian.com/browse/JRA-20002):\n' +
      '- **summary**: What is going on here????? \u2192 A new summary.\n- **issuetype**: Improvement \u2192 New Feature',
    metadata: 'jira:issue_updated project=JRA issue=JRA-20002',
  },
  'issue deleted': {
    headers: {},
    body: { webhookEvent: 'jira:issue_deleted', user: jiraUser, issue: jiraIssue() },
    markdown: 'Mia Krystof deleted SUP-42: Login page shows a blank screen.',
    metadata: 'jira:issue_deleted project=SUP issue=SUP-42 status=To%20Do',
  },
  'comment created': {
    headers: {},
    body: {
      timestamp: 1715761000000,
      webhookEvent: 'comment_created',
      comment: {
        self: `${JIRA}/rest/api/2/issue/10002/comment/10010`,
        id: '10010',
        author: jiraUser,
        body: 'Reproduced on Firefox too. See https://status.example.com/incidents/1',
        updateAuthor: jiraUser,
        created: '2024-05-15T10:16:40.000+0200',
        updated: '2024-05-15T10:16:40.000+0200',
        jsdPublic: true,
      },
      issue: {
        id: '10002',
        self: `${JIRA}/rest/api/2/issue/10002`,
        key: 'SUP-42',
        fields: { summary: 'Login page shows a blank screen', status: { name: 'In Progress' } },
      },
    },
    markdown:
      `Mia Krystof commented on ${SUP42}:\n\n` +
      '> Reproduced on Firefox too. See [https\\://status.example.com/incidents/1](https://status.example.com/incidents/1)',
    metadata: 'jira:comment_created project=SUP issue=SUP-42 status=In%20Progress',
  },
  'comment edited, in Atlassian Document Format': {
    headers: {},
    body: {
      webhookEvent: 'comment_updated',
      comment: {
        id: '10010',
        author: jiraUser,
        updateAuthor: { displayName: 'Ravi Patel' },
        body: {
          type: 'doc',
          version: 1,
          content: [
            {
              type: 'paragraph',
              content: [
                { type: 'text', text: 'Fixed in ' },
                { type: 'text', text: 'v2.3', marks: [{ type: 'code' }] },
              ],
            },
            { type: 'paragraph', content: [{ type: 'text', text: 'Please retest.' }] },
          ],
        },
      },
      issue: { id: '10002', self: `${JIRA}/rest/api/2/issue/10002`, key: 'SUP-42', fields: { summary: 'Login page shows a blank screen' } },
    },
    markdown: `Ravi Patel edited a comment on ${SUP42}:\n\n> Fixed in v2.3\n> Please retest.`,
    metadata: 'jira:comment_updated project=SUP issue=SUP-42',
  },
};

// ---------------------------------------------------------------------------------------------
// Jenkins (Notification plugin)
// ---------------------------------------------------------------------------------------------

export function jenkinsNotification(build: Record<string, unknown>, name = 'asgard'): Record<string, unknown> {
  return {
    name,
    display_name: name,
    url: `job/${name}/`,
    build: {
      full_url: 'http://localhost:8080/job/asgard/18/',
      number: 18,
      queue_id: 41,
      timestamp: 1715759132000,
      phase: 'COMPLETED',
      status: 'SUCCESS',
      url: 'job/asgard/18/',
      scm: {
        url: 'https://github.com/evgeny-goldin/asgard.git',
        branch: 'origin/master',
        commit: 'c6d86dc654b12425e706bcf951adfe5a8627a517',
      },
      parameters: {},
      log: '',
      notes: '',
      artifacts: {
        'asgard-standalone.jar': { archive: 'http://localhost:8080/job/asgard/18/artifact/asgard-standalone.jar' },
      },
      ...build,
    },
  };
}

export const JENKINS: Record<string, Case> = {
  'build completed successfully (the plugin\u2019s sample)': {
    headers: {},
    body: jenkinsNotification({}),
    markdown:
      '\u2705 Build [asgard #18](http://localhost:8080/job/asgard/18/) completed: **SUCCESS** (branch `origin/master`, commit `c6d86dc`).',
    metadata: 'jenkins:completed job=asgard build=18 status=SUCCESS branch=origin/master',
    level: 'success',
  },
  'build started': {
    headers: {},
    body: jenkinsNotification({ phase: 'STARTED', status: undefined, number: 19, full_url: 'http://localhost:8080/job/asgard/19/' }),
    markdown: 'Build [asgard #19](http://localhost:8080/job/asgard/19/) started (branch `origin/master`, commit `c6d86dc`).',
    metadata: 'jenkins:started job=asgard build=19 branch=origin/master',
  },
  'build finalized as a failure': {
    headers: {},
    body: jenkinsNotification({ phase: 'FINALIZED', status: 'FAILURE' }),
    markdown:
      '\u274c Build [asgard #18](http://localhost:8080/job/asgard/18/) finished: **FAILURE** (branch `origin/master`, commit `c6d86dc`).',
    metadata: 'jenkins:finalized job=asgard build=18 status=FAILURE branch=origin/master',
    level: 'critical',
  },
  'unstable build of a job with spaces and markdown in its name, no SCM, no Jenkins URL': {
    headers: {},
    body: jenkinsNotification({ status: 'UNSTABLE', scm: {}, full_url: 'null/job/nightly/7/', number: 7 }, 'nightly *release* [x]'),
    markdown: '\u26a0\ufe0f Build nightly \\*release\\* \\[x\\] #7 completed: **UNSTABLE**.',
    metadata: 'jenkins:completed job=nightly%20*release*%20[x] build=7 status=UNSTABLE',
    level: 'warning',
  },
  'aborted build': {
    headers: {},
    body: jenkinsNotification({ status: 'ABORTED' }),
    markdown: 'Build [asgard #18](http://localhost:8080/job/asgard/18/) completed: **ABORTED** (branch `origin/master`, commit `c6d86dc`).',
    metadata: 'jenkins:completed job=asgard build=18 status=ABORTED branch=origin/master',
  },
};

// ---------------------------------------------------------------------------------------------
// Salesforce
// ---------------------------------------------------------------------------------------------

export function outboundMessage(notifications: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    ' <soapenv:Body>\n' +
    '  <notifications xmlns="http://soap.sforce.com/2005/09/outbound">\n' +
    '   <OrganizationId>00D000000000062EAA</OrganizationId>\n' +
    '   <ActionId>04k000000000001AAA</ActionId>\n' +
    '   <SessionId xsi:nil="true"/>\n' +
    '   <EnterpriseUrl>https://na1.salesforce.com/services/Soap/c/59.0/00D000000000062</EnterpriseUrl>\n' +
    '   <PartnerUrl>https://na1.salesforce.com/services/Soap/u/59.0/00D000000000062</PartnerUrl>\n' +
    notifications +
    '  </notifications>\n' +
    ' </soapenv:Body>\n' +
    '</soapenv:Envelope>\n'
  );
}

export function opportunity(notificationId: string, recordId: string, fields: string): string {
  return (
    '   <Notification>\n' +
    `    <Id>${notificationId}</Id>\n` +
    '    <sObject xsi:type="sf:Opportunity" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">\n' +
    `     <sf:Id>${recordId}</sf:Id>\n` +
    fields +
    '    </sObject>\n' +
    '   </Notification>\n'
  );
}

export const ACME = opportunity(
  '04l000000000001AAA',
  '006D000000CVOSqIAP',
  '     <sf:Amount>25000.0</sf:Amount>\n     <sf:Name>Acme - 1,200 Widgets</sf:Name>\n     <sf:StageName>Prospecting</sf:StageName>\n',
);

export const SALESFORCE_OUTBOUND: Record<string, { xml: string; markdown: string; metadata: string }> = {
  'one Opportunity notification (the WSDL\u2019s example shape)': {
    xml: outboundMessage(ACME),
    markdown:
      'Salesforce: Opportunity [Acme - 1,200 Widgets](https://na1.salesforce.com/006D000000CVOSqIAP)\n- **Amount**: 25000.0\n- **StageName**: Prospecting',
    metadata: 'salesforce:outbound object=Opportunity org=00D000000000062EAA',
  },
  'two notifications, with escaping and an empty (nil) field': {
    xml: outboundMessage(
      ACME +
        opportunity(
          '04l000000000002AAA',
          '006D000000CVOSrIAP',
          '     <sf:Amount>9900.0</sf:Amount>\n     <sf:Name>Globex &lt;Renewal&gt; *2025*</sf:Name>\n     <sf:Description xsi:nil="true"/>\n',
        ),
    ),
    markdown:
      'Salesforce: 2 Opportunity records\n' +
      '- [Acme - 1,200 Widgets](https://na1.salesforce.com/006D000000CVOSqIAP) \u2014 Amount: 25000.0, StageName: Prospecting\n' +
      '- [Globex \\<Renewal> \\*2025\\*](https://na1.salesforce.com/006D000000CVOSrIAP) \u2014 Amount: 9900.0, Description: (empty)',
    metadata: 'salesforce:outbound object=Opportunity org=00D000000000062EAA',
  },
};

export const SALESFORCE_FLOW: Case = {
  headers: {},
  body: {
    object: 'Case',
    action: 'escalated',
    user: 'Jane Doe',
    recordUrl: 'https://acme.my.salesforce.com/lightning/r/Case/500D000000Abc12IAC/view',
    record: {
      attributes: { type: 'Case', url: '/services/data/v59.0/sobjects/Case/500D000000Abc12IAC' },
      Id: '500D000000Abc12IAC',
      Subject: 'Printer jam on floor 3',
      Priority: 'High',
      IsEscalated: true,
      CaseNumber: '00001026',
    },
  },
  markdown:
    'Salesforce: Case [Printer jam on floor 3](https://acme.my.salesforce.com/lightning/r/Case/500D000000Abc12IAC/view) escalated by Jane Doe\n' +
    '- **Priority**: High\n- **IsEscalated**: true\n- **CaseNumber**: 00001026',
  metadata: 'salesforce:flow object=Case action=escalated',
};

/** Exactly the notificationsResponse of Salesforce's outbound messaging WSDL, Ack true. */
export const EXPECTED_ACK =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">\n' +
  '  <soapenv:Body>\n' +
  '    <notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound">\n' +
  '      <Ack>true</Ack>\n' +
  '    </notificationsResponse>\n' +
  '  </soapenv:Body>\n' +
  '</soapenv:Envelope>\n';
