/**
 * Linux /proc readers: process trees, listening ports, peak memory and CPU time of a process.
 * The benchmark uses them to find the workerd processes `wrangler dev` starts and to account for
 * where the machine's two cores went during a step.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  cmdline: string;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export function processInfo(pid: number): ProcInfo | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name may hold spaces and parentheses: the fields after it start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cmdline = (readText(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim();
  return { pid, ppid: Number(fields[1]), cmdline };
}

/** Every live descendant of `root` (not `root` itself). */
export function descendants(root: number): ProcInfo[] {
  const all: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = processInfo(Number(name));
    if (info) all.push(info);
  }
  const out: ProcInfo[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop()!;
    for (const p of all) {
      if (p.ppid === parent) {
        out.push(p);
        frontier.push(p.pid);
      }
    }
  }
  return out;
}

/** TCP ports `pid` listens on (IPv4 and IPv6), from its socket inodes. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m) inodes.add(m[1]!);
    } catch {
      // fd closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    const text = readText(table);
    if (!text) continue;
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A') continue; // 0A = LISTEN
      if (!inodes.has(cols[9]!)) continue;
      ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** Peak resident set size (VmHWM) and current RSS (VmRSS), in bytes. */
export function memory(pid: number): { peakRss: number; rss: number } | undefined {
  const status = readText(`/proc/${pid}/status`);
  if (!status) return undefined;
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { peakRss: kb('VmHWM'), rss: kb('VmRSS') };
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** User + system CPU seconds `pid` has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return NaN;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state(0) ppid(1) … utime(11) stime(12)
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU seconds used by the whole machine (all cores), from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = (readText('/proc/stat') ?? '').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}

/**
 * Measures CPU seconds per named process between `start()` and `stop()`, with this Node process
 * included as "bench client".
 */
export class CpuMeter {
  private startValues = new Map<string, number>();
  private startMachine = machineCpuSeconds();
  private startSelf = process.cpuUsage();
  private startedAt = performance.now();

  constructor(private readonly pids: () => Record<string, number | undefined>) {
    this.start();
  }

  start(): void {
    this.startValues.clear();
    for (const [name, pid] of Object.entries(this.pids())) if (pid !== undefined) this.startValues.set(name, cpuSeconds(pid));
    this.startMachine = machineCpuSeconds();
    this.startSelf = process.cpuUsage();
    this.startedAt = performance.now();
  }

  stop(): { wallSeconds: number; machineBusy: number; perProcess: Record<string, number> } {
    const wallSeconds = (performance.now() - this.startedAt) / 1000;
    const perProcess: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids())) {
      const before = this.startValues.get(name);
      if (pid !== undefined && before !== undefined) perProcess[name] = cpuSeconds(pid) - before;
    }
    const self = process.cpuUsage(this.startSelf);
    perProcess['bench client'] = (self.user + self.system) / 1e6;
    const m = machineCpuSeconds();
    return { wallSeconds, machineBusy: m.busy - this.startMachine.busy, perProcess };
  }
}

/** CPU seconds per thread of `pid` (name → seconds), busiest first. */
export function threadCpuSeconds(pid: number): { tid: number; name: string; seconds: number }[] {
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out = [];
  for (const tid of tids) {
    const stat = readText(`/proc/${pid}/task/${tid}/stat`);
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const name = (readText(`/proc/${pid}/task/${tid}/comm`) ?? '').trim();
    out.push({ tid: Number(tid), name, seconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS });
  }
  return out.sort((a, b) => b.seconds - a.seconds);
}
