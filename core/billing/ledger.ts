import type { Ids } from '../ports/ids.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { LedgerEntry, LedgerPosting } from './account.ts';

/** Posts an entry under a fresh id (the caller holds the account's lock); null when its unique key was posted before. */
export const postEntry = (uow: UnitOfWork, ids: Ids, posting: LedgerPosting): Promise<LedgerEntry | null> =>
  uow.ledger.post(posting, ids.newId('led'));
