import type { Storage, UnitOfWork } from '../ports/storage.ts';

/**
 * Whose a create in flight is (docs/decisions.md, "Crash anywhere, lose nothing"): its process's while that process
 * lives and renews the lease; nobody's once the lease ran out or the process is known dead (killed, it lost its
 * database session). A create with no lease at all is nobody's too: its answer was recorded, or it is from before.
 */
export async function holderOf(uow: UnitOfWork, instanceId: string, now: Date): Promise<string | null> {
  const lease = await uow.launchLeases.of(instanceId);
  return lease && lease.until.getTime() > now.getTime() ? lease.holder : null;
}

/** Whether the create's process may still answer it: it holds a live lease and lives. Read outside any transaction. */
export async function createHeld(storage: Storage, instanceId: string, now: Date): Promise<boolean> {
  const holder = await storage.read((uow) => holderOf(uow, instanceId, now));
  return holder !== null && (await storage.holderAlive(holder));
}
