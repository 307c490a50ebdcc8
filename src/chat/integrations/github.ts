import { z } from 'zod';
import { code, count, esc, link, linkDestination, linkMarkdown, metadata, quote, shortSha } from './text';
import { conclusionLevel, stateLevel } from './level';
import { expectShape, ignored, message, Unrecognised, withDetails, type NativePost, type Translation } from './types';

/**
 * GitHub repository and organization webhooks (docs.github.com "Webhook events and payloads"): the
 * event is the `X-GitHub-Event` header, the action is the payload's `action`. JSON, or form-encoded
 * with the JSON in `payload=` (GitHub's "application/x-www-form-urlencoded" content type).
 */

const WHAT = 'GitHub webhook payload';
const str = z.string();
const optStr = z.string().nullish();
const user = z.object({ login: str, html_url: optStr });
/** An API URL (api.github.com, or /api/v3/ on GitHub Enterprise), not one to show. */
const API_URL = /^https?:\/\/(?:api\.[^/]+|[^/]+\/api\/v3)\//i;
/**
 * A repository. Pushes from GitHub's 2014 format (still sent by old hooks) have no `full_name`: the
 * repository is named `<owner.name or owner.login>/<name>` then, and `url` is its page.
 */
const repository = z
  .object({
    full_name: optStr,
    name: optStr,
    owner: z.object({ login: optStr, name: optStr }).nullish(),
    html_url: optStr,
    url: optStr,
    stargazers_count: z.number().nullish(),
  })
  .transform((r, ctx) => {
    const owner = r.owner?.login || r.owner?.name;
    const full_name = r.full_name || (owner && r.name ? `${owner}/${r.name}` : null);
    if (!full_name) {
      ctx.addIssue({ code: 'custom', message: 'expected full_name, or owner and name', path: ['full_name'] });
      return z.NEVER;
    }
    const html_url = r.html_url ?? (r.url && !API_URL.test(r.url) ? r.url : null);
    return { full_name, html_url, stargazers_count: r.stargazers_count };
  });
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
  head: z.object({ ref: str, label: optStr, repo: z.object({ full_name: optStr }).nullish() }),
  base: z.object({ ref: str }),
});
const pullRequestEvent = z.object({
  ...base,
  action: str,
  pull_request: pullRequest,
  requested_reviewer: user.nullish(),
  requested_team: z.object({ name: str }).nullish(),
  assignee: user.nullish(),
  label: z.object({ name: str }).nullish(),
});
/** An inline comment on a pull request's diff. The 2013 format has no action and no pull_request. */
const reviewCommentEvent = z.object({
  ...base,
  action: optStr,
  comment: z.object({ body: optStr, html_url: optStr, path: optStr, user: user.nullish() }),
  pull_request: pullRequest.pick({ number: true, title: true, html_url: true }).nullish(),
});
const commitCommentEvent = z.object({
  ...base,
  action: optStr,
  comment: z.object({ body: optStr, html_url: optStr, path: optStr, commit_id: str, user: user.nullish() }),
});
const statusEvent = z.object({
  ...base,
  sha: str,
  state: str,
  context: optStr,
  description: optStr,
  target_url: optStr,
  commit: z.object({ html_url: optStr }).nullish(),
  branches: z.array(z.object({ name: str })).nullish(),
});
const checkRunEvent = z.object({
  ...base,
  action: str,
  check_run: z.object({
    name: str,
    html_url: optStr,
    head_sha: optStr,
    status: optStr,
    conclusion: optStr,
    app: z.object({ name: str }).nullish(),
    check_suite: z.object({ head_branch: optStr }).nullish(),
  }),
});
const deploymentStatusEvent = z.object({
  ...base,
  action: optStr,
  deployment_status: z.object({
    state: str,
    description: optStr,
    environment: optStr,
    target_url: optStr,
    log_url: optStr,
    environment_url: optStr,
  }),
  deployment: z.object({ ref: optStr, sha: optStr, environment: optStr }).nullish(),
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
    display_title: optStr,
    run_number: z.number().nullish(),
    html_url: optStr,
    head_branch: optStr,
    head_sha: optStr,
    status: optStr,
    conclusion: optStr,
  }),
  workflow: z.object({ name: optStr }).nullish(),
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
const forkEvent = z.object({ ...base, forkee: repository });
const gollumEvent = z.object({
  ...base,
  pages: z.array(z.object({ page_name: optStr, title: optStr, action: str, html_url: optStr })),
});
const memberEvent = z.object({ ...base, action: str, member: user });
const teamEvent = z.object({
  ...base,
  repository: repository.nullish(),
  action: str,
  team: z.object({ name: str, html_url: optStr }),
  organization: z.object({ login: str }).nullish(),
});
const refEvent = z.object({ ...base, ref: str, ref_type: z.enum(['branch', 'tag']) });
const starEvent = z.object({ ...base, action: str });
const pingEvent = z.object({
  zen: optStr,
  hook: z.object({ events: z.array(str).nullish() }).nullish(),
  repository: repository.nullish(),
  organization: z.object({ login: str }).nullish(),
});

type Repo = z.output<typeof repository>;

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
  // A branch of another repository (a fork) is named as GitHub labels it, `owner:branch`.
  const fromFork = pr.head.repo?.full_name && pr.head.repo.full_name !== e.repository.full_name && pr.head.label;
  const branches = `(${code(fromFork || pr.head.ref)} \u2192 ${code(pr.base.ref)})`;
  const prPairs: Array<readonly [string, string | number]> = [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['pr', pr.number],
    ['branch', pr.base.ref],
  ];
  const meta = metadata('github:pull_request', prPairs);
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
    case 'synchronize':
      return message(`${actor} updated ${subject} ${branches}.`, meta);
    case 'assigned':
    case 'unassigned': {
      if (!e.assignee) throw new Unrecognised(`Not a GitHub pull_request ${e.action} payload: assignee is missing.`);
      const whom = esc(e.assignee.login);
      const text = e.action === 'assigned' ? `assigned ${whom} to` : `unassigned ${whom} from`;
      return message(`${actor} ${text} ${subject}.`, metadata('github:pull_request', [...prPairs, ['assignee', e.assignee.login]]));
    }
    case 'labeled':
    case 'unlabeled': {
      if (!e.label) throw new Unrecognised(`Not a GitHub pull_request ${e.action} payload: label is missing.`);
      const label = code(e.label.name);
      const text = e.action === 'labeled' ? `added the label ${label} to` : `removed the label ${label} from`;
      return message(`${actor} ${text} ${subject}.`, metadata('github:pull_request', [...prPairs, ['label', e.label.name]]));
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
  // The run's name is the workflow's; an empty one (seen in real payloads) falls back to the workflow's own.
  const workflow = run.name?.trim() || e.workflow?.name?.trim() || run.display_title?.trim() || null;
  const name = `${workflow ?? 'Workflow'}${typeof run.run_number === 'number' ? ` #${run.run_number}` : ''}`;
  const { icon, phrase } = outcome(run.status, run.conclusion);
  const on = run.head_branch ? ` on ${code(run.head_branch)}` : '';
  const meta = metadata('github:workflow_run', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['workflow', workflow],
    ['branch', run.head_branch],
    ['conclusion', run.conclusion],
  ]);
  return withDetails(message(`${icon}Workflow ${link(name, run.html_url)} ${phrase}${on} in ${repoLink(e.repository)}.`, meta), {
    level: conclusionLevel(run.conclusion),
  });
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
  return withDetails(message(`${icon}Checks${by} ${phrase}${where} in ${repoLink(e.repository)}.`, meta), {
    level: conclusionLevel(suite.conclusion),
  });
}

/** `https://github.com/o/r/pull/5#discussion_r1` → 5 and the pull request's URL (2013 payloads name no pull_request). */
function pullRequestFromCommentUrl(url: string | null | undefined): { number: number; html_url: string } | null {
  const found = url ? /^(https?:\/\/[^#?]+\/pull\/(\d{1,9}))(?:[/#?]|$)/.exec(url) : null;
  return found?.[1] && found[2] ? { number: Number(found[2]), html_url: found[1] } : null;
}

function reviewCommentMessage(e: z.infer<typeof reviewCommentEvent>): Translation {
  const action = e.action ?? 'created';
  if (action !== 'created') return ignored(`GitHub pull_request_review_comment action "${action}" is not shown.`);
  const c = e.comment;
  const pr = e.pull_request ?? pullRequestFromCommentUrl(c.html_url);
  const target = e.pull_request ? prLink(e.pull_request) : pr ? link(`#${pr.number}`, pr.html_url) : null;
  const on = c.path ? ` on ${code(c.path, 200)} in` : ' on';
  const head = `${actorOf(e.sender, c.user?.login)} ${linkMarkdown('commented', c.html_url)}${on} pull request${target ? ` ${target}` : ''} in ${repoLink(e.repository)}`;
  const meta = metadata('github:pull_request_review_comment', [
    ['repo', e.repository.full_name],
    ['action', action],
    ['pr', pr?.number],
  ]);
  return message(withBody(head, c.body), meta);
}

function commitCommentMessage(e: z.infer<typeof commitCommentEvent>): Translation {
  const action = e.action ?? 'created';
  if (action !== 'created') return ignored(`GitHub commit_comment action "${action}" is not shown.`);
  const c = e.comment;
  const sha = shortSha(c.commit_id) ?? (c.commit_id.replace(/[^0-9A-Za-z]/g, '').slice(0, 7) || '?');
  const commitUrl =
    e.repository.html_url && shortSha(c.commit_id) ? `${e.repository.html_url.replace(/\/+$/, '')}/commit/${c.commit_id}` : null;
  const on = c.path ? ` on ${code(c.path, 200)} in` : ' on';
  const head = `${actorOf(e.sender, c.user?.login)} ${linkMarkdown('commented', c.html_url)}${on} commit ${linkMarkdown(code(sha), commitUrl)} in ${repoLink(e.repository)}`;
  const meta = metadata('github:commit_comment', [
    ['repo', e.repository.full_name],
    ['action', action],
    ['commit', shortSha(c.commit_id)],
  ]);
  return message(withBody(head, c.body), meta);
}

/** Commit statuses and deployment statuses, by their `state`. */
const STATES: Readonly<Record<string, { icon: string; phrase: string }>> = {
  success: { icon: '\u2705 ', phrase: 'succeeded' },
  failure: { icon: '\u274c ', phrase: 'failed' },
  error: { icon: '\u274c ', phrase: 'errored' },
};

function stateOf(state: string): { icon: string; phrase: string } {
  return STATES[state.toLowerCase()] ?? { icon: '', phrase: `is ${esc(state, 50)}` };
}

function withDescription(head: string, description: string | null | undefined): string {
  const text = esc(description ?? '', 200);
  return text === '' ? `${head}.` : `${head}: ${text}`;
}

function statusMessage(e: z.infer<typeof statusEvent>): Translation {
  const { icon, phrase } = stateOf(e.state);
  const sha = shortSha(e.sha) ?? '?';
  const context = e.context?.trim() ? `${code(e.context, 100)} ` : '';
  const branch = e.branches?.length === 1 ? e.branches[0]?.name : undefined;
  const on = branch ? ` on ${code(branch)}` : '';
  const head = `${icon}Status ${context}${linkMarkdown(phrase, e.target_url)} for commit ${linkMarkdown(code(sha), e.commit?.html_url)}${on} in ${repoLink(e.repository)}`;
  const meta = metadata('github:status', [
    ['repo', e.repository.full_name],
    ['state', e.state],
    ['context', e.context],
    ['branch', branch],
    ['commit', shortSha(e.sha)],
  ]);
  return withDetails(message(withDescription(head, e.description), meta), { level: stateLevel(e.state) });
}

function checkRunMessage(e: z.infer<typeof checkRunEvent>): Translation {
  if (e.action !== 'completed') return ignored(`GitHub check_run action "${e.action}" is not shown (only "completed").`);
  const run = e.check_run;
  const { icon, phrase } = outcome(run.status, run.conclusion);
  const branch = run.check_suite?.head_branch;
  const sha = shortSha(run.head_sha);
  const where = [branch ? ` on ${code(branch)}` : '', sha ? ` (${code(sha)})` : ''].join('');
  const by = run.app ? ` by ${esc(run.app.name, 100)}` : '';
  const meta = metadata('github:check_run', [
    ['repo', e.repository.full_name],
    ['action', e.action],
    ['check', run.name],
    ['app', run.app?.name],
    ['branch', branch],
    ['conclusion', run.conclusion],
  ]);
  return withDetails(message(`${icon}Check ${link(run.name, run.html_url)}${by} ${phrase}${where} in ${repoLink(e.repository)}.`, meta), {
    level: conclusionLevel(run.conclusion),
  });
}

function deploymentStatusMessage(e: z.infer<typeof deploymentStatusEvent>): Translation {
  const action = e.action ?? 'created';
  if (action !== 'created') return ignored(`GitHub deployment_status action "${action}" is not shown.`);
  const ds = e.deployment_status;
  const { icon, phrase } = stateOf(ds.state);
  const environment = ds.environment || e.deployment?.environment;
  const ref = e.deployment?.ref;
  const sha = shortSha(e.deployment?.sha);
  const what = [ref ? ` of ${code(ref)}` : '', sha && sha !== ref ? ` (${code(sha)})` : ''].join('');
  const to = environment ? ` to ${code(environment)}` : '';
  const url = [ds.target_url, ds.log_url, ds.environment_url].find((u) => linkDestination(u) !== null);
  const head = `${icon}Deployment${what}${to} ${linkMarkdown(phrase, url)} in ${repoLink(e.repository)}`;
  const meta = metadata('github:deployment_status', [
    ['repo', e.repository.full_name],
    ['action', action],
    ['environment', environment],
    ['state', ds.state],
    ['ref', ref],
  ]);
  return withDetails(message(withDescription(head, ds.description), meta), { level: stateLevel(ds.state) });
}

function forkMessage(e: z.infer<typeof forkEvent>): Translation {
  return message(
    `${actorOf(e.sender, e.forkee.full_name.split('/')[0])} forked ${repoLink(e.repository)} to ${repoLink(e.forkee)}.`,
    metadata('github:fork', [
      ['repo', e.repository.full_name],
      ['fork', e.forkee.full_name],
    ]),
  );
}

const MAX_PAGES = 10;

function gollumMessage(e: z.infer<typeof gollumEvent>): Translation {
  if (e.pages.length === 0) return ignored('A GitHub wiki (gollum) event without pages is not shown.');
  const page = (p: z.infer<typeof gollumEvent>['pages'][number]) =>
    `${p.action === 'created' ? 'created' : p.action === 'edited' ? 'edited' : esc(p.action, 50)} ${link(p.title || p.page_name || 'a page', p.html_url)}`;
  const actor = actorOf(e.sender);
  const meta = metadata('github:gollum', [['repo', e.repository.full_name]]);
  const [first] = e.pages;
  if (e.pages.length === 1 && first) return message(`${actor} ${page(first)} in the wiki of ${repoLink(e.repository)}.`, meta);
  const lines = e.pages.slice(0, MAX_PAGES).map((p) => `- ${page(p)}`);
  if (e.pages.length > MAX_PAGES) lines.push(`- \u2026 and ${count(e.pages.length - MAX_PAGES, 'more page')}`);
  return message(`${actor} changed ${count(e.pages.length, 'wiki page')} of ${repoLink(e.repository)}:\n${lines.join('\n')}`, meta);
}

function memberMessage(e: z.infer<typeof memberEvent>): Translation {
  const verbs: Readonly<Record<string, string>> = { added: 'added', removed: 'removed', edited: 'changed the permissions of' };
  const verb = verbs[e.action];
  if (verb === undefined) return ignored(`GitHub member action "${e.action}" is not shown.`);
  const preposition = e.action === 'added' ? ' to' : e.action === 'removed' ? ' from' : ' in';
  return message(
    `${actorOf(e.sender)} ${verb} ${link(e.member.login, e.member.html_url)}${preposition} ${repoLink(e.repository)}.`,
    metadata('github:member', [
      ['repo', e.repository.full_name],
      ['action', e.action],
      ['member', e.member.login],
    ]),
  );
}

function teamMessage(e: z.infer<typeof teamEvent>): Translation {
  const team = `team ${link(e.team.name, e.team.html_url)}`;
  const org = e.organization ? ` in ${esc(e.organization.login)}` : '';
  const repo = e.repository ? repoLink(e.repository) : null;
  let text: string;
  switch (e.action) {
    case 'created':
    case 'deleted':
    case 'edited':
      text = `${e.action} ${team}${org}`;
      break;
    case 'added_to_repository':
      text = `gave ${team} access to ${repo ?? 'a repository'}`;
      break;
    case 'removed_from_repository':
      text = `removed ${team}'s access to ${repo ?? 'a repository'}`;
      break;
    default:
      return ignored(`GitHub team action "${e.action}" is not shown.`);
  }
  return message(
    `${actorOf(e.sender)} ${text}.`,
    metadata('github:team', [
      e.repository ? ['repo', e.repository.full_name] : ['org', e.organization?.login],
      ['action', e.action],
      ['team', e.team.name],
    ]),
  );
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
    case 'pull_request_review_comment':
      return reviewCommentMessage(expectShape(reviewCommentEvent, body, `${WHAT} (pull_request_review_comment)`));
    case 'commit_comment':
      return commitCommentMessage(expectShape(commitCommentEvent, body, `${WHAT} (commit_comment)`));
    case 'status':
      return statusMessage(expectShape(statusEvent, body, `${WHAT} (status)`));
    case 'check_run':
      return checkRunMessage(expectShape(checkRunEvent, body, `${WHAT} (check_run)`));
    case 'deployment_status':
      return deploymentStatusMessage(expectShape(deploymentStatusEvent, body, `${WHAT} (deployment_status)`));
    case 'fork':
      return forkMessage(expectShape(forkEvent, body, `${WHAT} (fork)`));
    case 'gollum':
      return gollumMessage(expectShape(gollumEvent, body, `${WHAT} (gollum)`));
    case 'member':
      return memberMessage(expectShape(memberEvent, body, `${WHAT} (member)`));
    case 'team':
      return teamMessage(expectShape(teamEvent, body, `${WHAT} (team)`));
    case 'watch':
      return ignored('GitHub sends "watch" along with "star"; only "star" is shown.');
    default:
      return ignored(`GitHub event "${event}" is not shown.`);
  }
}
