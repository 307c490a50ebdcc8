/**
 * `npm run dev`: the service on its embedded default, ready to poke at.
 * 1. Writes `.dev.vars` with a fresh ADMIN_TOKEN and IMAGE_PROXY_KEY when there are none (git-ignored).
 * 2. Applies the D1 migrations to the local database (scripts/dev/local-d1.ts: one local runtime for all).
 * 3. Starts `wrangler dev` (local D1 and Durable Objects, offline).
 * 4. Creates (or finds) the demo chat room and its webhook.
 * 5. Prints the URLs, the dev token and ready-to-run curl lines as soon as the server answers.
 * 6. When the database has no conversations yet: ingests seven days of simulated traffic ending now,
 *    while the server already serves. Ctrl-C stops everything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { simulateConversations } from './simulator';
import { ingestOverHttp } from './dev/http-ingest';
import { createChatDemo } from './dev/chat-demo';
import { prepareLocalD1 } from './dev/local-d1';
import { portFree } from './dev/port';

const PORT = Number(process.env.PORT ?? 8787);
const BASE = `http://127.0.0.1:${PORT}`;
const DEMO_DAYS = 7;
const DEMO_CONVERSATIONS = Number(process.env.DEMO_CONVERSATIONS ?? 50_000);
const DEMO_SEED = 42;

function log(line: string): void {
  process.stderr.write(`[dev] ${line}\n`);
}

/** Appends `NAME=value` to .dev.vars when NAME is not there yet; returns its value. */
function ensureDevVar(name: string, fresh: () => string): string {
  const path = '.dev.vars';
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const match = new RegExp(`^${name}=(.+)$`, 'm').exec(existing);
  if (match) return match[1]!.trim();
  const value = fresh();
  writeFileSync(path, `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${name}=${value}\n`, { mode: 0o600 });
  log(`wrote a new ${name} to .dev.vars`);
  return value;
}

function ensureDevVars(): string {
  // The image proxy's signing key (src/chat/image-proxy): images in messages show through this origin.
  ensureDevVar('IMAGE_PROXY_KEY', () => randomBytes(32).toString('base64url'));
  return ensureDevVar('ADMIN_TOKEN', () => `sbt_dev_${randomBytes(24).toString('base64url')}`);
}

async function waitUntilUp(token: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error('wrangler dev exited before it was ready');
    try {
      const res = await fetch(`${BASE}/api/v1/tokens`, { headers: { Authorization: `Bearer ${token}` } });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('wrangler dev did not answer within 150 s');
}

async function loadDemoData(token: string): Promise<void> {
  const end = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  log(
    `loading demo data: ${DEMO_CONVERSATIONS.toLocaleString('en')} conversations over the ${DEMO_DAYS} days ending ${end.toISOString()} (seed ${DEMO_SEED})`,
  );
  const started = Date.now();
  const totals = await ingestOverHttp(
    `${BASE}/api/v2/analytics/conversations/details/ingest`,
    token,
    simulateConversations({ days: DEMO_DAYS, conversations: DEMO_CONVERSATIONS, seed: DEMO_SEED, end }),
    {
      onBatch: (t) => {
        if (process.stderr.isTTY)
          process.stderr.write(
            `\r[dev] ingested ${t.conversations.toLocaleString('en')} / ${DEMO_CONVERSATIONS.toLocaleString('en')} conversations`,
          );
      },
    },
  );
  if (process.stderr.isTTY) process.stderr.write('\n');
  log(
    `demo data loaded: ${totals.conversations} conversations, ${totals.observations} observations in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function main(): Promise<void> {
  // wrangler dev on a taken port builds, then dies with the runtime's stack trace: say it plainly first.
  if (!(await portFree(PORT))) {
    log(`port ${PORT} on 127.0.0.1 is in use (another npm run dev or wrangler dev?): stop it, or run PORT=${PORT + 1} npm run dev`);
    process.exit(1);
  }
  const token = ensureDevVars();
  const local = await prepareLocalD1();
  if (local.applied.length > 0) log(`applied ${local.applied.length} migrations to the local D1 database`);
  const empty = local.conversations === 0;

  const child = spawn('npx', ['wrangler', 'dev', '--port', String(PORT), '--ip', '127.0.0.1'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    // The Worker never reads Request.cf: no fetch of Cloudflare's cf.json, which fails offline.
    env: { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env },
  });
  const stop = () => {
    child.kill('SIGINT');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.on('exit', (code) => process.exit(code ?? 0));

  await waitUntilUp(token, child);
  const chat = await createChatDemo(BASE, token);

  const queryExample = JSON.stringify({
    interval: `${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z/${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`,
    granularity: 'PT1H',
    groupBy: ['queueId'],
    metrics: ['nOffered', 'tAnswered', 'tAbandon', 'tHandle', 'oServiceLevel'],
  });
  const banner = (loading: boolean) => `
  Switchboard is running at ${BASE}

  Dev admin token (from .dev.vars):  ${token}

  Conversation aggregates${loading ? ' (the demo data is loading below: answers fill in as it arrives)' : ''}:
    curl -s ${BASE}/api/v2/analytics/conversations/aggregates/query \\
      -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' \\
      -d '${queryExample}'

  Demo chat room:  ${chat.pageUrl}   (paste the dev token when the page asks)
  Its webhook:     ${chat.webhookUrl}
    ${chat.curl}
  Admin page:      ${BASE}/admin   (rooms, webhooks, their recent deliveries; the same token)

  Ctrl-C stops the server.
`;
  process.stdout.write(banner(empty));
  if (empty) {
    await loadDemoData(token);
    // The ingest's request log has scrolled the URLs away.
    process.stdout.write(banner(false));
  } else log('the local database already has conversations: demo data not reloaded (delete .wrangler/state to start over)');
}

main().catch((err) => {
  log(String(err instanceof Error ? err.message : err));
  process.exit(1);
});
