import { hyperstackModule } from './hyperstack/index.ts';
import { lambdaModule } from './lambda/index.ts';
import type { ProviderModule } from './provider-module.ts';
import { runpodModule } from './runpod/index.ts';
import { sandboxModule } from './sandbox/index.ts';
import { shadeformModule } from './shadeform/index.ts';
import { vastModule } from './vast/index.ts';
import { verdaModule } from './verda/index.ts';

/**
 * Every provider adapter this build knows, one line each: adding a provider is its folder plus its line here
 * (docs/adding-a-provider.md). Everything else (configuration, docs, help texts, the SSH user of an instance)
 * reads the list.
 */
export const PROVIDER_MODULES: readonly ProviderModule[] = [sandboxModule, vastModule, runpodModule, lambdaModule, verdaModule, hyperstackModule, shadeformModule];

export const providerModule = (name: string): ProviderModule | undefined => PROVIDER_MODULES.find((module) => module.name === name);

/** The names of the providers this build knows, in registry order. */
export const PROVIDER_NAMES: readonly string[] = PROVIDER_MODULES.map((module) => module.name);

/** Our name for a cloud as a reseller names it (ProviderModule.alsoKnownAs); the name itself when this build has none. */
export const providerNamed = (name: string): string => PROVIDER_MODULES.find((module) => module.name === name || module.alsoKnownAs?.includes(name))?.name ?? name;

/** The SSH login user of a provider's machines; null for a provider this build does not know (a test's own). */
export const sshUserOf = (provider: string): string | null => providerModule(provider)?.sshUser ?? null;
