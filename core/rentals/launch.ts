import { crashPoint } from '../crash-points.ts';
import { DomainError } from '../errors.ts';
import type { Cents } from '../money.ts';
import { isSpotMarket, ProviderFailure, type Machine, type Provider } from '../ports/providers.ts';
import type { RentalsContext } from './context.ts';
import { endBilling } from './end-billing.ts';
import type { Instance, LaunchOutcome } from './instance.ts';
import type { Adoption } from './rent-request.ts';
import { withMachine } from './machine-state.ts';
import type { MachineSetup } from './rental-options.ts';
import { removeUpstream } from './terminate.ts';

/**
 * Calls the provider for a committed rental and records how it answered. A definite refusal fails the
 * instance and refunds it (409), and the booking that adopted it lets it go in the same transaction; no answer
 * leaves it to the reconciler, which adopts the machine by its label or fails it at the deadline. A machine made for
 * a rental that ended meanwhile is removed.
 */
export async function launch(
  ctx: RentalsContext,
  provider: Provider,
  instance: Instance,
  setup: MachineSetup & { volumeIds: string[] },
  bidUsdPerHour: string | null,
  adoption?: Pick<Adoption, 'refused'>,
): Promise<Instance> {
  let machine: Machine | null = null;
  let refusal: string | null = null;
  const renewing = renewLease(ctx, instance.id);
  try {
    const request = { offerId: instance.offerId, label: instance.id, name: instance.name ?? instance.id, ...setup };
    machine = bidUsdPerHour !== null && isSpotMarket(provider) ? await provider.createSpotMachine({ ...request, bidUsdPerHour }) : await provider.createMachine(request);
  } catch (error) {
    if (error instanceof ProviderFailure && error.kind === 'rejected') {
      refusal = `${provider.name} refused the machine (${error.message}); the charge was refunded. Search again with GET /v1/gpus.`;
    }
  } finally {
    clearInterval(renewing);
  }
  if (machine) crashPoint('after-create-before-record');
  const launch: LaunchOutcome = machine ? 'created' : refusal ? 'refused' : 'ambiguous';
  const recorded = await ctx.storage.transaction(async (uow) => {
    if (refusal) await uow.accounts.lock(instance.tenantId, ctx.clock.now()); // the refund moves the balance
    const locked = await uow.instances.lock(instance.tenantId, instance.id);
    if (!locked) return instance;
    // answered: the create is no one's to take up any more (an ambiguous one waits out the deadline as before)
    await uow.launchLeases.release(instance.id);
    const answered: Instance = { ...locked, launch };
    if (refusal && answered.status === 'provisioning' && !answered.machineId) {
      const failed = await endBilling(ctx, uow, answered, ctx.clock.now(), 'failed', refusal);
      await adoption?.refused?.(uow, failed);
      return failed;
    }
    // a machine made for a rental that ended while the create was in flight keeps its id, to be removed
    const updated = !machine
      ? answered
      : answered.status === 'provisioning'
        ? withMachine({ ...answered, machineId: machine.machineId }, machine, ctx.clock.now())
        : { ...answered, machineId: answered.machineId ?? machine.machineId };
    await uow.instances.update(updated);
    return updated;
  });
  if (refusal && recorded.status === 'failed') {
    ctx.metrics.rentalFailed(provider.name, 'refused');
    throw new DomainError('CONFLICT', refusal);
  }
  if (!machine) return recorded; // no definite answer: the reconciler adopts a machine by its label, or fails the rental at the deadline
  if (recorded.status === 'terminating') return removeUpstream(ctx, recorded);
  if (recorded.status === 'failed' || recorded.status === 'terminated') await provider.terminateMachine(machine.machineId).catch(() => undefined); // the reconciler removes it otherwise
  return recorded;
}

/**
 * Renews the create's lease every third of its length while the create is in flight (docs/decisions.md, "Crash
 * anywhere, lose nothing"): a process that dies stops renewing, and its creates are nobody's once the lease runs
 * out. A renewal that fails is tried again at the next tick; the lease's length leaves room for two.
 */
function renewLease(ctx: RentalsContext, instanceId: string): ReturnType<typeof setInterval> {
  const every = Math.max(100, Math.floor(ctx.settings.launchLeaseMs / 3));
  const timer = setInterval(() => {
    const until = new Date(ctx.clock.now().getTime() + ctx.settings.launchLeaseMs);
    void ctx.storage.autocommit((uow) => uow.launchLeases.renew(ctx.holder, [instanceId], until)).catch(() => undefined);
  }, every);
  timer.unref?.();
  return timer;
}

/**
 * The launch's outcome, or, when it takes past `answerBy` (real time), the committed instance as it is (provisioning):
 * the create goes on and records its answer when it comes; a create that never answers is cut at its own deadline
 * and settled by the reconciler as an ambiguous one. A caller never hangs on a slow cloud.
 */
export async function answeredBy(launching: Promise<Instance>, answerBy: number, committed: Instance): Promise<Instance> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Instance>((resolve) => {
    timer = setTimeout(() => resolve(committed), Math.max(0, answerBy - performance.now()));
  });
  try {
    return await Promise.race([launching, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Our whole-machine bid in cents (what the caller may pay, markup included) as the provider's price: the USD
 * before our markup, rounded down to 8 decimals, so the provider never runs it at a price we would sell above
 * the bid. A spot price p passes `perGpu(ceil(p x (1 + markup))) <= bid` exactly when p is at most this.
 */
export function upstreamBidUsd(bidCents: Cents, markupBps: number): string {
  const scale = 10n ** 8n;
  // bidCents / 100 / (1 + markupBps / 10000) USD, in 1e-8 USD, rounded down
  const units = (BigInt(bidCents) * (scale / 100n) * 10_000n) / (10_000n + BigInt(markupBps));
  const whole = units / scale;
  const fraction = (units % scale).toString().padStart(8, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}
