import { describe, expect, it } from 'vitest';
import type { Machine, Provider } from '../../core/ports/providers.ts';
import { ProviderFailure } from '../../core/ports/providers.ts';
import { CallDeadlines } from '../../core/upstream/call-deadlines.ts';

const never = <T>() => new Promise<T>(() => undefined);
const machine: Machine = { machineId: 'm1', label: 'ins_1', status: 'running', sshHost: null, sshPort: null, priceUsdPerHour: null };

/** A provider whose every call hangs unless a test says otherwise; it records the signal listOffers got. */
function hanging(): Provider & { signal: AbortSignal | undefined } {
  const provider = {
    name: 'slow',
    machineOptions: [],
    extraFilterKeys: [],
    signal: undefined as AbortSignal | undefined,
    listOffers: async (signal?: AbortSignal) => {
      provider.signal = signal;
      return never<[]>();
    },
    isOfferId: () => true,
    getOffer: () => never<null>(),
    createMachine: () => never<Machine>(),
    getMachine: async () => machine,
    listMachines: () => never<Machine[]>(),
    terminateMachine: () => never<void>(),
  };
  return provider;
}

describe('deadlines on provider calls (core/upstream/call-deadlines.ts)', () => {
  it('cuts a create at its deadline as ambiguous, any other call as unavailable, and counts both', async () => {
    const cuts: string[] = [];
    const deadlines = new CallDeadlines({ createMs: 60, callMs: 30 }, (provider, operation) => cuts.push(`${provider} ${operation}`));
    const provider = deadlines.bound(hanging());
    const started = performance.now();
    const create = provider.createMachine({ offerId: '1', label: 'ins_1', name: 'x', sshPublicKeys: [], image: null, registryAuth: null, command: null, env: {}, ports: [], startupScript: null, volumeIds: [] });
    await expect(create).rejects.toMatchObject({ kind: 'ambiguous', provider: 'slow' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    await expect(provider.terminateMachine('m1')).rejects.toBeInstanceOf(ProviderFailure);
    await expect(provider.listMachines()).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringContaining('no answer within 30 ms') });
    expect(cuts).toEqual(['slow createMachine', 'slow terminateMachine', 'slow listMachines']);
    expect(deadlines.cut).toBe(3);
  });

  it("aborts the adapter's own request where the call takes a signal, and passes answers and sync calls through", async () => {
    const inner = hanging();
    const provider = new CallDeadlines({ callMs: 20 }).bound(inner);
    await expect(provider.listOffers()).rejects.toMatchObject({ kind: 'unavailable' });
    expect(inner.signal?.aborted).toBe(true);
    expect(await provider.getMachine('m1')).toBe(machine);
    expect(provider.isOfferId('x')).toBe(true);
    expect(provider.name).toBe('slow');
  });

  it('never waits longer than 60 s for a create or 30 s for anything else, whatever it is told', () => {
    expect(new CallDeadlines({ createMs: 600_000, callMs: 90_000 }).settings).toEqual({ createMs: 60_000, callMs: 30_000 });
    expect(new CallDeadlines().settings).toEqual({ createMs: 60_000, callMs: 30_000 });
  });
});
