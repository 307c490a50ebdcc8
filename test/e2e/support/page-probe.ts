/**
 * What a page did, seen from outside the page's own code: trap hits, dialogs, requests, CSP
 * violations, WebSockets and the connection indicator's states. The in-page part is plain browser
 * JavaScript, installed before any of the page's scripts run (and in every frame).
 */
import type { Page } from 'playwright-core';

/**
 * `__xss` is a trap: reading it gives a recording function, assigning it records the value; it
 * cannot be redefined. Frames report to the top window when they can reach it.
 */
const INIT_SCRIPT = `(() => {
  const top = (() => { try { return window.top && window.top.__probe ? window.top : window; } catch { return window; } })();
  const probe = top === window ? { hits: [], csp: [], states: [], loadId: Math.random().toString(36).slice(2) } : top.__probe;
  if (top === window) Object.defineProperty(window, '__probe', { value: probe, configurable: false });
  const hit = (how, value) => probe.hits.push({ how, value: String(value), frame: String(location.href).slice(0, 200) });
  Object.defineProperty(window, '__xss', {
    configurable: false,
    get() { return (value) => hit('call', value); },
    set(value) { hit('set', value); },
  });
  document.addEventListener('securitypolicyviolation', (e) => {
    probe.csp.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample, source: e.sourceFile + ':' + e.lineNumber });
  }, true);
  if (top !== window) return;
  const watchState = () => {
    const el = document.getElementById('state');
    if (!el) return;
    const note = () => {
      const last = probe.states[probe.states.length - 1];
      if (!last || last.kind !== el.className || last.text !== el.textContent) {
        probe.states.push({ kind: el.className, text: el.textContent, at: Date.now() });
      }
    };
    note();
    new MutationObserver(note).observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watchState);
  else watchState();
})();`;

export interface StateChange {
  kind: string;
  text: string;
  at: number;
}

export interface PageReport {
  hits: { how: string; value: string; frame: string }[];
  csp: { directive: string; blocked: string; sample: string; source: string }[];
  states: StateChange[];
  loadId: string;
}

export interface Probe {
  dialogs: string[];
  /** Every request the page made to anything but the server (and the allowed URLs), with its kind. */
  foreign: string[];
  /** Requests to allowed foreign URLs (answered with an abort: nothing leaves the machine). */
  allowedForeign: string[];
  webSockets: string[];
  pageErrors: string[];
  report(): Promise<PageReport>;
}

/**
 * Installs the probe on a page before it navigates. Requests are answered by the route: the
 * server's origin goes through, everything else is aborted and recorded as foreign unless listed
 * in `allowed` (exact URLs, e.g. a legitimate https image that cannot load offline).
 */
export async function attachProbe(page: Page, origin: string, allowed: readonly string[] = []): Promise<Probe> {
  const probe: Probe = {
    dialogs: [],
    foreign: [],
    allowedForeign: [],
    webSockets: [],
    pageErrors: [],
    async report() {
      return (await page.evaluate('window.__probe')) as PageReport;
    },
  };
  await page.addInitScript({ content: INIT_SCRIPT });
  page.on('dialog', (dialog) => {
    probe.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('pageerror', (err) => probe.pageErrors.push(err.message));
  page.on('websocket', (ws) => {
    probe.webSockets.push(ws.url());
    if (!ws.url().startsWith(`${origin.replace(/^http/, 'ws')}/`)) probe.foreign.push(`websocket ${ws.url()}`);
  });
  // Whatever the route does not see (data:, blob:, about:) still shows up here.
  page.on('request', (req) => {
    const url = req.url();
    if (url.startsWith(`${origin}/`) || allowed.includes(url) || url === 'about:blank') return;
    if (!/^https?:/.test(url)) probe.foreign.push(`${req.resourceType()} ${url.slice(0, 200)}`);
  });
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    if (allowed.includes(url)) probe.allowedForeign.push(url);
    else probe.foreign.push(`${route.request().resourceType()} ${url.slice(0, 200)}`);
    return route.abort('blockedbyclient');
  });
  return probe;
}
