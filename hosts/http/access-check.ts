import { DomainError } from '../../core/errors.ts';
import { rootRequired } from '../../core/tenancy/authority.ts';
import { isRoot, type Token } from '../../core/tenancy/token.ts';
import type { Access } from './route.ts';

/** The route table's scope and root checks for an authenticated caller: the REST router and the MCP tools share them. */
export function requireAccess(access: Extract<Access, { kind: 'bearer' | 'bearer-or-body' }>, caller: Token, what: 'route' | 'tool'): void {
  if (access.scope && !caller.scopes.includes(access.scope)) {
    throw new DomainError('SCOPE_REQUIRED', `this ${what} needs a token with the ${access.scope} scope`);
  }
  if (access.kind === 'bearer' && access.root && !isRoot(caller)) throw rootRequired(`this ${what}`);
}
