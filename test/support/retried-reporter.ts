/**
 * Names every test that passed only on a retry, with the error of its first attempt, at the end of the
 * run. The e2e project retries a failed test once (vitest.config.ts): its tests run a real wrangler dev
 * and Chromium on a loaded two-core machine, where a start-up or a browser's timer now and then misses.
 * A retry must not hide anything: vitest's own reporter says nothing of it, so this one does, on lines
 * starting `[retried]` that `npm test` repeats after its summary (scripts/test.ts).
 */
import type { Reporter, TestCase } from 'vitest/node';

export default class RetriedReporter implements Reporter {
  private readonly retried: string[] = [];

  onTestCaseResult(test: TestCase): void {
    const diagnostic = test.diagnostic();
    if (!diagnostic?.flaky) return;
    // A test that passed on a retry still reports its failed attempts' errors.
    const first = test.result().errors?.[0]?.message?.split('\n')[0]?.slice(0, 200) ?? 'no error kept';
    const where = `${test.project.name}  ${test.module.relativeModuleId} > ${test.fullName}`;
    this.retried.push(`[retried] ${where}: passed on retry ${diagnostic.retryCount}; first attempt: ${first}`);
  }

  onTestRunEnd(): void {
    if (this.retried.length === 0) return;
    process.stdout.write(`\n${this.retried.length} test(s) passed only on a retry:\n${this.retried.join('\n')}\n`);
  }
}
