/**
 * Which image URLs the proxy fetches, the same rule for the renderer and sender icons (they sign only
 * these) and for the proxy (it checks every URL again, redirect targets included). A Worker cannot
 * resolve names, so the rule is on the URL: https on the default port, no credentials, no IP literal,
 * no name that only means something on a private network. A public name that resolves to a private
 * address is not caught here; a deployed Worker's subrequests leave from Cloudflare's network, not
 * from the deployer's (docs/limits.md, "Images and sender icons").
 */

/** Single names and suffixes that name loopback, link-local or private networks, or never resolve publicly. */
const PRIVATE_SUFFIXES = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'private',
  'arpa',
  'test',
  'invalid',
  'onion',
];

export function imageUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:') return 'not https';
  if (url.username !== '' || url.password !== '') return 'carries credentials';
  if (url.port !== '') return 'not on the default https port';
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  // The URL parser has already turned every IPv4 spelling (decimal, octal, hex, short) into dotted
  // form, and IPv6 is bracketed: any address literal, public or not, is refused.
  if (host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host)) return 'an IP address, not a name';
  if (!host.includes('.')) return 'a single-label host';
  const last = host.slice(host.lastIndexOf('.') + 1);
  if (/^\d+$/.test(last)) return 'an IP address, not a name';
  if (PRIVATE_SUFFIXES.includes(last) || host.endsWith('.home.arpa')) return 'a private or reserved name';
  return undefined;
}
