import { afterAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../core/ports/providers.ts';
import { startApi, type TestApi } from '../support/api.ts';

let api: TestApi | null = null;
afterAll(async () => api?.close());

/** The provider with its machine listing held until the test releases it: a pass provably inside its first money step. */
function heldListing(inner: Provider) {
  let entered!: () => void;
  let release!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const provider = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key === 'listMachines') {
        return async (...args: unknown[]) => {
          entered();
          await gate;
          return (value as (...all: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { provider, inside, release };
}

describe('a sweep pass when its process stops', () => {
  it('ends the money step it is in, stops before the next, takes no start; stop() resolves once it has ended', async () => {
    let held: ReturnType<typeof heldListing> | null = null;
    api = await startApi({ providers: [{ name: 'sandbox', config: {} }] }, { wrapProvider: (provider) => (held = heldListing(provider)).provider });
    const sweep = api.plane.services.sweep;
    let passEnded = false;
    const pass = sweep.run().then((report) => ((passEnded = true), report));
    await held!.inside;

    const stopped = sweep.stop();
    held!.release();
    await stopped;
    expect(passEnded).toBe(true);
    const report = await pass;
    expect(report.steps.map((step) => step.name)).toEqual(['reconcile sandbox']);
    expect(report.errors).toEqual([expect.stringMatching(/^the process is stopping: stopped before \S+/)]);

    // a pass begun after the stop does nothing
    expect((await sweep.run()).steps).toEqual([]);
  });
});
