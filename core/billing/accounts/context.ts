import { DomainError, notFound } from '../../errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Ids } from '../../ports/ids.ts';
import type { Storage, UnitOfWork } from '../../ports/storage.ts';
import type { Account, LedgerEntry, LedgerPosting } from '../account.ts';
import { postEntry } from '../ledger.ts';

/** What the account use cases work with: our records, the clock and ids. */
export interface BillingContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
}

/** The tenant's account, locked until the transaction ends (every movement of money is made under it); 404 for an unknown tenant. */
export async function lockAccount(ctx: BillingContext, uow: UnitOfWork, tenantId: string): Promise<Account> {
  const account = await uow.accounts.lock(tenantId, ctx.clock.now());
  if (!account) throw notFound(`tenant ${tenantId}`);
  return account;
}

/** Posts to the ledger under a fresh key: finding it posted before would be a bug, not a retry. */
export async function postFresh(ctx: BillingContext, uow: UnitOfWork, posting: LedgerPosting): Promise<LedgerEntry> {
  const entry = await postEntry(uow, ctx.ids, posting);
  if (!entry) throw new DomainError('CONFLICT', `${posting.uniqueKey} was posted before`);
  return entry;
}
