/** The simulated traffic every analytics scenario uses, and where its data lives on disk. */
import path from 'node:path';
import { simulateConversations, simulationConfig, type SimulationOptions } from '../../scripts/simulator/index';
import { ROOT } from './wrangler';

export interface SimSpec {
  conversations: number;
  days: number;
  seed: number;
  /** End of the window (exclusive). Fixed so runs are comparable; queries a–d are placed inside it. */
  end: string;
}

export const FULL_SIM: SimSpec = { conversations: 1_000_000, days: 30, seed: 42, end: '2026-11-16T00:00:00.000Z' };
export const QUICK_SIM: SimSpec = { conversations: 20_000, days: 3, seed: 42, end: '2026-11-16T00:00:00.000Z' };

export function simOptions(spec: SimSpec): SimulationOptions {
  return { conversations: spec.conversations, days: spec.days, seed: spec.seed, end: new Date(spec.end) };
}

export function records(spec: SimSpec) {
  return simulateConversations(simOptions(spec));
}

export function agents(spec: SimSpec) {
  return simulationConfig(simOptions(spec)).agents;
}

/**
 * Bumped whenever the simulator's records or the observations derived from them change, so cached
 * data under bench/data is rebuilt instead of reused (2: issue 23's wider record and catalogue).
 */
const DATA_VERSION = 2;

export function specKey(spec: SimSpec): string {
  return `${spec.conversations}c-${spec.days}d-s${spec.seed}-${spec.end.slice(0, 10)}-v${DATA_VERSION}`;
}

export const DATA_DIR = path.join(ROOT, 'bench', 'data');
