/**
 * CPU profiles of workerd isolates through workerd's DevTools inspector (the Worker's workerd has
 * its own inspector port; /json/list names each isolate: `core:user:<worker>`, `d1:db`, …).
 * Self time is summed per function and per source module of the bundle (esbuild marks each
 * module with a `// src/…` comment, so a bundle line maps back to its src file).
 */
import { readFileSync } from 'node:fs';
import { WebSocket } from 'undici';
import { listeningPorts } from '../lib/proc';

interface CdpProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

export interface CdpProfile {
  nodes: CdpProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

class Cdp {
  private nextId = 1;
  /** Subrequests the isolate made (Network.requestWillBeSent), by method and URL without the query. */
  readonly requests = new Map<string, number>();
  counting = false;
  /** Events by method (e.g. HeapProfiler.addHeapSnapshotChunk), for whoever listens. */
  readonly listeners = new Map<string, (params: unknown) => void>();
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (event) => {
      const msg = JSON.parse(String(event.data)) as {
        id?: number;
        method?: string;
        params?: { request?: { url: string; method: string } };
        result?: unknown;
        error?: { message: string };
      };
      if (msg.method === 'Network.requestWillBeSent' && this.counting && msg.params?.request) {
        const key = `${msg.params.request.method} ${msg.params.request.url.replace(/\?.*$/, '')}`;
        this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
      }
      if (msg.method !== undefined) this.listeners.get(msg.method)?.(msg.params);
      if (msg.id === undefined) return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error.message));
      else p.resolve(msg.result);
    });
  }

  static open(url: string): Promise<Cdp> {
    return new Promise((resolve, reject) => {
      // wrangler's inspector proxy admits DevTools' own origin only.
      const ws = new WebSocket(url, { headers: { Origin: 'https://devtools.devprod.cloudflare.dev' } });
      ws.addEventListener('open', () => resolve(new Cdp(ws)));
      ws.addEventListener('error', () => reject(new Error(`cannot open ${url}`)));
    });
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`inspector: no answer to ${method} within 60 s`));
      }, 60_000);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * The inspector targets: the Worker's own isolate through wrangler's inspector port (wrangler
 * already holds the runtime's one session for it and relays DevTools), every other isolate (`d1:db:…`
 * and the like) straight from workerd's inspector. Id → WebSocket URL; the Worker is `worker`.
 */
export async function inspectorTargets(workerdPid: number, wranglerInspectorPort: number): Promise<Map<string, string>> {
  const targets = await workerdTargets(workerdPid);
  const res = await fetch(`http://127.0.0.1:${wranglerInspectorPort}/json/list`, { signal: AbortSignal.timeout(5000) });
  const list = (await res.json()) as { id: string; webSocketDebuggerUrl: string }[];
  if (list[0]) targets.set('worker', list[0].webSocketDebuggerUrl);
  return targets;
}

/** The inspector targets of a workerd process: id (e.g. `core:user:switchboard`) → WebSocket URL. */
async function workerdTargets(workerdPid: number): Promise<Map<string, string>> {
  for (const port of listeningPorts(workerdPid)) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2000) });
      if (!res.ok) continue;
      const list = (await res.json()) as { id: string; webSocketDebuggerUrl: string }[];
      return new Map(list.map((t) => [t.id, t.webSocketDebuggerUrl]));
    } catch {
      // not the inspector
    }
  }
  throw new Error(`no inspector found on workerd ${workerdPid}`);
}

export class Profiler {
  private constructor(private readonly sessions: { name: string; cdp: Cdp }[]) {}

  static async attach(targets: Map<string, string>, names: string[]): Promise<Profiler> {
    const sessions = [];
    for (const name of names) {
      const url = targets.get(name);
      if (!url) throw new Error(`no inspector target ${name} (have ${[...targets.keys()].join(', ')})`);
      const cdp = await Cdp.open(url);
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      sessions.push({ name, cdp });
    }
    return new Profiler(sessions);
  }

  async start(): Promise<void> {
    for (const s of this.sessions) {
      if (s.name === 'worker') await s.cdp.send('Network.enable').catch(() => undefined);
      s.cdp.counting = true;
      await s.cdp.send('Profiler.start');
    }
  }

  /** Subrequests each session saw while profiling (the Worker's D1 calls show as fetches to http://d1/…). */
  requests(): Record<string, Record<string, number>> {
    return Object.fromEntries(this.sessions.map((s) => [s.name, Object.fromEntries(s.cdp.requests)]));
  }

  async stop(): Promise<Map<string, CdpProfile>> {
    const out = new Map<string, CdpProfile>();
    for (const s of this.sessions) {
      s.cdp.counting = false;
      const { profile } = await s.cdp.send<{ profile: CdpProfile }>('Profiler.stop');
      out.set(s.name, profile);
    }
    return out;
  }

  close(): void {
    for (const s of this.sessions) s.cdp.close();
  }
}

/** A node of V8's sampling heap profile (HeapProfiler.stopSampling). */
interface SamplingHeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingHeapNode[];
}

/**
 * V8's sampling heap profiler on one isolate: where the bytes allocated while it runs come from
 * (live or not; the collector's work grows with them). Per function, the sampled bytes.
 */
export class AllocationSampler {
  private constructor(private readonly cdp: Cdp) {}

  static async attach(targets: Map<string, string>, name: string): Promise<AllocationSampler> {
    const url = targets.get(name);
    if (!url) throw new Error(`no inspector target ${name} (have ${[...targets.keys()].join(', ')})`);
    const cdp = await Cdp.open(url);
    await cdp.send('HeapProfiler.enable');
    return new AllocationSampler(cdp);
  }

  async start(): Promise<void> {
    // Collected objects count too: what the collector had to deal with, not only what stayed.
    await this.cdp.send('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }

  /** Sampled bytes per function (`name @ module`), largest first. */
  async stop(moduleOf: (url: string, line: number) => string): Promise<[string, number][]> {
    const { profile } = await this.cdp.send<{ profile: { head: SamplingHeapNode } }>('HeapProfiler.stopSampling');
    const bytes = new Map<string, number>();
    const walk = (node: SamplingHeapNode) => {
      const f = node.callFrame;
      const key = `${f.functionName || '(anonymous)'} @ ${f.url ? moduleOf(f.url, f.lineNumber) : '(native)'}`;
      if (node.selfSize > 0) bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    return [...bytes].sort((a, b) => b[1] - a[1]);
  }

  close(): void {
    this.cdp.close();
  }
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  /** Self time by function (name @ module:line). */
  functions: { name: string; ms: number }[];
  /** Self time by source module (bundle sections), plus the runtime's own buckets. */
  modules: { name: string; ms: number }[];
}

/** Maps a 0-based bundle line to the src module esbuild placed there. */
export function bundleModules(bundlePath: string): (line: number) => string {
  const lines = readFileSync(bundlePath, 'utf8').split('\n');
  const starts: { line: number; module: string }[] = [];
  lines.forEach((text, i) => {
    const m = /^\/\/ ((?:src|node_modules|scripts)\/\S+)$/.exec(text);
    if (m)
      starts.push({ line: i, module: m[1]!.replace(/^node_modules\/(\.pnpm\/)?/, 'npm:').replace(/^(npm:(@[^/]+\/)?[^/]+)\/.*$/, '$1') });
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '(bundle prelude)';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.module;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

export function summarizeProfile(profile: CdpProfile, moduleOf: ((url: string, line: number) => string) | undefined): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    const f = node.callFrame;
    total += ms;
    if (f.functionName === '(idle)') {
      idle += ms;
      continue;
    }
    const module = f.url
      ? moduleOf
        ? moduleOf(f.url, f.lineNumber)
        : f.url
      : f.functionName.startsWith('(')
        ? f.functionName
        : `(native) ${f.functionName}`;
    const name = `${f.functionName || '(anonymous)'} @ ${module}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + ms);
    mod.set(module, (mod.get(module) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
  return { totalMs: total, idleMs: idle, functions: sorted(fn), modules: sorted(mod) };
}

/** `promise`, or undefined once `ms` have passed (the timer is cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let clear = () => {};
  const timeout = new Promise<undefined>((resolve) => {
    const timer = setTimeout(resolve, ms);
    clear = () => clearTimeout(timer);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clear();
  }
}

/** V8 heap in use (`Runtime.getHeapUsage`) of each named isolate, in bytes: to tell a JS heap that grows from one that does not. */
export async function heapUsage(targets: Map<string, string>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [name, url] of targets) {
    // An isolate whose one session wrangler holds never opens a second: give up after 3 s.
    const cdp = await within(Cdp.open(url), 3000).catch(() => undefined);
    if (!cdp) continue;
    try {
      const usage = await within(cdp.send<{ usedSize: number }>('Runtime.getHeapUsage'), 3000);
      if (usage) out.set(name, usage.usedSize);
    } catch {
      // not a JS isolate's target
    } finally {
      cdp.close();
    }
  }
  return out;
}

/**
 * Samples one isolate's V8 heap in use (`Runtime.getHeapUsage`) while something runs: the peak since
 * the last `baseline()`, which collects garbage first. The peak counts garbage not yet collected too,
 * so it is an upper bound of what the work held (a deployed isolate collects sooner, near its 128 MB).
 */
export class HeapSampler {
  private peakBytes = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  private constructor(
    private readonly cdp: Cdp,
    private readonly withBuffers: boolean,
  ) {}

  /**
   * `withBuffers`: count ArrayBuffer backing stores (`backingStorageSize`: typed arrays, the bytes of
   * an answer being written) with the heap, as a deployed isolate's 128 MB does.
   */
  static async open(url: string, withBuffers = false): Promise<HeapSampler> {
    return new HeapSampler(await Cdp.open(url), withBuffers);
  }

  private async used(): Promise<number> {
    const usage = await this.cdp.send<{ usedSize: number; backingStorageSize?: number }>('Runtime.getHeapUsage');
    return usage.usedSize + (this.withBuffers ? (usage.backingStorageSize ?? 0) : 0);
  }

  /**
   * Collects garbage, then starts sampling every `everyMs`; answers the heap in use after the collection.
   * V8 answers a collection from a task of the isolate's, which workerd runs only while the isolate
   * serves something: `poke` (e.g. a cheap request), when given, is called until the answer comes.
   */
  async baseline(everyMs = 100, poke?: () => Promise<unknown>): Promise<number> {
    const collected = this.cdp.send('HeapProfiler.collectGarbage');
    if (poke) {
      let done = false;
      collected.then(
        () => {
          done = true;
        },
        () => {
          done = true;
        },
      );
      while (!done) {
        await poke().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    await collected;
    const used = await this.used();
    this.peakBytes = used;
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      this.used().then(
        (u) => {
          this.peakBytes = Math.max(this.peakBytes, u);
        },
        () => undefined,
      );
    }, everyMs);
    return used;
  }

  /** The heap in use now, without collecting. */
  now(): Promise<number> {
    return this.used();
  }

  /** The peak seen since the baseline, sampling on. */
  peak(): number {
    return this.peakBytes;
  }

  /** Stops sampling; the peak seen since the baseline. */
  stop(): number {
    clearInterval(this.timer);
    return this.peakBytes;
  }

  close(): void {
    clearInterval(this.timer);
    this.cdp.close();
  }
}

/** What a heap snapshot holds, by kind and name: self bytes and objects, largest first. */
export interface HeapSummaryRow {
  kind: string;
  name: string;
  bytes: number;
  count: number;
}

/**
 * A heap snapshot of one isolate (V8 collects first), summarised by node kind (object, closure, code,
 * string, array…) and name (an object's constructor, a closure's function, a code object's name).
 * Strings are summed under one row. `poke` keeps the isolate serving while V8 answers (see HeapSampler).
 */
export async function heapSnapshotSummary(
  url: string,
  poke?: () => Promise<unknown>,
): Promise<{ total: number; rows: HeapSummaryRow[]; strings: HeapSummaryRow[] }> {
  const cdp = await Cdp.open(url);
  try {
    const chunks: string[] = [];
    cdp.listeners.set('HeapProfiler.addHeapSnapshotChunk', (p) => chunks.push((p as { chunk: string }).chunk));
    await cdp.send('HeapProfiler.enable');
    const taken = cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    let done = false;
    taken.then(
      () => (done = true),
      () => (done = true),
    );
    while (!done && poke) {
      await poke().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await taken;
    const snap = JSON.parse(chunks.join('')) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
      nodes: number[];
      strings: string[];
    };
    const fields = snap.snapshot.meta.node_fields;
    const types = snap.snapshot.meta.node_types[0];
    const width = fields.length;
    const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
    const rows = new Map<string, HeapSummaryRow>();
    let total = 0;
    for (let i = 0; i < snap.nodes.length; i += width) {
      const kind = types[snap.nodes[i + typeAt]!]!;
      const raw = snap.strings[snap.nodes[i + nameAt]!]!;
      const name = kind === 'string' || kind === 'concatenated string' || kind === 'sliced string' ? '' : raw.slice(0, 60);
      const bytes = snap.nodes[i + sizeAt]!;
      total += bytes;
      const key = `${kind}\u0000${name}`;
      const row = rows.get(key) ?? { kind, name, bytes: 0, count: 0 };
      row.bytes += bytes;
      row.count++;
      rows.set(key, row);
    }
    // The largest strings one by one (a bundle's source text is one).
    const strings: HeapSummaryRow[] = [];
    for (let i = 0; i < snap.nodes.length; i += width) {
      const kind = types[snap.nodes[i + typeAt]!]!;
      if (kind !== 'string' || snap.nodes[i + sizeAt]! < 16_384) continue;
      strings.push({
        kind,
        name: JSON.stringify(snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 80)),
        bytes: snap.nodes[i + sizeAt]!,
        count: 1,
      });
    }
    strings.sort((a, b) => b.bytes - a.bytes);
    return { total, rows: [...rows.values()].sort((a, b) => b.bytes - a.bytes), strings: strings.slice(0, 15) };
  } finally {
    cdp.close();
  }
}
