/**
 * `npm run import` (scripts/import.ts), run as a child process against a real `wrangler dev`, on an export
 * made of the real fixture records (test/fixtures/shared/genesys-details) plus what the test writes: an NDJSON
 * file with a malformed line, a record the server refuses and one too large to send among good ones; a file of
 * neither shape; a details page over 5 MiB. Every expected figure is counted here by a plain walk over the JSON.
 * Then `--refused FILE` (each line built here from the records written, the file fixed and imported again) and a
 * proxy whose body limit is below ours (413: requests split in two).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBSERVED_METRIC_NAMES } from '../../src/analytics/catalog';
import { ROOT, startDevServer, type DevServer } from './support/dev-server';

const FIXTURES = path.join(ROOT, 'test/fixtures/shared/genesys-details');
/** The one record its author edited by hand (14 dates with a one-digit day): the server refuses it. */
const HAND_EDITED = 'GenesysCloudBlueprints__conversation-model-to-sql-blueprint__conversations__conversation2.json';
const CALLS = 'xfaith4__Genesys-API-Explorer__2024-04-05_Conversations.json';
const CALLBACKS = 'xfaith4__GenesysCloud-API-Explorer_v3__tests__fixtures__ConversationDetails.sample.json';
const TSX = path.join(ROOT, 'node_modules/tsx/dist/cli.mjs');
/**
 * scripts/import.ts bundled once by esbuild (set in beforeAll): ~0.3 s a start against tsx's ~1.5 (which
 * compiles the script on each of this file's 30 runs). The first test runs it through tsx, as `npm run
 * import` does.
 */
let bundled: string;
const MIB5 = 5 * 1024 * 1024;
const DAY = 86_400_000;

interface Metric {
  name: string;
  value: number;
  emitDate: string;
}
interface DetailRecord {
  conversationId: string;
  conversationStart: string;
  participants: { attributes?: Record<string, string>; sessions?: { sessionId: string; metrics?: Metric[] }[] }[];
}

const OBSERVED = new Set(OBSERVED_METRIC_NAMES);
const recordsOf = (file: string): DetailRecord[] => {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { conversations?: DetailRecord[] } & DetailRecord;
  return parsed.conversations ?? [parsed];
};

/** A record as another conversation: a fresh id and every instant moved by `shiftMs` (an interval of its own). */
function withId(record: DetailRecord, id: string, shiftMs: number): DetailRecord {
  const moved = JSON.parse(JSON.stringify(record), (_key, value: unknown) =>
    typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(Date.parse(value) + shiftMs).toISOString() : value,
  ) as DetailRecord;
  return { ...moved, conversationId: id };
}

/** What the server should make of records it takes: distinct observations, metric occurrences, skipped names. */
function tally(list: readonly DetailRecord[]) {
  const distinct = new Set<string>();
  let occurrences = 0;
  const skipped = new Map<string, number>();
  let withoutObservations = 0;
  for (const r of list) {
    let observed = 0;
    for (const p of r.participants)
      for (const s of p.sessions ?? [])
        for (const m of s.metrics ?? []) {
          if (!OBSERVED.has(m.name)) {
            skipped.set(m.name, (skipped.get(m.name) ?? 0) + 1);
            continue;
          }
          observed++;
          occurrences++;
          distinct.add(`${r.conversationId}|${s.sessionId}|${m.name}|${Date.parse(m.emitDate)}`);
        }
    if (observed === 0) withoutObservations++;
  }
  return { observations: distinct.size, occurrences, skipped, withoutObservations };
}

/** tHandle's distinct observations emitted in [from, to): their count and sum, as an aggregate query should answer. */
function tHandle(list: readonly DetailRecord[], from: number, to: number) {
  const seen = new Map<string, number>();
  for (const r of list)
    for (const p of r.participants)
      for (const s of p.sessions ?? [])
        for (const m of s.metrics ?? []) {
          const at = Date.parse(m.emitDate);
          if (m.name === 'tHandle' && at >= from && at < to) {
            const key = `${r.conversationId}|${s.sessionId}|${at}`;
            if (!seen.has(key)) seen.set(key, m.value);
          }
        }
  return { count: seen.size, sum: [...seen.values()].reduce((a, b) => a + b, 0) };
}

/** The instant span of a list's metrics, widened to whole days (the query's interval). */
function daysOf(list: readonly DetailRecord[]): [number, number] {
  const at = list.flatMap((r) =>
    r.participants.flatMap((p) => (p.sessions ?? []).flatMap((s) => (s.metrics ?? []).map((m) => Date.parse(m.emitDate)))),
  );
  return [Math.floor(Math.min(...at) / DAY) * DAY, Math.ceil((Math.max(...at) + 1) / DAY) * DAY];
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a user runs it (not spawnSync: the dev server's output must keep flowing meanwhile). */
function runImport(args: string[], env: NodeJS.ProcessEnv = {}, via: 'bundle' | 'tsx' = 'bundle'): Promise<Run> {
  return new Promise((resolve, reject) => {
    const command = via === 'tsx' ? [TSX, 'scripts/import.ts'] : [bundled];
    const child = spawn(process.execPath, [...command, ...args], {
      cwd: ROOT,
      env: { ...process.env, SWITCHBOARD_TOKEN: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A figure of the summary: the number after `label` (thousands separators dropped). */
function figure(out: string, pattern: RegExp): number {
  const match = pattern.exec(out);
  if (!match) throw new Error(`${pattern} not in the summary:\n${out}`);
  return Number(match[1]!.replaceAll(',', ''));
}

function summaryOf(out: string) {
  return {
    files: figure(out, /^files\s+([\d,]+) read/m),
    read: figure(out, /^conversations\s+([\d,]+) read/m),
    stored: figure(out, /^conversations\s+[\d,]+ read: ([\d,]+) stored or counted/m),
    refused: figure(out, /^conversations\s+.*?([\d,]+) refused/m),
    notSent: figure(out, /^conversations\s+.*?([\d,]+) not sent/m),
    observations: figure(out, /^observations\s+([\d,]+) stored/m),
    duplicates: figure(out, /^observations\s+[\d,]+ stored, ([\d,]+) duplicates/m),
    withoutObservations: figure(out, /^without observations\s+([\d,]+) conversation/m),
    skipped: new Map(
      [...(/^skipped metrics\s+(.*)$/m.exec(out)?.[1] ?? '').matchAll(/(\w+) ([\d,]+)/g)].map(([, name, n]) => [
        name!,
        Number(n!.replaceAll(',', '')),
      ]),
    ),
  };
}

let server: DevServer;
let dir: string;
let url: string;
/** Every record the server should take, and the intervals of the records the test made. */
let accepted: DetailRecord[];
let ndjsonDays: [number, number];
let bigDays: [number, number];
let bigBytes: number;
const NDJSON = 'export/calls.ndjson';
const BIG = 'export/big-page.json';
const NEITHER = 'export/notes.json';
const badDateId = 'import-bad-date';
const oversizeId = 'import-oversize';

async function query(interval: [number, number]) {
  const res = await fetch(`${server.baseUrl}/api/v2/analytics/conversations/aggregates/query`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      interval: `${new Date(interval[0]).toISOString()}/${new Date(interval[1]).toISOString()}`,
      metrics: ['tHandle'],
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json()) as { results?: { data: { metrics: { stats: { count: number; sum: number } }[] }[] }[] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  // One result per media type (the query's grouping by default): summed.
  const stats = (body.results ?? []).flatMap((r) => r.data.flatMap((d) => d.metrics.map((m) => m.stats)));
  return { count: stats.reduce((n, x) => n + x.count, 0), sum: stats.reduce((n, x) => n + x.sum, 0) };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'switchboard-import-'));
  bundled = path.join(dir, 'import.mjs');
  await build({
    entryPoints: [path.join(ROOT, 'scripts/import.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundled,
    logLevel: 'warning',
  });
  mkdirSync(path.join(dir, 'export/genesys'), { recursive: true });
  const fixtureFiles = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && f !== 'manifest.json' && f !== 'models.json');
  expect(fixtureFiles).toHaveLength(7);
  for (const f of fixtureFiles) copyFileSync(path.join(FIXTURES, f), path.join(dir, 'export/genesys', f));
  accepted = fixtureFiles.filter((f) => f !== HAND_EDITED).flatMap((f) => recordsOf(path.join(FIXTURES, f)));

  // NDJSON: 40 of the calls as other conversations two years earlier; line 10 cut short, line 20 with a
  // one-digit day (refused by the server, in the same request as the good ones), line 30 over 5 MiB.
  const calls = recordsOf(path.join(FIXTURES, CALLS));
  const lines: string[] = [];
  const goodLines: DetailRecord[] = [];
  for (let i = 0; i < 40; i++) {
    const record = withId(calls[i]!, `import-nd-${i}`, -730 * DAY);
    if (i === 9) lines.push(JSON.stringify(record).slice(0, 200));
    else if (i === 19) lines.push(JSON.stringify({ ...record, conversationId: badDateId, conversationStart: '2022-04-5T10:00:00.000Z' }));
    else if (i === 29) {
      const huge = { ...record, conversationId: oversizeId };
      huge.participants = [{ ...huge.participants[0]!, attributes: { notes: 'x'.repeat(MIB5 + 1000) } }, ...huge.participants.slice(1)];
      lines.push(JSON.stringify(huge));
    } else {
      lines.push(JSON.stringify(record));
      goodLines.push(record);
    }
  }
  writeFileSync(path.join(dir, NDJSON), `${lines.join('\n')}\n`);
  ndjsonDays = daysOf(goodLines);

  // Over 5 MiB in under 1,000 conversations: only its bytes make it two requests or more.
  const callbacks = recordsOf(path.join(FIXTURES, CALLBACKS));
  const big = Array.from({ length: 600 }, (_, i) => withId(callbacks[i % callbacks.length]!, `import-big-${i}`, -1095 * DAY));
  const bigText = JSON.stringify({ conversations: big, cursor: 'next', dataAvailabilityDate: '2021-03-01T00:00:00.000Z' });
  bigBytes = Buffer.byteLength(bigText);
  expect(bigBytes).toBeGreaterThan(MIB5);
  writeFileSync(path.join(dir, BIG), bigText);
  bigDays = daysOf(big);

  writeFileSync(path.join(dir, NEITHER), JSON.stringify(calls.slice(0, 2)));
  accepted.push(...goodLines, ...big);
  server = await startDevServer();
  url = server.baseUrl;
}, 180_000);

afterAll(async () => {
  await server?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What nginx answers past its client_max_body_size: HTML, no error body naming records. */
const NGINX_413 =
  '<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>';

/**
 * A real HTTP hop in front of the dev server that answers the first requests itself with the faults given
 * (a status and its headers, or a connection cut), then passes every request through, except one larger than
 * `maxBodyBytes`, answered 413 as nginx does. It notes when each request came, and the size, conversations
 * and status of each it answered 413 or passed.
 */
async function faultyProxy(faults: ({ status: number; headers?: Record<string, string> } | 'cut')[], maxBodyBytes = Infinity) {
  const arrivals: number[] = [];
  const answered: { bytes: number; conversations: number; status: number }[] = [];
  const proxy = createServer(async (req, res) => {
    arrivals.push(Date.now());
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const fault = faults.shift();
    if (fault === 'cut') return req.socket.destroy();
    if (fault) return res.writeHead(fault.status, { 'Content-Type': 'application/json', ...fault.headers }).end('{"message":"try again"}');
    const conversations = (JSON.parse(body.toString('utf8')) as { conversations: unknown[] }).conversations.length;
    if (body.length > maxBodyBytes) {
      answered.push({ bytes: body.length, conversations, status: 413 });
      return res.writeHead(413, { 'Content-Type': 'text/html' }).end(NGINX_413);
    }
    const upstream = await fetch(server.baseUrl + req.url, {
      method: req.method,
      headers: { Authorization: req.headers.authorization ?? '', 'Content-Type': req.headers['content-type'] ?? '' },
      body,
    });
    answered.push({ bytes: body.length, conversations, status: upstream.status });
    res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('Content-Type') ?? 'application/json' });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    arrivals,
    answered,
    close: () => new Promise((resolve) => proxy.close(resolve)),
  };
}

describe('npm run import', () => {
  it('with --dry-run reads, checks and packs, says what it would send, and sends nothing', async () => {
    const proxy = await faultyProxy([]);
    const before = [await query(ndjsonDays), await query(bigDays)];
    const run = await runImport(['--dry-run', '--url', proxy.url, '--token', server.adminToken, path.join(dir, 'export')], {}, 'tsx');
    await proxy.close();
    expect(run.code, run.stderr).toBe(1);
    const requests = [...run.stdout.matchAll(/^request \d+: ([\d,]+) conversations?, ([\d,]+) bytes/gm)].map(([, n, bytes]) => ({
      conversations: Number(n!.replaceAll(',', '')),
      bytes: Number(bytes!.replaceAll(',', '')),
    }));
    for (const r of requests) {
      expect(r.bytes).toBeLessThanOrEqual(MIB5);
      expect(r.conversations).toBeLessThanOrEqual(1000);
    }
    // More than 5 MiB to send: two requests at least.
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(requests.reduce((sum, r) => sum + r.bytes, 0)).toBeGreaterThan(MIB5);
    // Packed: what the server takes, the hand-edited record and the one with a bad date (the server's to refuse).
    expect(requests.reduce((sum, r) => sum + r.conversations, 0)).toBe(accepted.length + 2);
    expect(run.stdout).toContain('dry run: nothing was sent');
    expect(run.stdout).toMatch(/calls\.ndjson:30 {2}import-oversize {2}is [\d,]+ bytes, more than one request may carry/);
    expect(proxy.arrivals).toEqual([]);
    expect([await query(ndjsonDays), await query(bigDays)]).toEqual(before);
  }, 60_000);

  it('stores every record it can, reports each one refused with its file, adds up to what the records hold; run again, stores nothing new', async () => {
    const run = await runImport(['--url', url, '--token', server.adminToken, '--concurrency', '3', path.join(dir, 'export')]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    const s = summaryOf(run.stdout);
    const expected = tally(accepted);
    // 7 fixture files, the NDJSON, the big page, the file of neither shape.
    expect(s.files).toBe(10);
    expect(s.read).toBe(accepted.length + 4);
    expect(s.stored).toBe(accepted.length);
    expect(s.refused).toBe(4);
    expect(s.notSent).toBe(0);
    expect(s.observations).toBe(expected.observations);
    // The blueprint's index.md is a trimmed copy of conversation1: what it repeats counts as duplicates.
    expect(s.observations + s.duplicates).toBe(expected.occurrences);
    expect(s.withoutObservations).toBe(expected.withoutObservations);
    expect(s.skipped).toEqual(expected.skipped);

    const refused = run.stdout.slice(run.stdout.indexOf('\nrefused (4):'));
    const handEdited = recordsOf(path.join(FIXTURES, HAND_EDITED))[0]!;
    expect(refused).toMatch(
      new RegExp(
        `${HAND_EDITED.replaceAll('.', '\\.')}  ${handEdited.conversationId}  Dates must be ISO-8601 .+\\[participants\\[\\d+\\]\\.sessions\\[\\d+\\]\\.segments\\[\\d+\\]\\.segment(Start|End)\\]`,
      ),
    );
    expect(refused).toMatch(/calls\.ndjson:10 {2}import-nd-9 {2}line is not JSON/);
    expect(refused).toMatch(new RegExp(`calls\\.ndjson:20  ${badDateId}  Dates must be ISO-8601 .+\\[conversationStart\\]`));
    expect(refused).toMatch(new RegExp(`calls\\.ndjson:30  ${oversizeId}  is [\\d,]+ bytes, more than one request may carry`));
    expect(run.stdout).toMatch(/not imported \(1\):\n {2}.*notes\.json: holds an array of 2 items; expected \{"conversations": \[…\]\}/);

    // The good records of the NDJSON's request (refused, then sent again without the bad one) and the big
    // page's parts are all there.
    const ndjsonStats = tHandle(accepted, ...ndjsonDays);
    const bigStats = tHandle(accepted, ...bigDays);
    expect(ndjsonStats.count).toBeGreaterThan(0);
    expect(bigStats.count).toBeGreaterThan(0);
    expect(await query(ndjsonDays)).toEqual(ndjsonStats);
    expect(await query(bigDays)).toEqual(bigStats);

    // Again, the token from the environment and the base URL with a slash: every observation a duplicate.
    const again = await runImport(['--url', `${url}/`, path.join(dir, 'export')], { SWITCHBOARD_TOKEN: server.adminToken });
    expect(again.code, again.stderr).toBe(1);
    const s2 = summaryOf(again.stdout);
    expect(s2.stored).toBe(accepted.length);
    expect(s2.observations).toBe(0);
    expect(s2.duplicates).toBe(expected.occurrences);
    expect(await query(bigDays)).toEqual(bigStats);
  }, 90_000);

  it('retries 429 after its Retry-After, a 503 and a cut connection, and stores everything once (exit 0)', async () => {
    const callbacks = recordsOf(path.join(FIXTURES, CALLBACKS));
    const own = Array.from({ length: 30 }, (_, i) => withId(callbacks[i % callbacks.length]!, `import-retry-${i}`, -1460 * DAY));
    const file = path.join(dir, 'retry.ndjson');
    writeFileSync(file, own.map((r) => JSON.stringify(r)).join('\n'));
    const proxy = await faultyProxy([{ status: 429, headers: { 'Retry-After': '1' } }, { status: 503 }, 'cut']);
    const run = await runImport(['--url', proxy.url, '--token', server.adminToken, file]);
    await proxy.close();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(proxy.arrivals).toHaveLength(4);
    expect(proxy.arrivals[1]! - proxy.arrivals[0]!).toBeGreaterThanOrEqual(1000);
    const s = summaryOf(run.stdout);
    expect(run.stdout).toMatch(/^requests\s+1 sent .*, 3 retries, 0 failed/m);
    expect(s.stored).toBe(30);
    expect(s.observations).toBe(tally(own).observations);
    expect(await query(daysOf(own))).toEqual(tHandle(own, ...daysOf(own)));
  }, 60_000);

  it('stops at once on a token the server refuses, with its message', async () => {
    const run = await runImport(['--url', url, '--token', 'not-a-token', path.join(dir, 'export', 'genesys')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/import: stopped: the server answered 401: .+/);
    expect(summaryOf(run.stdout).stored).toBe(0);
  }, 60_000);

  it('refuses bad arguments with exit code 2 and the usage', async () => {
    for (const args of [
      [path.join(dir, 'export')],
      ['--url', url, '--token', 't', path.join(dir, 'missing')],
      ['--url', url, '--token', 't'],
    ]) {
      const run = await runImport(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('Usage: npm run import');
    }
  }, 60_000);
});

/** A line of a `--refused` file, as the importer writes it. */
interface RefusedLine {
  file: string;
  line?: number;
  index?: number;
  conversationId?: string;
  field?: string;
  message: string;
  record?: DetailRecord;
  text?: string;
}

const readLines = (file: string): RefusedLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RefusedLine);

/** The longest start of `text` whose UTF-8 takes at most 64 KiB, walked a character at a time. */
function first64KiB(text: string): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > 64 * 1024) break;
    end += char.length;
  }
  return text.slice(0, end);
}

const byPlace = (a: RefusedLine, b: RefusedLine): number =>
  a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0) || (a.index ?? 0) - (b.index ?? 0);

describe('npm run import --refused, and a proxy that takes less than 5 MiB', () => {
  it('writes each record refused, here or by the server, to --refused FILE; the records fixed in it are all stored', async () => {
    const calls = recordsOf(path.join(FIXTURES, CALLS));
    const own = Array.from({ length: 24 }, (_, i) => withId(calls[i]!, `import-ref-${i}`, -1825 * DAY));
    const inputs = path.join(dir, 'refused-in');
    mkdirSync(inputs);
    const ndjson = path.join(inputs, 'calls.ndjson');
    const page = path.join(inputs, 'page.json');

    // Line 3 cut short, past 64 KiB (its 'é's make the 64 KiB fall inside a character); line 6 a conversation
    // wrapped by mistake; line 9 a one-digit day (the server's refusal); line 12 over 5 MiB.
    let notes = 'é'.repeat(40_000);
    const withNotes = (text: string): DetailRecord => {
      const [first, ...rest] = own[2]!.participants;
      return { ...own[2]!, participants: [{ ...first!, attributes: { notes: text } }, ...rest] };
    };
    const before = JSON.stringify(withNotes(notes));
    if ((64 * 1024 - Buffer.byteLength(before.slice(0, before.indexOf('é')))) % 2 === 0) notes = `a${notes}`;
    const cutLine = JSON.stringify(withNotes(notes)).slice(0, -100);
    const wrapped = JSON.stringify({ conversation: own[5] });
    const badDate = { ...own[8]!, conversationStart: '2019-04-5T10:00:00.000Z' };
    const [first11, ...rest11] = own[11]!.participants;
    const huge = { ...own[11]!, participants: [{ ...first11!, attributes: { notes: 'x'.repeat(MIB5) } }, ...rest11] };
    const lines = own.slice(0, 16).map((r) => JSON.stringify(r));
    lines[2] = cutLine;
    lines[5] = wrapped;
    lines[8] = JSON.stringify(badDate);
    lines[11] = JSON.stringify(huge);
    writeFileSync(ndjson, `${lines.join('\n')}\n`);
    // A details page whose third conversation has no date the server reads.
    const badStart = { ...own[18]!, conversationStart: 'yesterday' };
    writeFileSync(page, JSON.stringify({ conversations: [...own.slice(16, 18), badStart, ...own.slice(19)] }));

    const expected: RefusedLine[] = [
      { file: ndjson, line: 3, conversationId: 'import-ref-2', message: 'line is not JSON', text: first64KiB(cutLine) },
      { file: ndjson, line: 6, message: 'line holds an object with "conversation"', text: wrapped },
      {
        file: ndjson,
        line: 9,
        conversationId: 'import-ref-8',
        field: 'conversationStart',
        message: 'Dates must be ISO-8601',
        record: badDate,
      },
      { file: ndjson, line: 12, conversationId: 'import-ref-11', message: 'more than one request may carry', record: huge },
      {
        file: page,
        index: 2,
        conversationId: 'import-ref-18',
        field: 'conversationStart',
        message: 'Dates must be ISO-8601',
        record: badStart,
      },
    ];
    const refusedFile = path.join(dir, 'refused.ndjson');
    const run = await runImport(['--url', url, '--token', server.adminToken, '--refused', refusedFile, inputs]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    expect(summaryOf(run.stdout)).toMatchObject({ read: 24, stored: 19, refused: 5, notSent: 0 });
    expect(run.stdout).toContain(`refused file   5 records written to ${refusedFile}`);

    const written = readLines(refusedFile).sort(byPlace);
    expect(written).toHaveLength(expected.length);
    for (const [i, want] of expected.entries()) {
      const got = written[i]!;
      expect(Object.keys(got).sort(), `${want.file}:${want.line ?? want.index}`).toEqual(Object.keys(want).sort());
      expect(got.message).toContain(want.message);
      expect({ ...got, message: want.message }).toEqual(want);
    }
    const cut = written[0]!.text!;
    expect(Buffer.byteLength(cut)).toBeGreaterThan(64 * 1024 - 4);
    expect(cut.endsWith('é')).toBe(true);

    const kept = own.filter((_, i) => ![2, 5, 8, 11, 18].includes(i));
    const days = daysOf(own);
    expect(await query(days)).toEqual(tHandle(kept, ...days));

    // Fixed as a user would: each line's record mended, or given one where it held text; the rest of the line kept.
    const fixed = path.join(dir, 'refused-fixed.ndjson');
    const mended = (line: RefusedLine) => ({
      ...line,
      record: own.find((r) => r.conversationId === (line.conversationId ?? 'import-ref-5')),
    });
    writeFileSync(
      fixed,
      readLines(refusedFile)
        .map((line) => JSON.stringify(mended(line)))
        .join('\n'),
    );
    const again = path.join(dir, 'refused-again.ndjson');
    const rerun = await runImport(['--url', url, '--token', server.adminToken, '--refused', again, fixed]);
    expect(rerun.code, `${rerun.stdout}\n${rerun.stderr}`).toBe(0);
    expect(summaryOf(rerun.stdout)).toMatchObject({ read: 5, stored: 5, refused: 0 });
    expect(readFileSync(again, 'utf8')).toBe('');
    expect(await query(days)).toEqual(tHandle(own, ...days));

    // The refused file is never one of those read: it would be emptied before being read.
    const clash = await runImport(['--url', url, '--token', server.adminToken, '--refused', fixed, fixed]);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('is also a file to import');
    expect(readLines(fixed)).toHaveLength(5);
  }, 90_000);

  it('sends a request answered 413 again in two halves, down to one conversation, and stores every one that fits', async () => {
    const calls = recordsOf(path.join(FIXTURES, CALLS));
    const own = Array.from({ length: 40 }, (_, i) => withId(calls[i + 40]!, `import-413-${i}`, -2190 * DAY));
    const limit = 32 * 1024;
    const [first, ...rest] = own[20]!.participants;
    // Within our 5 MiB, over the proxy's limit on its own.
    const tooLarge = { ...own[20]!, participants: [{ ...first!, attributes: { notes: 'x'.repeat(limit) } }, ...rest] };
    const sent = own.map((r, i) => (i === 20 ? tooLarge : r));
    const file = path.join(dir, 'limited.ndjson');
    writeFileSync(file, sent.map((r) => JSON.stringify(r)).join('\n'));
    const whole = Buffer.byteLength(JSON.stringify({ conversations: sent }));
    const largest = Math.max(...sent.map((r) => Buffer.byteLength(JSON.stringify(r))));
    expect(whole).toBeGreaterThan(4 * limit);

    const proxy = await faultyProxy([], limit);
    const refusedFile = path.join(dir, 'limited-refused.ndjson');
    const run = await runImport(['--url', proxy.url, '--token', server.adminToken, '--refused', refusedFile, file]);
    await proxy.close();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    expect(summaryOf(run.stdout)).toMatchObject({ read: 40, stored: 39, refused: 1, notSent: 0 });

    const { answered } = proxy;
    // One request packed; each 413 to more than one conversation makes two requests of it: 2 × splits + 1 in all.
    const splits = answered.filter((r) => r.status === 413 && r.conversations > 1).length;
    expect(splits).toBeGreaterThanOrEqual(3);
    expect(answered).toHaveLength(2 * splits + 1);
    expect(answered[0]).toEqual({ bytes: whole, conversations: 40, status: 413 });
    // The requests in the order sent walk a tree: a request split is followed by its first half and all that
    // came of it, then its second half; the halves hold its conversations between them, about half its bytes each.
    let next = 0;
    const walk = (): { bytes: number; conversations: number } => {
      const request = answered[next++]!;
      if (request.status === 413 && request.conversations > 1) {
        const halves = [walk(), walk()];
        expect(halves[0]!.conversations + halves[1]!.conversations).toBe(request.conversations);
        for (const half of halves) expect(half.bytes).toBeLessThanOrEqual(request.bytes / 2 + largest);
      }
      return request;
    };
    walk();
    expect(next).toBe(answered.length);
    const stored = answered.filter((r) => r.status === 200);
    expect(stored.reduce((n, r) => n + r.conversations, 0)).toBe(39);
    for (const r of stored) expect(r.bytes).toBeLessThanOrEqual(limit);
    expect(answered.filter((r) => r.status === 413 && r.conversations === 1)).toHaveLength(1);
    expect(answered.every((r) => r.status === 200 || r.status === 413)).toBe(true);
    expect(run.stdout).toMatch(
      new RegExp(`^requests\\s+${answered.length} sent .*, 0 retries, ${splits} requests answered 413 and split in two, 0 failed`, 'm'),
    );

    const [refused] = readLines(refusedFile);
    expect(refused).toMatchObject({ file, line: 21, conversationId: 'import-413-20', record: tooLarge });
    expect(refused!.message).toMatch(/more than the server takes in a request \(it answered 413: <html>/);
    const kept = own.filter((_, i) => i !== 20);
    expect(await query(daysOf(own))).toEqual(tHandle(kept, ...daysOf(own)));

    // The summary names a --max-request-bytes that spares the splits: the largest request the proxy let
    // through, in whole KiB. Run again with it, no request is answered 413.
    const largestStored = Math.max(...stored.map((r) => r.bytes));
    const suggested = `${Math.floor(largestStored / 1024)}K`;
    expect(Math.floor(largestStored / 1024) * 1024).toBeLessThanOrEqual(limit);
    expect(run.stdout).toMatch(
      new RegExp(
        `^next time\\s+--max-request-bytes ${suggested} \\(the largest request stored was ${largestStored.toLocaleString('en-US')} bytes\\)`,
        'm',
      ),
    );
    const again = await faultyProxy([], limit);
    const rerun = await runImport(['--url', again.url, '--token', server.adminToken, '--max-request-bytes', suggested, file]);
    await again.close();
    expect(rerun.code, `${rerun.stdout}\n${rerun.stderr}`).toBe(1);
    expect(summaryOf(rerun.stdout)).toMatchObject({ read: 40, stored: 39, refused: 1, notSent: 0 });
    expect(again.answered.filter((r) => r.status !== 200)).toEqual([]);
    expect(rerun.stdout).not.toContain('next time');
  }, 90_000);
});

/** The requests `list` makes packed in order within `limit` bytes: each closed when the next record would not fit it. */
function packedWithin(list: readonly DetailRecord[], limit: number): { bytes: number; conversations: number }[] {
  const requests: { bytes: number; conversations: number }[] = [];
  for (const record of list) {
    const bytes = Buffer.byteLength(JSON.stringify(record));
    const open = requests.at(-1);
    if (open && open.bytes + 1 + bytes <= limit) {
      open.bytes += 1 + bytes;
      open.conversations++;
    } else requests.push({ bytes: '{"conversations":[]}'.length + bytes, conversations: 1 });
  }
  return requests;
}

/** The requests a dry run lists: conversations and bytes of each. */
const dryRunRequests = (out: string) =>
  [...out.matchAll(/^request \d+: ([\d,]+) conversations?, ([\d,]+) bytes/gm)].map(([, n, bytes]) => ({
    bytes: Number(bytes!.replaceAll(',', '')),
    conversations: Number(n!.replaceAll(',', '')),
  }));

/** `record` with notes that make a request holding it alone exactly `bytes` long. */
function requestOfBytes(record: DetailRecord, bytes: number): DetailRecord {
  const [first, ...rest] = record.participants;
  const withNotes = (notes: string) => ({ ...record, participants: [{ ...first!, attributes: { notes } }, ...rest] });
  const bare = Buffer.byteLength(JSON.stringify({ conversations: [withNotes('')] }));
  const sized = withNotes('x'.repeat(bytes - bare));
  expect(Buffer.byteLength(JSON.stringify({ conversations: [sized] }))).toBe(bytes);
  return sized;
}

describe('npm run import --max-request-bytes and --max-records', () => {
  it('with --max-request-bytes 32K packs within a proxy that takes 32 KiB: no 413, all that fits stored, one larger refused here', async () => {
    const limit = 32 * 1024;
    const calls = recordsOf(path.join(FIXTURES, CALLS));
    const own = Array.from({ length: 40 }, (_, i) => withId(calls[i]!, `import-cap-${i}`, -2555 * DAY));
    // Line 11 makes a request of exactly the limit on its own (sent); line 26 one byte more (refused unsent).
    own[10] = requestOfBytes(own[10]!, limit);
    own[25] = requestOfBytes(own[25]!, limit + 1);
    const file = path.join(dir, 'capped.ndjson');
    writeFileSync(file, own.map((r) => JSON.stringify(r)).join('\n'));
    const kept = own.filter((_, i) => i !== 25);
    const expected = packedWithin(kept, limit);
    expect(expected.length).toBeGreaterThanOrEqual(8);
    expect(expected).toContainEqual({ bytes: limit, conversations: 1 });

    const dry = await runImport(['--dry-run', '--max-request-bytes', '32K', file]);
    expect(dry.code, `${dry.stdout}\n${dry.stderr}`).toBe(1);
    expect(dryRunRequests(dry.stdout)).toEqual(expected);
    expect(dry.stdout).toMatch(/^requests\s+.* within 1,000 conversations and 32,768 bytes/m);

    const proxy = await faultyProxy([], limit);
    const refusedFile = path.join(dir, 'capped-refused.ndjson');
    const args = ['--url', proxy.url, '--token', server.adminToken, '--concurrency', '1', '--refused', refusedFile];
    const run = await runImport([...args, '--max-request-bytes', '32K', file]);
    await proxy.close();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    expect(summaryOf(run.stdout)).toMatchObject({ read: 40, stored: 39, refused: 1, notSent: 0 });
    expect(proxy.answered.filter((r) => r.status === 413)).toEqual([]);
    for (const r of proxy.answered) expect(r.bytes).toBeLessThanOrEqual(limit);
    expect(proxy.answered).toEqual(expected.map((r) => ({ ...r, status: 200 })));
    expect(run.stdout).not.toContain('next time');

    const [refused, ...more] = readLines(refusedFile);
    expect(more).toEqual([]);
    expect(refused).toMatchObject({ file, line: 26, conversationId: 'import-cap-25', record: own[25] });
    expect(refused!.message).toMatch(/more than one request may carry \(32,768 bytes .*--max-request-bytes/);
    expect(await query(daysOf(own))).toEqual(tHandle(kept, ...daysOf(own)));
  }, 90_000);

  it('with --max-records 7 packs at most 7 conversations a request, and its dry run says so', async () => {
    const calls = recordsOf(path.join(FIXTURES, CALLS));
    const own = Array.from({ length: 40 }, (_, i) => withId(calls[i + 100]!, `import-seven-${i}`, -2920 * DAY));
    const file = path.join(dir, 'sevens.ndjson');
    writeFileSync(file, own.map((r) => JSON.stringify(r)).join('\n'));
    // 40 conversations, 7 at a time: five requests of 7, one of the 5 left.
    const counts = [7, 7, 7, 7, 7, 5];

    const dry = await runImport(['--dry-run', '--max-records', '7', file]);
    expect(dry.code, `${dry.stdout}\n${dry.stderr}`).toBe(0);
    expect(dryRunRequests(dry.stdout).map((r) => r.conversations)).toEqual(counts);
    expect(dry.stdout).toMatch(/^requests\s+6 would be sent.* within 7 conversations and 5,242,880 bytes/m);

    const proxy = await faultyProxy([]);
    const run = await runImport(['--url', proxy.url, '--token', server.adminToken, '--concurrency', '1', '--max-records', '7', file]);
    await proxy.close();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(proxy.answered.map((r) => r.conversations)).toEqual(counts);
    expect(proxy.answered.every((r) => r.status === 200)).toBe(true);
    expect(summaryOf(run.stdout)).toMatchObject({ read: 40, stored: 40, refused: 0 });
    expect(await query(daysOf(own))).toEqual(tHandle(own, ...daysOf(own)));
  }, 60_000);

  it('takes --max-request-bytes in bytes, K, KiB, M or MiB; refuses a value out of range, or a --max-records, with exit code 2 naming the flag and its range', async () => {
    const calls = recordsOf(path.join(FIXTURES, CALLS));
    const file = path.join(dir, 'sizes.ndjson');
    writeFileSync(
      file,
      calls
        .slice(0, 12)
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const packing = async (...flags: string[]) => {
      const run = await runImport(['--dry-run', ...flags, file]);
      expect(run.code, `${flags.join(' ')}\n${run.stderr}`).toBe(0);
      return dryRunRequests(run.stdout);
    };
    const within16K = packedWithin(calls.slice(0, 12), 16 * 1024);
    for (const value of ['16384', '16K', '16KiB']) expect(await packing('--max-request-bytes', value)).toEqual(within16K);
    // 5 MiB is the most, and the default.
    expect(await packing('--max-request-bytes', '5M')).toEqual(await packing('--max-request-bytes', '5MiB'));
    expect(await packing('--max-request-bytes', '5MiB')).toEqual(packedWithin(calls.slice(0, 12), MIB5));

    for (const [flag, value, range] of [
      ['--max-request-bytes', '0', /to 5 MiB/],
      ['--max-request-bytes', '6M', /to 5 MiB/],
      ['--max-request-bytes', 'abc', /to 5 MiB/],
      ['--max-records', '1001', /from 1 to 1,000/],
      ['--max-records', '0', /from 1 to 1,000/],
    ] as const) {
      const run = await runImport(['--dry-run', flag, value, file]);
      expect(run.code, `${flag} ${value}`).toBe(2);
      const [message] = run.stderr.split('\n');
      expect(message).toMatch(new RegExp(`^import: ${flag} must be .*\\(got "${value}"\\)$`));
      expect(message).toMatch(range);
      expect(run.stderr).toContain('Usage: npm run import');
    }
  }, 90_000);
});
