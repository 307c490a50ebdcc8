/**
 * Where the benchmark's local D1 and Durable Object files live (`wrangler dev --persist-to`).
 *
 * `wrangler dev` commits every Durable Object and D1 write with an fsync on the one workerd thread
 * that also runs the Worker and every object, so each commit stalls all of them for as long as this
 * VM's disk takes to sync (measured with `perf trace`: p50 0.4 ms, p99 5.7 ms, max 68 ms per fsync,
 * about one per webhook post; a 1,000-conversation ingest syncs MBs of WAL). On Cloudflare's edge
 * storage durability is not waited for on the isolate's thread. So, like the gzip and
 * permessage-deflate that `wrangler dev` adds (README, "Benchmarks"), the timed runs keep this
 * scratch data in memory (a tmpfs directory) by default; `--store disk` puts it under bench/data,
 * and the chat scenario measures the steady rate and one room on disk as well, side by side.
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DATA_DIR } from './sim';

export type StoreKind = 'memory' | 'disk';

/** tmpfs on Linux; the benchmark's data is scratch, rebuilt by every run (or reused by --reuse). */
const MEMORY_ROOT = '/dev/shm/switchboard-bench';

let kind: StoreKind = memoryAvailable() ? 'memory' : 'disk';

function memoryAvailable(): boolean {
  try {
    if (!statSync('/dev/shm').isDirectory()) return false;
    accessSync('/dev/shm', constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Chooses where later calls of storeDir() point; 'memory' falls back to disk where there is no tmpfs. */
export function useStore(wanted: StoreKind): StoreKind {
  kind = wanted === 'memory' && !memoryAvailable() ? 'disk' : wanted;
  return kind;
}

export function storeKind(): StoreKind {
  return kind;
}

/** The persist directory named `name` in the chosen store (created), or in the given one. */
export function storeDir(name: string, where: StoreKind = kind): string {
  const root = where === 'memory' ? MEMORY_ROOT : DATA_DIR;
  mkdirSync(root, { recursive: true });
  return path.join(root, name);
}

/** An existing persist directory `name` of an earlier run: in memory if there, else on disk. */
export function findStoreDir(name: string): string {
  const inMemory = path.join(MEMORY_ROOT, name);
  return existsSync(inMemory) ? inMemory : path.join(DATA_DIR, name);
}
