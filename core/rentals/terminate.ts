import { messageOf, notFound } from '../errors.ts';
import { inParallelBy } from '../in-parallel.ts';
import type { RentalsContext } from './context.ts';
import { endBilling } from './end-billing.ts';
import { isLive, type Instance } from './instance.ts';
import { refreshInstance } from './machine-state.ts';

/**
 * Stops and removes the machine. Billing ends now (or at the removal time or window end, when that came
 * first): the unused time is refunded (after the first hour); a machine that never started costs nothing.
 */
export async function terminate(ctx: RentalsContext, tenantId: string, instanceId: string): Promise<Instance> {
  const current = await ctx.storage.read((uow) => uow.instances.get(tenantId, instanceId));
  if (!current) throw notFound(`instance ${instanceId}`);
  // a machine that came up since we last looked has started: that decides what it costs
  await refreshInstance(ctx, current);
  const instance = await ctx.storage.transaction(async (uow) => {
    await uow.accounts.lock(tenantId, ctx.clock.now()); // always the account before its instances
    const locked = await uow.instances.lock(tenantId, instanceId);
    if (!locked) throw notFound(`instance ${instanceId}`);
    if (!isLive(locked.status) || locked.status === 'terminating') return locked;
    return endBilling(ctx, uow, locked, ctx.clock.now(), 'terminating');
  });
  return instance.status === 'terminating' ? removeUpstream(ctx, instance) : instance;
}

/**
 * Terminates every live machine of these tenants (an emergency stop, a hold, the breakers of a pass): billing ends
 * for each, and the cloud is called a few machines at a time per provider, so a thousand machines neither go one by
 * one nor all at once. A machine whose termination failed is listed in `errors` (it stays terminating or live for
 * the next pass).
 */
export async function terminateAllOf(ctx: RentalsContext, tenantIds: readonly string[]): Promise<{ terminated: Instance[]; errors: string[] }> {
  const live = (await Promise.all(tenantIds.map((tenantId) => ctx.storage.read((uow) => uow.instances.live(tenantId))))).flat();
  const terminated: Instance[] = [];
  const errors: string[] = [];
  await inParallelBy(live, (instance) => instance.provider, ctx.settings.providerConcurrency, async (instance) => {
    try {
      terminated.push(await terminate(ctx, instance.tenantId, instance.id));
    } catch (error) {
      errors.push(`instance ${instance.id}: ${messageOf(error)}`);
    }
  });
  return { terminated, errors };
}

/** Asks the provider to remove a terminating machine; on failure it stays terminating for the sweep. */
export async function removeUpstream(ctx: Pick<RentalsContext, 'providers' | 'storage'>, instance: Instance): Promise<Instance> {
  const provider = ctx.providers.get(instance.provider);
  if (!provider || !instance.machineId) return instance; // without a machine id the reconciler finds it by label
  try {
    await provider.terminateMachine(instance.machineId);
  } catch {
    return instance;
  }
  return ctx.storage.transaction(async (uow) => {
    const locked = await uow.instances.lock(instance.tenantId, instance.id);
    if (!locked || locked.status !== 'terminating') return locked ?? instance;
    const done: Instance = { ...locked, status: 'terminated' };
    await uow.instances.update(done);
    return done;
  });
}
