import type { SandboxProvider } from '../../adapters/providers/sandbox/adapter.ts';
import { DomainError, invalidInput, notFound } from '../../core/errors.ts';
import type { Storage } from '../../core/ports/storage.ts';
import type { Instance } from '../../core/rentals/instance.ts';

/** What an operator did to the sandbox, answered as it stands. */
export type ChaosOutcome =
  | { event: 'lost' | 'preempted'; instanceId: string; machineId: string }
  | { event: 'repriced'; nodeId: string; gpuCount: number; pricePerGpuHourUsd: string; pricePerHourUsd: string };

const SANDBOX_PRICE = /^\d{1,6}(\.\d{1,4})?$/;

/** Decimal text times a whole number, exactly (the sandbox keeps prices to 4 decimals). */
function times(text: string, count: number): string {
  const [whole = '0', fraction = ''] = text.split('.');
  const units = BigInt(whole + fraction.padEnd(4, '0')) * BigInt(count);
  const digits = units.toString().padStart(5, '0');
  const out = `${digits.slice(0, -4)}.${digits.slice(-4)}`.replace(/\.?0+$/, '');
  return out.startsWith('.') ? `0${out}` : out;
}

/**
 * The sandbox misbehaving on an operator's word (docs/operations.md, "Rehearsing with the sandbox"): a machine lost
 * upstream, a machine preempted (a spot machine, or an on-demand host reclaimed), an offer repriced. What follows is the control plane's own doing: the sweep
 * finds the machine gone (billed to when it was last seen, the rest refunded), the claim preempted, the new price at
 * the next rental's live check and the next snapshot.
 */
export class SandboxChaos {
  private readonly storage: Storage;
  private readonly sandbox: SandboxProvider;

  constructor(deps: { storage: Storage; sandbox: SandboxProvider }) {
    this.storage = deps.storage;
    this.sandbox = deps.sandbox;
  }

  async lose(instanceId: string): Promise<ChaosOutcome> {
    const machineId = await this.machineOf(instanceId);
    await this.sandbox.cloud.loseMachine(machineId);
    return { event: 'lost', instanceId, machineId };
  }

  async preempt(instanceId: string): Promise<ChaosOutcome> {
    const machineId = await this.machineOf(instanceId);
    if (!(await this.sandbox.cloud.reclaimMachine(machineId))) {
      throw new DomainError('CONFLICT', `instance ${instanceId} has no live machine at the sandbox to take back`);
    }
    return { event: 'preempted', instanceId, machineId };
  }

  async reprice(nodeId: string, pricePerGpuHourUsd: string): Promise<ChaosOutcome> {
    const offerId = nodeId.startsWith('sandbox:') ? nodeId.slice('sandbox:'.length) : '';
    const offer = offerId && this.sandbox.isOfferId(offerId) ? await this.sandbox.cloud.getOffer(offerId) : null;
    if (!offer) throw notFound(`sandbox node ${nodeId}`);
    if (!SANDBOX_PRICE.test(pricePerGpuHourUsd) || /^0+(\.0+)?$/.test(pricePerGpuHourUsd)) {
      throw invalidInput(['body', 'price_per_gpu_hour_usd'], 'a price above 0 with at most 4 decimals, e.g. "2.35"');
    }
    const pricePerHourUsd = times(pricePerGpuHourUsd, offer.gpuCount);
    await this.sandbox.cloud.repriceOffer(offerId, pricePerHourUsd);
    return { event: 'repriced', nodeId, gpuCount: offer.gpuCount, pricePerGpuHourUsd, pricePerHourUsd };
  }

  /** The sandbox machine of one of our instances, any tenant's. */
  private async machineOf(instanceId: string): Promise<string> {
    const instance: Instance | null = await this.storage.transaction((uow) => uow.instances.lockById(instanceId));
    if (!instance) throw notFound(`instance ${instanceId}`);
    if (instance.provider !== 'sandbox') throw new DomainError('CONFLICT', `instance ${instanceId} runs at ${instance.provider}, not at the sandbox`);
    if (!instance.machineId) throw new DomainError('CONFLICT', `instance ${instanceId} has no machine at the sandbox yet (${instance.status})`);
    return instance.machineId;
  }
}
