import { endSubtree } from '../bookings/end-subtree.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { checkLimitsFitRole, type LinkTerms } from './authority.ts';
import { ROLE_SCOPES } from './roles.ts';
import { childTokenTerms } from './token-terms.ts';

/**
 * A person's new role and limits, applied at once to their link and everything under it (docs/decisions.md, "One tree
 * of authority"), in the caller's transaction: the link takes the role's scopes and the member's limits (checked to fit
 * under the link's own parent by the one rule), their sessions and other ways in take the same role, and every API
 * token below keeps only the scopes the role still holds, ended with its subtree when none is left. Limits need no
 * copy: every spend, hours and burn check reads them along the chain. Answers the ids whose rows changed or ended,
 * for announceRevoked once committed (every replica forgets its cached rows).
 */
export async function narrowSubtree(uow: UnitOfWork, tenantId: string, nodeId: string, terms: Required<LinkTerms>, now: Date): Promise<string[]> {
  checkLimitsFitRole(terms);
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
  for (const token of subtree) {
    if (token.id === nodeId || token.revokedAt !== null || ended.has(token.id)) continue;
    if (token.kind !== 'api') {
      await uow.tokens.reshape(token.id, { scopes, role: terms.role, spendLimitCents: token.spendLimitCents, maxRentalHours: token.maxRentalHours });
      changed.push(token.id);
      continue;
    }
    const kept = token.scopes.filter((scope) => scopes.includes(scope));
    if (kept.length === token.scopes.length) continue;
    if (kept.length === 0) {
      for (const id of await endSubtree(uow, tenantId, token.id, now)) ended.add(id);
      continue;
    }
    await uow.tokens.reshape(token.id, { scopes: kept, role: null, spendLimitCents: token.spendLimitCents, maxRentalHours: token.maxRentalHours });
    changed.push(token.id);
  }
  return [...changed, ...ended];
}
