import { endSubtree, releaseBookingsOf } from '../bookings/end-subtree.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { checkLimitsFitRole, type LinkTerms } from './authority.ts';
import { ROLE_SCOPES, roleWithin, type Role } from './roles.ts';
import type { Scope } from './scopes.ts';
import type { Token } from './token.ts';
import { childTokenTerms } from './token-terms.ts';
import { disableLapsedEndpoints } from '../webhooks/lapsed-endpoints.ts';

/** What a node of the subtree holds once the change reached it. */
interface Shape {
  scopes: Scope[];
  role: Role | null;
}

/**
 * What a node below the changed one keeps under its parent's new shape (docs/decisions.md, "One tree of authority"):
 * a session is its person, so it takes its link's role exactly; another person's link (someone this person invited or
 * linked) keeps their own role where it fits under the parent, else the most both allow, never more; an API token keeps
 * the scopes its parent still holds.
 */
function shapeUnder(token: Token, parent: Shape): Shape {
  if (token.kind === 'session') return { scopes: [...parent.scopes], role: parent.role };
  if (token.kind === 'link') {
    const role = roleWithin(token.role ?? 'viewer', parent.scopes);
    return { scopes: [...ROLE_SCOPES[role]], role };
  }
  return { scopes: token.scopes.filter((scope) => parent.scopes.includes(scope)), role: null };
}

const sameShape = (token: Token, shape: Shape) => token.role === shape.role && token.scopes.length === shape.scopes.length && token.scopes.every((scope) => shape.scopes.includes(scope));

/**
 * A person's new role and limits, applied at once to their link and everything under it (docs/decisions.md, "One tree
 * of authority"), in the caller's transaction: the link takes the role's scopes and the member's limits (checked to fit
 * under the link's own parent by the one rule), and then each node below, parents first, is fitted under its parent as
 * it now is: their sessions take the role; the people they invited or linked keep their own role where it fits, else are
 * narrowed, never widened (making someone an owner makes none of the people under them owners); every API token keeps
 * only the scopes its parent still holds, ended with its subtree when none is left. A token that can no longer rent
 * releases its pending spot claims and cancels its scheduled reservations, as an ended one does: nobody is left to rent
 * for; the webhook endpoints they registered are disabled if they could no longer register them (lapsed-endpoints.ts).
 * Limits need no copy: every spend, hours and burn check reads them along the chain. Answers the ids whose rows
 * changed or ended, for announceRevoked once committed (every replica forgets its cached rows).
 */
export async function narrowSubtree(uow: UnitOfWork, tenantId: string, nodeId: string, terms: Required<LinkTerms>, now: Date): Promise<string[]> {
  checkLimitsFitRole(terms);
  // the account before the tokens, as a rental takes them: bookings may be released and subtrees ended below
  await uow.accounts.lock(tenantId, now);
  const subtree = await uow.tokens.lockSubtree(tenantId, nodeId);
  const node = subtree.find((token) => token.id === nodeId);
  if (!node || node.revokedAt !== null) throw new Error(`no live link node ${nodeId}`);
  const scopes = [...ROLE_SCOPES[terms.role]];
  if (terms.role === 'owner' && node.parentId !== null) {
    // owners hang from the tenant itself (nothing above an owner's authority): the node moves up with its subtree
    await uow.tokens.moveToTop(tenantId, nodeId);
  } else if (node.parentId !== null) {
    const parentChain = await uow.tokens.chain(tenantId, node.parentId);
    childTokenTerms(parentChain, { scopes, ...(terms.spendLimitCents !== null ? { spendLimitCents: terms.spendLimitCents } : {}), ...(terms.maxRentalHours !== null ? { maxRentalHours: terms.maxRentalHours } : {}), idleTimeoutMinutes: parentChain[0]?.idleTimeoutMinutes ?? null }, now);
  }
  await uow.tokens.reshape(nodeId, { scopes, role: terms.role, spendLimitCents: terms.spendLimitCents, maxRentalHours: terms.maxRentalHours });
  const changed = [nodeId];
  const ended = new Set<string>();
  const lostRent: string[] = [];
  const shaped = new Map<string, Shape>([[nodeId, { scopes, role: terms.role }]]);
  // parents before their children: each is fitted under its parent's new shape
  const below = subtree.filter((token) => token.id !== nodeId && token.revokedAt === null).sort((a, b) => a.ancestorIds.length - b.ancestorIds.length);
  for (const token of below) {
    const parent = token.parentId === null ? undefined : shaped.get(token.parentId);
    if (ended.has(token.id) || !parent) continue;
    const shape = shapeUnder(token, parent);
    if (shape.scopes.length === 0) {
      for (const id of await endSubtree(uow, tenantId, token.id, now)) ended.add(id);
      continue;
    }
    shaped.set(token.id, shape);
    if (sameShape(token, shape)) continue;
    await uow.tokens.reshape(token.id, { scopes: shape.scopes, role: shape.role, spendLimitCents: token.spendLimitCents, maxRentalHours: token.maxRentalHours });
    changed.push(token.id);
    if (token.scopes.includes('rent') && !shape.scopes.includes('rent')) lostRent.push(token.id);
  }
  if (lostRent.length > 0) await releaseBookingsOf(uow, tenantId, lostRent, now);
  // what the person, or a token under them, registered hears the whole tenant no more once they are a member
  await disableLapsedEndpoints(uow, tenantId, now);
  return [...changed, ...ended];
}
