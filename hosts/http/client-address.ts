import { isIPv6 } from 'node:net';
import type { Request } from 'express';
import { addressOf } from './rate-limit.ts';

/**
 * The client a sign-in failure is counted against (docs/decisions.md, "Sign-in throttles"): the IPv4 address,
 * or the /64 network of an IPv6 one, since one subscriber is routinely handed a whole /64 and could otherwise
 * try from a fresh address each time. Behind a proxy, what `trust proxy` makes of X-Forwarded-For.
 */
export function clientKeyOf(req: Request): string {
  const address = addressOf(req);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as 4 hex digits each ("::1" has seven zero groups before the 1). */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const part = (text: string) => (text ? text.split(':') : []);
  const groups = tail === undefined ? part(head) : [...part(head), ...Array(8 - part(head).length - part(tail).length).fill('0'), ...part(tail)];
  return groups.map((g) => g.padStart(4, '0').toLowerCase());
}
