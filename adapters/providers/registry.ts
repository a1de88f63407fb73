import { lambdaModule } from './lambda/index.ts';
import type { ProviderModule } from './provider-module.ts';
import { runpodModule } from './runpod/index.ts';
import { sandboxModule } from './sandbox/index.ts';
import { vastModule } from './vast/index.ts';

/** Every provider adapter this build knows. A new provider is its folder plus one line here. */
export const PROVIDER_MODULES: readonly ProviderModule[] = [sandboxModule, vastModule, runpodModule, lambdaModule];

export const providerModule = (name: string): ProviderModule | undefined => PROVIDER_MODULES.find((module) => module.name === name);
