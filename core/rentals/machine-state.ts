import type { Machine } from '../ports/providers.ts';
import type { Instance } from './instance.ts';
import type { RentalsContext } from './context.ts';

/** The instance as its machine answered now: running (and started) once it runs, its address once it has one. */
export function withMachine(instance: Instance, machine: Machine, now: Date): Instance {
  const running = machine.status === 'running';
  return {
    ...instance,
    machineId: instance.machineId ?? machine.machineId,
    status: running ? 'running' : instance.status,
    startedAt: running ? (instance.startedAt ?? now) : instance.startedAt,
    sshHost: machine.sshHost ?? instance.sshHost,
    sshPort: machine.sshPort ?? instance.sshPort,
    sshUser: machine.sshUser ?? instance.sshUser ?? null,
    lastSeenAt: now,
  };
}

/** A machine on its way up (or rebooting) is asked how it is doing; any other instance is as stored. */
export async function refreshInstance(ctx: RentalsContext, instance: Instance): Promise<Instance> {
  const { tenantId, id: instanceId } = instance;
  if ((instance.status !== 'provisioning' && instance.status !== 'rebooting') || !instance.machineId) return instance;
  const provider = ctx.providers.get(instance.provider);
  let machine: Machine | null;
  try {
    machine = provider ? await provider.getMachine(instance.machineId) : null;
  } catch {
    return instance; // the sweep's reconciler will try again; the stored state is still true
  }
  if (!machine || (machine.status !== 'running' && machine.status !== 'provisioning')) return instance;
  return ctx.storage.transaction(async (uow) => {
    const locked = await uow.instances.lock(tenantId, instanceId);
    if (!locked || (locked.status !== 'provisioning' && locked.status !== 'rebooting')) return locked ?? instance;
    const updated = withMachine(locked, machine, ctx.clock.now());
    await uow.instances.update(updated);
    return updated;
  });
}
