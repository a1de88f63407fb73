import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { requireMadeUnder } from './authority.ts';
import { isRoot, type Token } from './token.ts';

/** What a credential can end or change that some credential made (or saved: SSH keys, images, templates, endpoints). */
export type MadeThing = 'instance' | 'volume' | 'reservation' | 'spot claim' | 'SSH key' | 'image' | 'template' | 'webhook endpoint';

/** The maker of what the tenant has (null: saved before makers were kept, so root's alone); undefined: the tenant has no such thing. */
const makerOfRow = (row: { tokenId: string | null } | null): string | null | undefined => (row ? row.tokenId : undefined);

const makerOf = async (uow: UnitOfWork, tenantId: string, what: MadeThing, id: string): Promise<string | null | undefined> => {
  switch (what) {
    case 'instance':
      return (await uow.instances.get(tenantId, id))?.tokenId;
    case 'volume':
      return makerOfRow(await uow.volumes.get(tenantId, id));
    case 'reservation':
      return (await uow.reservations.get(tenantId, id))?.tokenId;
    case 'spot claim':
      return (await uow.spotClaims.get(tenantId, id))?.tokenId;
    case 'SSH key':
      return makerOfRow(await uow.sshKeys.get(tenantId, id));
    case 'image':
      return makerOfRow(await uow.images.get(tenantId, id));
    case 'template':
      return makerOfRow(await uow.templates.get(tenantId, id));
    case 'webhook endpoint':
      return makerOfRow(await uow.webhooks.getEndpoint(tenantId, id));
  }
};

/**
 * A credential that is not root terminates, reboots, schedules the removal of, deletes, cancels or releases only what
 * its own subtree made, and changes or deletes only the SSH keys, images, templates and webhook endpoints its subtree
 * saved (docs/decisions.md, "One tree of authority"); reading, and renting with a tenant's keys, images and templates,
 * stays tenant-wide. Asked before the use
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
