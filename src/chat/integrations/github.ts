import { z } from 'zod';
import { code, count, esc, link, linkDestination, linkMarkdown, metadata, quote, shortSha } from './text';
import { expectShape, ignored, message, Unrecognised, type NativePost, type Translation } from './types';

/**
 * GitHub repository and organization webhooks (docs.github.com "Webhook events and payloads"): the
 * event is the `X-GitHub-Event` header, the action is the payload's `action`. JSON, or form-encoded
 * with the JSON in `payload=` (GitHub's "application/x-www-form-urlencoded" content type).
 */

const WHAT = 'GitHub webhook payload';
const str = z.string();
const optStr = z.string().nullish();
const user = z.object({ login: str, html_url: optStr });
const repository = z.object({ full_name: str, html_url: optStr, stargazers_count: z.number().nullish() });
const base = { repository, sender: user.nullish() };

const commit = z.object({
  id: str,
  message: str,
  url: optStr,
  author: z.object({ name: optStr, username: optStr }).nullish(),
});
const push = z.object({
  ...base,
  ref: str,
  created: z.boolean().nullish(),
  deleted: z.boolean().nullish(),
  forced: z.boolean().nullish(),
  compare: optStr,
  commits: z.array(commit).nullish(),
  pusher: z.object({ name: optStr }).nullish(),
});

const pullRequest = z.object({
  number: z.number(),
  title: str,
  html_url: optStr,
  body: optStr,
  draft: z.boolean().nullish(),
  merged: z.boolean().nullish(),
  head: z.object({ ref: str }),
  base: z.object({ ref: str }),
});
const pullRequestEvent = z.object({
  ...base,
  action: str,
  pull_request: pullRequest,
  requested_reviewer: user.nullish(),
  requested_team: z.object({ name: str }).nullish(),
});
const reviewEvent = z.object({
  ...base,
  action: str,
  review: z.object({ state: str, body: optStr, html_url: optStr }),
  pull_request: pullRequest.pick({ number: true, title: true, html_url: true }),
});
const issue = z.object({
  number: z.number(),
  title: str,
  html_url: optStr,
  body: optStr,
  state_reason: optStr,
  pull_request: z.object({}).nullish(),
});
const issuesEvent = z.object({ ...base, action: str, issue });
const commentEvent = z.object({ ...base, action: str, issue, comment: z.object({ body: optStr, html_url: optStr }) });
const releaseEvent = z.object({
  ...base,
  action: str,
  release: z.object({ tag_name: str, name: optStr, html_url: optStr, body: optStr, prerelease: z.boolean().nullish() }),
});
const workflowRunEvent = z.object({
  ...base,
  action: str,
  workflow_run: z.object({
    name: optStr,
    run_number: z.number().nullish(),
    html_url: optStr,
    head_branch: optStr,
    head_sha: optStr,
    status: optStr,
    conclusion: optStr,
  }),
});
const checkSuiteEvent = z.object({
  ...base,
  action: str,
  check_suite: z.object({
    head_branch: optStr,
    head_sha: optStr,
    status: optStr,
    conclusion: optStr,
    app: z.object({ name: str }).nullish(),
  }),
});
const refEvent = z.object({ ...base, ref: str, ref_type: z.enum(['branch', 'tag']) });
const starEvent = z.object({ ...base, action: str });
const pingEvent = z.object({
  zen: optStr,
  hook: z.object({ events: z.array(str).nullish() }).nullish(),
  repository: repository.nullish(),
  organization: z.object({ login: str }).nullish(),
});

type Repo = z.infer<typeof repository>;

function repoLink(repo: Repo): string {
  return link(repo.full_name, repo.html_url);
}

function actorOf(sender: { login: string } | null | undefined, fallback?: string | null): string {
  return esc(sender?.login ?? fallback ?? 'Someone');
}

function withBody(head: string, body: string | null | undefined): string {
  const quoted = quote(body ?? '');
  return quoted === '' ? `${head}.` : `${head}:\n\n${quoted}`;
}

const MAX_COMMITS = 10;

function commitLines(commits: z.infer<typeof commit>[], pusher: string | null | undefined): string[] {
  const lines = commits.slice(0, MAX_COMMITS).map((c) => {
    const sha = shortSha(c.id) ?? (c.id.replace(/[^0-9A-Za-z]/g, '').slice(0, 7) || '?');
    const subject = esc(c.message.split('\n', 1)[0] ?? '', 100);
    const author = c.author?.username ?? c.author?.name;
    const by = author && author !== pusher ? ` (${esc(author, 100)})` : '';
    return `- ${linkMarkdown(code(sha), c.url)} ${subject}${by}`;
  });
  if (commits.length > MAX_COMMITS) lines.push(`- \u2026 and ${count(commits.length - MAX_COMMITS, 'more commit')}`);
  return lines;
}

function pushMessage(p: z.infer<typeof push>): Translation {
  const repo = repoLink(p.repository);
  const login = p.sender?.login ?? p.pusher?.name ?? null;
  const actor = actorOf(p.sender, p.pusher?.name);
  const commits = p.commits ?? [];
  const compareUrl = p.deleted ? null : linkDestination(p.compare);
  const compare = compareUrl === null ? '' : ` ([compare](${compareUrl}))`;
  const tag = /^refs\/tags\/(.+)$/.exec(p.ref)?.[1];
  const branch = /^refs\/heads\/(.+)$/.exec(p.ref)?.[1];
  const meta = metadata('github:push', [
    ['repo', p.repository.full_name],
    tag !== undefined ? ['tag', tag] : branch !== undefined ? ['branch', branch] : ['ref', p.ref],
  ]);

  let head: string;
  if (tag !== undefined) {
    if (p.deleted) head = `${actor} deleted tag ${code(tag)} in ${repo}.`;
    else if (p.created) head = `${actor} pushed tag ${code(tag)} to ${repo}.`;
    else head = `${actor} ${p.forced ? 'force-pushed' : 'moved'} tag ${code(tag)} in ${repo}.`;
    return message(head, meta);
  }
  const name = branch ?? p.ref;
  const what = branch !== undefined ? 'branch ' : '';
  if (p.deleted) return message(`${actor} deleted ${what}${code(name)} in ${repo}.`, meta);
  if (p.created) {
    head = `${actor} created ${what}${code(name)} in ${repo}${commits.length > 0 ? ` with ${count(commits.length, 'commit')}` : ''}${compare}`;
  } else {
    const verb = p.forced ? 'force-pushed' : 'pushed';
    head = `${actor} ${verb} ${commits.length > 0 ? `${count(commits.length, 'commit')} ` : ''}to ${code(name)} in ${repo}${compare}`;
  }
  if (commits.length === 0) return message(`${head}.`, meta);
  return message(`${head}:\n${commitLines(commits, login).join('\n')}`, meta);
}

function prLink(pr: { number: number; title: string; html_url?: string | null }): string {
  return link(`#${pr.number} ${pr.title}`, pr.html_url);
}

function pullRequestMessage(e: z.infer<typeof pullRequestEvent>): Translation {
  const pr = e.pull_request;
  const actor = actorOf(e.sender);
  const subject = `pull request ${prLink(pr)} in ${repoLink(e.repository)}`;
  const branches = `(${code(pr.head.ref)} \u2192 ${code(pr.base.ref)})`;
  const meta = metadata('github:pull_request', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['pr', pr.number],
    ['branch', pr.base.ref],
  ]);
  switch (e.action) {
    case 'opened':
      return message(withBody(`${actor} opened ${pr.draft ? 'draft ' : ''}${subject} ${branches}`, pr.body), meta);
    case 'closed':
      return message(pr.merged ? `${actor} merged ${subject} ${branches}.` : `${actor} closed ${subject} without merging.`, meta);
    case 'reopened':
      return message(`${actor} reopened ${subject}.`, meta);
    case 'ready_for_review':
      return message(`${actor} marked ${subject} as ready for review.`, meta);
    case 'review_requested': {
      const who = e.requested_reviewer ? esc(e.requested_reviewer.login) : e.requested_team ? `team ${esc(e.requested_team.name)}` : null;
      if (who === null) throw new Unrecognised('Not a GitHub review request: requested_reviewer or requested_team is missing.');
      return message(`${actor} requested a review from ${who} on ${subject}.`, meta);
    }
    default:
      return ignored(`GitHub pull_request action "${e.action}" is not shown.`);
  }
}

const REVIEW_VERBS: Readonly<Record<string, string>> = {
  approved: 'approved',
  changes_requested: 'requested changes on',
  commented: 'reviewed',
};

function reviewMessage(e: z.infer<typeof reviewEvent>): Translation {
  if (e.action !== 'submitted') return ignored(`GitHub pull_request_review action "${e.action}" is not shown.`);
  const state = e.review.state.toLowerCase();
  const verb = REVIEW_VERBS[state];
  if (verb === undefined) return ignored(`GitHub review state "${e.review.state}" is not shown.`);
  if (state === 'commented' && !e.review.body?.trim()) {
    return ignored('A review without a summary is not shown (each of its comments is a pull_request_review_comment).');
  }
  const meta = metadata('github:pull_request_review', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['pr', e.pull_request.number],
    ['state', state],
  ]);
  const head = `${actorOf(e.sender)} ${linkMarkdown(verb, e.review.html_url)} pull request ${prLink(e.pull_request)} in ${repoLink(e.repository)}`;
  return message(withBody(head, e.review.body), meta);
}

function issuesMessage(e: z.infer<typeof issuesEvent>): Translation {
  const subject = `issue ${prLink(e.issue)} in ${repoLink(e.repository)}`;
  const actor = actorOf(e.sender);
  const meta = metadata('github:issues', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['issue', e.issue.number],
  ]);
  switch (e.action) {
    case 'opened':
      return message(withBody(`${actor} opened ${subject}`, e.issue.body), meta);
    case 'closed':
      return message(`${actor} closed ${subject}${e.issue.state_reason === 'not_planned' ? ' as not planned' : ''}.`, meta);
    case 'reopened':
      return message(`${actor} reopened ${subject}.`, meta);
    default:
      return ignored(`GitHub issues action "${e.action}" is not shown.`);
  }
}

function commentMessage(e: z.infer<typeof commentEvent>): Translation {
  if (e.action !== 'created') return ignored(`GitHub issue_comment action "${e.action}" is not shown.`);
  const isPr = e.issue.pull_request !== undefined && e.issue.pull_request !== null;
  const meta = metadata('github:issue_comment', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    [isPr ? 'pr' : 'issue', e.issue.number],
  ]);
  const head = `${actorOf(e.sender)} ${linkMarkdown('commented', e.comment.html_url)} on ${isPr ? 'pull request' : 'issue'} ${prLink(e.issue)} in ${repoLink(e.repository)}`;
  return message(withBody(head, e.comment.body), meta);
}

function releaseMessage(e: z.infer<typeof releaseEvent>): Translation {
  if (e.action !== 'published') return ignored(`GitHub release action "${e.action}" is not shown (only "published").`);
  const r = e.release;
  const name = r.name?.trim() || r.tag_name;
  const tag = name === r.tag_name ? '' : ` (${code(r.tag_name)})`;
  const meta = metadata('github:release', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['tag', r.tag_name],
  ]);
  const head = `${actorOf(e.sender)} published ${r.prerelease ? 'pre-release' : 'release'} ${link(name, r.html_url)}${tag} in ${repoLink(e.repository)}`;
  return message(withBody(head, r.body), meta);
}

/** How a finished run or suite reads, by GitHub's `conclusion`. */
const CONCLUSIONS: Readonly<Record<string, { icon: string; phrase: string }>> = {
  success: { icon: '\u2705 ', phrase: 'succeeded' },
  failure: { icon: '\u274c ', phrase: 'failed' },
  timed_out: { icon: '\u274c ', phrase: 'timed out' },
  startup_failure: { icon: '\u274c ', phrase: 'failed to start' },
  cancelled: { icon: '', phrase: 'was cancelled' },
  skipped: { icon: '', phrase: 'was skipped' },
  neutral: { icon: '', phrase: 'completed (neutral)' },
  stale: { icon: '', phrase: 'is stale' },
  action_required: { icon: '', phrase: 'needs action' },
};

function outcome(status: string | null | undefined, conclusion: string | null | undefined): { icon: string; phrase: string } {
  const known = conclusion ? CONCLUSIONS[conclusion] : undefined;
  if (known) return known;
  return { icon: '', phrase: `${esc(status ?? 'completed', 50)}${conclusion ? ` (${esc(conclusion, 50)})` : ''}` };
}

function workflowRunMessage(e: z.infer<typeof workflowRunEvent>): Translation {
  if (e.action !== 'completed') return ignored(`GitHub workflow_run action "${e.action}" is not shown (only "completed").`);
  const run = e.workflow_run;
  const name = `${run.name ?? 'Workflow'}${typeof run.run_number === 'number' ? ` #${run.run_number}` : ''}`;
  const { icon, phrase } = outcome(run.status, run.conclusion);
  const on = run.head_branch ? ` on ${code(run.head_branch)}` : '';
  const meta = metadata('github:workflow_run', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['workflow', run.name],
    ['branch', run.head_branch],
    ['conclusion', run.conclusion],
  ]);
  return message(`${icon}Workflow ${link(name, run.html_url)} ${phrase}${on} in ${repoLink(e.repository)}.`, meta);
}

function checkSuiteMessage(e: z.infer<typeof checkSuiteEvent>): Translation {
  if (e.action !== 'completed') return ignored(`GitHub check_suite action "${e.action}" is not shown (only "completed").`);
  const suite = e.check_suite;
  const { icon, phrase } = outcome(suite.status, suite.conclusion);
  const by = suite.app ? ` by ${esc(suite.app.name, 100)}` : '';
  const sha = shortSha(suite.head_sha);
  const where = [suite.head_branch ? ` on ${code(suite.head_branch)}` : '', sha ? ` (${code(sha)})` : ''].join('');
  const meta = metadata('github:check_suite', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['app', suite.app?.name],
    ['branch', suite.head_branch],
    ['conclusion', suite.conclusion],
  ]);
  return message(`${icon}Checks${by} ${phrase}${where} in ${repoLink(e.repository)}.`, meta);
}

function refMessage(event: 'create' | 'delete', e: z.infer<typeof refEvent>): Translation {
  const verb = event === 'create' ? 'created' : 'deleted';
  const meta = metadata(`github:${event}`, [
    ['repo', e.repository.full_name],
    [e.ref_type, e.ref],
  ]);
  return message(`${actorOf(e.sender)} ${verb} ${e.ref_type} ${code(e.ref)} in ${repoLink(e.repository)}.`, meta);
}

function starMessage(e: z.infer<typeof starEvent>): Translation {
  if (e.action !== 'created') return ignored('Removed stars are not shown.');
  const stars = e.repository.stargazers_count;
  const total = typeof stars === 'number' ? ` (${count(stars, 'star')})` : '';
  return message(
    `${actorOf(e.sender)} starred ${repoLink(e.repository)}${total}.`,
    metadata('github:star', [
      ['repo', e.repository.full_name],
      ['action', e.action],
    ]),
  );
}

function pingMessage(e: z.infer<typeof pingEvent>): Translation {
  const target = e.repository ? repoLink(e.repository) : e.organization ? `organization ${esc(e.organization.login)}` : 'this app';
  const events = e.hook?.events ?? [];
  const list = events.includes('*')
    ? ' (all events)'
    : events.length > 0
      ? ` (events: ${events
          .slice(0, 30)
          .map((name) => code(name))
          .join(', ')})`
      : '';
  const meta = metadata('github:ping', [e.repository ? ['repo', e.repository.full_name] : ['org', e.organization?.login]]);
  return message(`GitHub webhook is set up for ${target}${list}.`, meta);
}

const EVENT_NAME = /^[a-z_]{1,64}$/;

/** Parses the body (JSON, or the JSON in a form's `payload=`) and translates the event. */
export function translateGitHub(post: NativePost): Translation {
  const event = post.header('X-GitHub-Event');
  if (event === undefined || !EVENT_NAME.test(event)) {
    throw new Unrecognised(
      'A github webhook takes GitHub deliveries: an X-GitHub-Event header (ping, push, pull_request, …) with its JSON payload, or the generic {"message", "metadata"} body.',
      'X-GitHub-Event',
    );
  }
  let body: unknown = post.json;
  if (post.mediaType === 'application/x-www-form-urlencoded') {
    const payload = new URLSearchParams(post.text).get('payload');
    if (payload === null) throw new Unrecognised('A form-encoded GitHub delivery carries its JSON in the "payload" field.', 'payload');
    try {
      body = JSON.parse(payload);
    } catch {
      throw new Unrecognised('The "payload" field of a GitHub delivery must be JSON.', 'payload');
    }
  }
  switch (event) {
    case 'ping':
      return pingMessage(expectShape(pingEvent, body, `${WHAT} (ping)`));
    case 'push':
      return pushMessage(expectShape(push, body, `${WHAT} (push)`));
    case 'pull_request':
      return pullRequestMessage(expectShape(pullRequestEvent, body, `${WHAT} (pull_request)`));
    case 'pull_request_review':
      return reviewMessage(expectShape(reviewEvent, body, `${WHAT} (pull_request_review)`));
    case 'issues':
      return issuesMessage(expectShape(issuesEvent, body, `${WHAT} (issues)`));
    case 'issue_comment':
      return commentMessage(expectShape(commentEvent, body, `${WHAT} (issue_comment)`));
    case 'release':
      return releaseMessage(expectShape(releaseEvent, body, `${WHAT} (release)`));
    case 'workflow_run':
      return workflowRunMessage(expectShape(workflowRunEvent, body, `${WHAT} (workflow_run)`));
    case 'check_suite':
      return checkSuiteMessage(expectShape(checkSuiteEvent, body, `${WHAT} (check_suite)`));
    case 'create':
    case 'delete':
      return refMessage(event, expectShape(refEvent, body, `${WHAT} (${event})`));
    case 'star':
      return starMessage(expectShape(starEvent, body, `${WHAT} (star)`));
    case 'watch':
      return ignored('GitHub sends "watch" along with "star"; only "star" is shown.');
    default:
      return ignored(`GitHub event "${event}" is not shown.`);
  }
}
