import { DomainError } from '../../core/errors.ts';
import { rootRequired } from '../../core/tenancy/authority.ts';
import type { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import { isRoot, type Token } from '../../core/tenancy/token.ts';
import type { Access } from './route.ts';

/** What the check reads beyond the caller: the chain above an API token, for manage over the whole tenant. */
export type AuthorityReader = Pick<TenancyService, 'requireTenantManage'>;

/** The route table's scope and authority checks for an authenticated caller: the REST router and the MCP tools share them. */
export async function requireAccess(
  access: Extract<Access, { kind: 'bearer' | 'bearer-or-body' }>,
  caller: Token,
  what: 'route' | 'tool',
  authority: AuthorityReader,
): Promise<void> {
  if (access.scope && !caller.scopes.includes(access.scope)) {
    throw new DomainError('SCOPE_REQUIRED', `this ${what} needs a token with the ${access.scope} scope`);
  }
  if (access.kind !== 'bearer') return;
  if (access.root && !isRoot(caller)) throw rootRequired(`this ${what}`);
  if (access.tenantManage) await authority.requireTenantManage(caller, `this ${what}`);
}
