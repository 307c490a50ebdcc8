/**
 * Wall-screen mode: full width, large type, compact rows, the DOM trimmed to the latest messages.
 * On with `?wall=1` (off with `?wall=0`), else as the toggle last left it in this browser.
 */
const KEY = 'switchboard.wall';
const PARAM = 'wall';

export function wallFromUrlOrStorage(): boolean {
  const flag = new URLSearchParams(location.search).get(PARAM);
  if (flag === '1' || flag === 'true') return true;
  if (flag === '0' || flag === 'false') return false;
  try {
    return localStorage.getItem(KEY) === '1';
  } catch {
    return false; // storage refused (privacy settings): the toggle still works for this page
  }
}

/** Shows the page in wall mode or not; `remember`: the reader chose it (stored, and in the URL). */
export function applyWall(on: boolean, toggle: HTMLButtonElement, remember: boolean): void {
  document.documentElement.classList.toggle('wall', on);
  toggle.setAttribute('aria-pressed', String(on));
  if (!remember) return;
  try {
    localStorage.setItem(KEY, on ? '1' : '0');
  } catch {
    // Not remembered: nothing else depends on it.
  }
  const url = new URL(location.href);
  if (on) url.searchParams.set(PARAM, '1');
  else url.searchParams.delete(PARAM);
  history.replaceState(history.state, '', url);
}
