import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * Where a webhook may be sent (SSRF): global unicast addresses only, as ipaddr.js classifies them. Its ranges are
 * kept with the registries' special-purpose lists (loopback, private, link-local with cloud metadata at
 * 169.254.169.254, carrier-grade NAT, reserved, documentation, benchmarking, multicast, and the IPv6 forms that
 * carry an IPv4 address: translated, 6to4, NAT64, Teredo); anything it calls other than 'unicast' is refused.
 * IPv6 must also lie in 2000::/3, the only block allocated for global unicast: ipaddr.js calls the rest of the
 * space 'unicast' too, the deprecated IPv4-compatible ::a.b.c.d (::7f00:1 is 127.0.0.1) among it.
 * An IPv4-mapped address (::ffff:a.b.c.d, however it is spelled) is judged as its IPv4 address.
 */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** The names and addresses WEBHOOKS_ALLOW_HTTP=true lets through, for a receiver on this machine (development). */
export const LOCALHOST_NAMES = new Set(['localhost', '127.0.0.1', '::1']);
const LOOPBACK = new Set(['127.0.0.1', '::1']);

/** The address as ipaddr.js reads it, a mapped IPv4 one as IPv4; null for anything but an IP address in its usual text. */
function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // node's own reading first: ipaddr.js alone would take 127.1 or 0x7f.0.0.1, which a resolver never answers
  if (isIP(address) === 0) return null;
  const ip = ipaddr.parse(address);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

export function forbiddenAddress(address: string): boolean {
  const ip = parsed(address);
  if (!ip) return true;
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST_V6)) return true;
  return ip.range() !== 'unicast';
}

/** Whether an address may receive a webhook for this host name: public ones always, loopback for an allowed localhost. */
export function allowedAddress(address: string, host: string, allowLocalhost: boolean): boolean {
  if (!forbiddenAddress(address)) return true;
  if (!allowLocalhost || !LOCALHOST_NAMES.has(host)) return false;
  const ip = parsed(address);
  return ip !== null && LOOPBACK.has(ip.toString());
}
