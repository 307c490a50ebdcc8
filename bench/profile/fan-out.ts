/**
 * `npx tsx bench/profile/fan-out.ts [--conversations 30000] [--runs 100] [--reuse]`
 *
 * Scenario 6 of `npm run bench` (bench/scenarios/partitions.ts) on its own: what a query pays per
 * analytics partition it fans out to, one database against three of ten days each. Bundles a snapshot
 * of src/ into bench/data/fan-out/build. `--reuse` queries the databases an earlier run left in the store.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Results } from '../lib/results';
import { DATA_DIR } from '../lib/sim';
import { snapshotWorker } from '../lib/wrangler';
import { partitionsScenario } from '../scenarios/partitions';

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '30000' },
    runs: { type: 'string', default: '100' },
    reuse: { type: 'boolean', default: false },
  },
});
const results = new Results();
await partitionsScenario({
  results,
  workerConfig: snapshotWorker(path.join(DATA_DIR, 'fan-out', 'build')).config,
  quick: false,
  detail: {},
  conversations: Number(values.conversations),
  runs: Number(values.runs),
  reuse: values.reuse === true,
});
console.log(results.table());
