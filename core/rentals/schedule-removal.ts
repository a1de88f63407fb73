import { DomainError, invalidInput, notFound } from '../errors.ts';
import { isSelfRemoving } from '../ports/providers.ts';
import type { RentalsContext } from './context.ts';
import { isLive, type Instance } from './instance.ts';

/** Sets (or, with null, cancels) when the machine removes itself; the sweep carries it out. */
export async function scheduleRemoval(ctx: RentalsContext, tenantId: string, instanceId: string, at: Date | null): Promise<Instance> {
  const now = ctx.clock.now();
  if (at && at.getTime() <= now.getTime()) throw invalidInput(['body', 'removal_scheduled_at'], 'must be in the future');
  const updated = await ctx.storage.transaction(async (uow) => {
    const locked = await uow.instances.lock(tenantId, instanceId);
    if (!locked) throw notFound(`instance ${instanceId}`);
    if (!isLive(locked.status) || locked.status === 'terminating') {
      throw new DomainError('CONFLICT', `instance ${instanceId} is ${locked.status}; there is nothing left to remove`);
    }
    const next: Instance = { ...locked, removalScheduledAt: at };
    await uow.instances.update(next);
    return next;
  });
  const provider = ctx.providers.get(updated.provider);
  if (provider && isSelfRemoving(provider) && updated.machineId) {
    // the sweep removes the machine anyway; the provider's own timer is a second line
    await (at ? provider.scheduleRemoval(updated.machineId, at) : provider.cancelScheduledRemoval(updated.machineId)).catch(() => undefined);
  }
  return updated;
}
