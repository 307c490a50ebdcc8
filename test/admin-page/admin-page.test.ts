import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { ADMIN_PAGE_ASSET } from '../../src/admin-page/admin-page';
import { ADMIN_TOKEN, BASE, expectError, send } from '../helpers';

// The admin page is built into the static assets by scripts/build-page.ts (the global setup).

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "style-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
];

const asset = (path: string) => env.ASSETS.fetch(`${BASE}${path}`);

describe('the admin page', () => {
  it('is HTML with a strict CSP (requests to this origin only), one external module script, no inline script or style', async () => {
    const res = await send('GET', '/admin', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    expect(res.headers.get('Content-Security-Policy')!.split('; ')).toEqual(CSP);
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('Referrer-Policy')).toBe('no-referrer');
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    const html: string = res.body;
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toContain('type="module"');
    expect(scripts[0]![1]).toContain('src="/assets/admin/admin.js"');
    expect(scripts[0]![2]).toBe('');
    expect(html).toContain('<link rel="stylesheet" href="/assets/admin/admin.css">');
    expect(html).not.toMatch(/<style|style=|\son[a-z]+=|javascript:/i);
  });

  it('is where the base URL leads: GET / redirects to it; other methods on / are not found', async () => {
    // `redirect: 'manual'`: the test's fetch would follow it to the page otherwise.
    const root = await exports.default.fetch(new Request(`${BASE}/`, { redirect: 'manual' }));
    expect(root.status).toBe(302);
    expect(root.headers.get('Location')).toBe('/admin');
    await root.body?.cancel();
    expectError(await send('POST', '/', { token: null, json: {} }), 404, 'not.found');
  });

  it('asks for the token in a form that cannot put it in a URL: hidden until the script runs, no action, no named field', async () => {
    const html: string = (await send('GET', '/admin', { token: null })).body;
    const form = /<form id="token-form"([^>]*)>([\s\S]*?)<\/form>/.exec(html);
    expect(form).not.toBeNull();
    expect(form![1]).toContain('hidden');
    expect(form![1]).not.toMatch(/action=|method=/i);
    const input = /<input id="token"([^>]*)>/.exec(form![2]!);
    expect(input![1]).toContain('type="password"');
    // A field without a name is never submitted, and CSP's form-action 'none' blocks any submission anyway.
    expect(html).not.toMatch(/<(input|select|textarea)[^>]*\sname=/);
    expect(html).not.toMatch(/<form[^>]*\saction=/);
  });

  it('is the same for anyone: no token needed, none asked for in the URL, and a token sent along changes nothing', async () => {
    const anonymous = await send('GET', '/admin', { token: null });
    const withToken = await send('GET', '/admin', { token: ADMIN_TOKEN });
    expect(withToken.body).toBe(anonymous.body);
    const withQuery = await send('GET', '/admin?token=abc', { token: null });
    expect(withQuery.body).toBe(anonymous.body);
    expect(anonymous.body).not.toContain(ADMIN_TOKEN);
  });

  it('answers 404 for the page asset asked for by its own name', async () => {
    expectError(await send('GET', ADMIN_PAGE_ASSET, { token: null }), 404, 'not.found');
  });

  it('has its script as a static asset: the token kept in sessionStorage and sent as a header, never in a URL', async () => {
    const res = await asset('/assets/admin/admin.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('Cache-Control')).toBe('no-cache');
    const script = await res.text();
    expect(script).toContain('sessionStorage');
    expect(script).toContain('switchboard.adminToken');
    expect(script).toContain('Bearer ');
    expect(script).not.toContain('localStorage');
    expect(script).not.toMatch(/[?&]token=|searchParams\.set\(["']token/);
    expect(script).not.toMatch(/\beval\(|new Function|import\(|innerHTML|insertAdjacentHTML|document\.write/);
    for (const route of ['/api/v1/rooms', '/api/v1/webhooks', '/deliveries', '/rotate']) expect(script).toContain(route);
  });

  it('has its stylesheet as a static asset, with a dark scheme', async () => {
    const style = await asset('/assets/admin/admin.css');
    expect(style.status).toBe(200);
    expect(style.headers.get('Content-Type')).toBe('text/css; charset=utf-8');
    expect(await style.text()).toContain('prefers-color-scheme:dark');
  });
});
