import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { requireMadeUnder } from './authority.ts';
import { isRoot, type Token } from './token.ts';

/** What a credential can end or change that some credential made. */
export type MadeThing = 'instance' | 'volume' | 'reservation' | 'spot claim';

const makerOf = async (uow: UnitOfWork, tenantId: string, what: MadeThing, id: string): Promise<string | null | undefined> => {
  switch (what) {
    case 'instance':
      return (await uow.instances.get(tenantId, id))?.tokenId;
    case 'volume': {
      const volume = await uow.volumes.get(tenantId, id);
      return volume ? volume.tokenId : undefined;
    }
    case 'reservation':
      return (await uow.reservations.get(tenantId, id))?.tokenId;
    case 'spot claim':
      return (await uow.spotClaims.get(tenantId, id))?.tokenId;
  }
};

/**
 * A credential that is not root terminates, reboots, schedules the removal of, deletes, cancels or releases only what
 * its own subtree made (docs/decisions.md, "One tree of authority"); reading stays tenant-wide. Asked before the use
 * case looks at the thing's state; a thing the tenant does not have is left to the use case's 404.
 */
export class ActsOn {
  private readonly storage: Storage;

  constructor(storage: Storage) {
    this.storage = storage;
  }

  async require(caller: Token, what: MadeThing, id: string): Promise<void> {
    if (isRoot(caller)) return;
    await this.storage.read(async (uow) => {
      const madeBy = await makerOf(uow, caller.tenantId, what, id);
      if (madeBy === undefined) return;
      await requireMadeUnder(uow, caller, madeBy, `${what} ${id}`);
    });
  }
}
