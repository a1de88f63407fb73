import { managesTenant, personRoleOf } from '../tenancy/tenant-manage.ts';
import { isActive, isIdle, type Token } from '../tenancy/token.ts';

/**
 * An endpoint delivers only while its registrant could still register it (docs/decisions.md, "One tree of authority",
 * and docs/webhooks.md): an endpoint hears every event of the tenant, so the authority that opened it must last as long
 * as it does. Judged on the node the registrant acts for and every node above it: a console session registers for its
 * person (their link), as it acts for them (token.ts, actingNodeId), so signing out or a session's 30 days running out
 * leave the person's endpoints alone, while the person's removal or demotion does not.
 */

/** The nodes an endpoint's standing rests on: its registrant's chain, from the person's link up when a session registered it. */
const standingChain = (chain: readonly Token[]): readonly Token[] => (chain[0]?.kind === 'session' && chain.length > 1 ? chain.slice(1) : chain);

const nodeName = (node: Token): string => (node.kind === 'api' ? `token ${node.id}` : node.kind === 'session' ? `console session ${node.id}` : 'its person');

const howItEnded = (node: Token, now: Date): string => {
  if (isIdle(node, now)) return `${nodeName(node)} timed out idle`;
  if (node.revokedAt !== null) return node.kind === 'link' ? 'its person was removed from the tenant' : `${nodeName(node)} was revoked`;
  return `${nodeName(node)} expired at ${node.expiresAt!.toISOString()}`;
};

/**
 * Why an endpoint registered by the head of `chain` (the registrant, then its ancestors nearest first) may deliver no
 * more, in words for the endpoint's `disabled_reason`; null while it may. An empty chain (no such token) has lapsed.
 */
export function registrantLapse(chain: readonly Token[], now: Date): string | null {
  const held = standingChain(chain);
  if (held.length === 0) return 'the credential that registered it is gone';
  // the topmost node that ended is where it ended: a revoked parent ends its children with it
  const ended = held.findLast((node) => !isActive(node, now));
  if (ended) return `the credential that registered it ended: ${howItEnded(ended, now)}`;
  if (managesTenant(held)) return null;
  return personRoleOf(held) === 'member'
    ? "the credential that registered it is now a member's, and a member's manage does not reach the whole tenant"
    : 'the credential that registered it no longer has manage';
}
