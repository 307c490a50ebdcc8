/**
 * Says where a long set-up or test was when it runs past its time. vitest ends a hook or a test that
 * overruns with "timed out" and nothing more, while its work goes on unseen: twice a CI run lost the
 * room-page history file's set-up so, and once the SDK's job test, with no way to tell which step hung.
 * A watchdog notes each step with its time; when `done()` has not come `reportAfterMs` after the start
 * (set it below the hook's or test's timeout), the steps so far and wrangler dev's last lines go to
 * stderr, where the e2e part's output keeps them.
 */
import type { DevServer } from './dev-server';

export interface Watchdog {
  /** Notes that `label` starts now. */
  step(label: string): void;
  /** The work ended (either way): nothing is reported. */
  done(): void;
}

export function watchdog(name: string, reportAfterMs: number, server: () => DevServer | undefined): Watchdog {
  const started = Date.now();
  const steps: string[] = [];
  const step = (label: string) => {
    steps.push(`  ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${label}`);
  };
  step('start');
  const timer = setTimeout(() => {
    const tail = server()?.logTail(30) ?? '(no dev server yet)';
    process.stderr.write(
      `[e2e] ${name}: still running after ${reportAfterMs / 1000} s; its steps so far:\n${steps.join('\n')}\n` +
        `wrangler dev's last lines:\n${tail}\n`,
    );
  }, reportAfterMs);
  timer.unref();
  return { step, done: () => clearTimeout(timer) };
}
