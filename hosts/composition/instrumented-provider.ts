import { performance } from 'node:perf_hooks';
import type { Metrics, ProviderCallOutcome } from '../../core/ports/metrics.ts';
import { ProviderFailure, type Provider } from '../../core/ports/providers.ts';

const outcomeOf = (error: unknown): ProviderCallOutcome => (error instanceof ProviderFailure ? error.kind : 'error');

/**
 * The provider as the core sees it, every asynchronous call timed and counted by outcome (provider_calls_total,
 * provider_call_duration_seconds): one wrapper at the port for every adapter, so no adapter counts on its own.
 * A Proxy keeps whatever capabilities the adapter has (SpotMarket, VolumeHost, Rebootable...) and its class
 * for `instanceof`; methods run on the adapter itself, so its private fields still work. Synchronous methods
 * (isOfferId) pass through uncounted.
 */
export function instrumentedProvider(provider: Provider, metrics: Metrics): Provider {
  // by the adapter's function, not the name: a method replaced on the adapter (tests do) gets its own wrapper,
  // and a wrapper read through the proxy and assigned back is recognised, not wrapped again
  const wrapperOf = new WeakMap<Function, Function>();
  const wrappers = new WeakSet<Function>();
  return new Proxy(provider, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || property === 'constructor' || wrappers.has(value)) return value;
      let wrapper = wrapperOf.get(value);
      if (wrapper === undefined) {
        const method = value;
        const operation = String(property);
        wrapper = function (this: unknown, ...args: unknown[]): unknown {
          const startedAt = performance.now();
          const result: unknown = Reflect.apply(method, target, args);
          if (!(result instanceof Promise)) return result;
          return result.then(
            (answer: unknown) => {
              metrics.providerCall(target.name, operation, (performance.now() - startedAt) / 1000, 'ok');
              return answer;
            },
            (error: unknown) => {
              metrics.providerCall(target.name, operation, (performance.now() - startedAt) / 1000, outcomeOf(error));
              throw error;
            },
          );
        };
        wrapperOf.set(value, wrapper);
        wrappers.add(wrapper);
      }
      return wrapper;
    },
  });
}
