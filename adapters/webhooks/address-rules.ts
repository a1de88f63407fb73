import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may never be sent (SSRF): loopback, private, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, unspecified, multicast and reserved ranges, and their IPv4-mapped IPv6 forms.
 */
const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32], ['100::', 64],
] as const) FORBIDDEN.addSubnet(net, prefix, 'ipv6');

/** The names and addresses WEBHOOKS_ALLOW_HTTP=true lets through, for a receiver on this machine (development). */
export const LOCALHOST_NAMES = new Set(['localhost', '127.0.0.1', '::1']);
const LOOPBACK = new Set(['127.0.0.1', '::1']);

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as its IPv4 address. */
const unmapped = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
};

export function forbiddenAddress(address: string): boolean {
  const plain = unmapped(address);
  const family = isIP(plain);
  if (family === 0) return true;
  return FORBIDDEN.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** Whether an address may receive a webhook for this host name: public ones always, loopback for an allowed localhost. */
export function allowedAddress(address: string, host: string, allowLocalhost: boolean): boolean {
  if (!forbiddenAddress(address)) return true;
  return allowLocalhost && LOCALHOST_NAMES.has(host) && LOOPBACK.has(unmapped(address));
}
