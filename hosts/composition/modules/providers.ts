import type { DependencyContainer } from 'tsyringe';
import type { ProviderRuntime } from '../../../adapters/providers/provider-module.ts';
import { providerModule, providerNamed } from '../../../adapters/providers/registry.ts';
import { SandboxProvider } from '../../../adapters/providers/sandbox/adapter.ts';
import type { Metrics } from '../../../core/ports/metrics.ts';
import type { Provider } from '../../../core/ports/providers.ts';
import { DEFAULT_PROVIDER_CONCURRENCY } from '../../../core/sweep/settings.ts';
import { CallDeadlines } from '../../../core/upstream/call-deadlines.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { instrumentedProvider } from '../instrumented-provider.ts';
import { PROVIDERS } from './ports.ts';

export interface ProviderWiring {
  /** The providers as configured (or given), before deadlines and metrics: what GET /v1/providers describes. */
  configured: Provider[];
  /** Whether any of them is a real cloud (renting then starts closed unless configured open). */
  anyReal: boolean;
  /** The simulated cloud itself (never a wrapper), for the operator's chaos routes; null when it is off. */
  sandbox: SandboxProvider | null;
  /** Every call to a provider under its deadline. */
  deadlines: CallDeadlines;
  /** How many calls to one provider the sweep and a rent make at once. */
  concurrency: number;
}

function configuredProviders(config: ControlPlaneConfig, base: Pick<ProviderRuntime, 'clock' | 'database'>): { providers: Provider[]; anyReal: boolean } {
  const settings = config.providers ?? [{ name: 'sandbox', config: {} }];
  const runtime: ProviderRuntime = { ...base, enabledProviders: settings.map((setting) => setting.name), providerNamed };
  let anyReal = false;
  const providers = settings.map(({ name, config: providerConfig }) => {
    const module = providerModule(name);
    if (!module) throw new Error(`unknown provider "${name}"`);
    anyReal ||= module.real;
    return module.create(providerConfig, runtime);
  });
  return { providers, anyReal };
}

/**
 * The clouds: built from the registry (adapters/providers/registry.ts) or given by an embedding program, each
 * wrapped by the program's `wrapProvider` (outermost, so faults a test injects count as the provider's errors),
 * bounded by its deadlines and counted in the metrics.
 */
export function registerProviders(
  container: DependencyContainer,
  parts: {
    config: ControlPlaneConfig;
    runtime: Pick<ProviderRuntime, 'clock' | 'database'>;
    metrics: Metrics;
    given?: Provider[];
    wrap?: (provider: Provider) => Provider;
  },
): ProviderWiring {
  const { config, metrics } = parts;
  const built = parts.given
    ? { providers: parts.given, anyReal: parts.given.some((p) => providerModule(p.name)?.real ?? false) }
    : configuredProviders(config, parts.runtime);
  const wrapped = parts.wrap ? built.providers.map(parts.wrap) : built.providers;
  const deadlines = new CallDeadlines(
    { ...(config.upstream?.createTimeoutMs !== undefined && { createMs: config.upstream.createTimeoutMs }), ...(config.upstream?.callTimeoutMs !== undefined && { callMs: config.upstream.callTimeoutMs }) },
    (provider, operation) => metrics.providerCallCut(provider, operation),
  );
  container.register(PROVIDERS, { useValue: wrapped.map((provider) => instrumentedProvider(deadlines.bound(provider), metrics)) });
  return {
    configured: built.providers,
    anyReal: built.anyReal,
    sandbox: built.providers.find((provider): provider is SandboxProvider => provider instanceof SandboxProvider) ?? null,
    deadlines,
    concurrency: config.upstream?.concurrency ?? DEFAULT_PROVIDER_CONCURRENCY,
  };
}
