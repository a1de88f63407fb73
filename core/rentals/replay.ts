import { DomainError } from '../errors.ts';
import { sameRequest } from '../spending/idempotency.ts';
import type { Token } from '../tenancy/token.ts';
import type { RentalsContext } from './context.ts';
import { createHeld } from './launch-lease.ts';
import type { Instance } from './instance.ts';
import type { Rented } from './rent-request.ts';

/** How often a retry reads the row of a first request that another live process is launching. */
const LAUNCH_POLL_MS = 50;

/** The first request with this key is still waiting for the provider's create. */
const inFlight = (instance: Instance): boolean => instance.launch === null && instance.status === 'provisioning' && instance.machineId === null;

/**
 * The answer the first request with this key got: the same instance, or the same refusal. While the first request's
 * create is in flight in a live process, a retry waits for it too (here when it runs in this process, else by
 * reading the row again), so both answer alike. A create whose process died is nobody's: the retry answers at once
 * with the rental as it stands (docs/decisions.md, "Crash anywhere, lose nothing").
 */
export async function replay(ctx: RentalsContext, earlier: Instance, digest: string): Promise<Rented> {
  let instance = sameRequest(earlier, digest, 'instance');
  for (let waited = 0; inFlight(instance); waited += LAUNCH_POLL_MS) {
    const local = ctx.launching.get(instance.id);
    if (!local && !(await createHeld(ctx.storage, instance.id, ctx.clock.now()))) break;
    if (waited >= ctx.settings.launchWaitMs) {
      throw new DomainError('CONFLICT', `the first request with this idempotency_key (instance ${instance.id}) is still waiting for ${instance.provider}; retry in a few seconds`);
    }
    await (local ?? new Promise((resolve) => setTimeout(resolve, LAUNCH_POLL_MS)));
    instance = (await ctx.storage.read((uow) => uow.instances.get(instance.tenantId, instance.id))) ?? instance;
    if (local) break;
  }
  if (instance.launch === 'refused' && instance.status === 'failed' && instance.failure) throw new DomainError('CONFLICT', instance.failure);
  return { instance, replayed: true };
}

/**
 * Before a retry answers that it could not check the node, it asks (under the account lock, where rentals
 * with a key are serialized) whether a copy of it sent at the same moment has rented meanwhile: the copy
 * that took the node's last unit must not make this one answer "gone".
 */
export async function madeMeanwhile(ctx: RentalsContext, caller: Token, key: string | null, digest: string): Promise<Rented | null> {
  if (!key) return null;
  const earlier = await ctx.storage.transaction(async (uow) => {
    await uow.accounts.lock(caller.tenantId, ctx.clock.now());
    return uow.instances.byIdempotencyKey(caller.tenantId, key);
  });
  return earlier ? replay(ctx, earlier, digest) : null;
}
