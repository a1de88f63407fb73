import { DomainError, notFound, upstreamUnavailable } from '../errors.ts';
import { isRebootable, ProviderFailure } from '../ports/providers.ts';
import type { RentalsContext } from './context.ts';
import type { Instance } from './instance.ts';

export const unsupported = (provider: string, operation: string) =>
  new DomainError('CONFLICT', `provider ${provider} does not support ${operation}; supported: see the instance's supported_operations`);

/** Reboots a running machine, on a provider that can; the instance is rebooting until the machine answers running. */
export async function reboot(ctx: RentalsContext, tenantId: string, instanceId: string): Promise<Instance> {
  const instance = await ctx.storage.read((uow) => uow.instances.get(tenantId, instanceId));
  if (!instance) throw notFound(`instance ${instanceId}`);
  const provider = ctx.providers.get(instance.provider);
  if (!provider || !isRebootable(provider)) throw unsupported(instance.provider, 'reboot');
  if (instance.status !== 'running' || !instance.machineId) {
    throw new DomainError('CONFLICT', `instance ${instanceId} is ${instance.status}; only a running machine can be rebooted`);
  }
  try {
    await provider.rebootMachine(instance.machineId);
  } catch (error) {
    if (error instanceof ProviderFailure && error.kind === 'rejected') throw new DomainError('CONFLICT', `reboot refused: ${error.message}`);
    throw upstreamUnavailable(`could not reach ${provider.name} to reboot`, error, 'try again shortly');
  }
  return ctx.storage.transaction(async (uow) => {
    const locked = await uow.instances.lock(tenantId, instanceId);
    if (!locked || locked.status !== 'running') return locked ?? instance;
    const updated: Instance = { ...locked, status: 'rebooting' };
    await uow.instances.update(updated);
    return updated;
  });
}
