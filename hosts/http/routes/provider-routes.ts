import type { z } from 'zod';
import { isVolumeHost, supportedOperations, type Provider } from '../../../core/ports/providers.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { ProvidersOut } from '../schemas/providers.ts';

/**
 * The enabled providers and what each supports, so a client learns the names and capabilities from the server
 * instead of a list of its own (docs/adding-a-provider.md). `sshUserOf` reads the provider registry.
 */
export function providerRoutes(providers: readonly Provider[], sshUserOf: (provider: string) => string | null): RouteDef[] {
  const answer: z.input<typeof ProvidersOut> = {
    providers: providers.map((provider) => ({
      name: provider.name,
      ssh_user: sshUserOf(provider.name),
      supported_operations: supportedOperations(provider),
      volumes: isVolumeHost(provider),
      extra_filter_keys: [...provider.extraFilterKeys],
    })),
  };
  return [
    defineRoute({
      method: 'get',
      path: '/v1/providers',
      operationId: 'listProviders',
      summary: 'The clouds this server lists and rents from, with what each supports',
      tags: ['market'],
      access: { kind: 'bearer', scope: 'read' },
      responses: [{ status: 200, description: 'The enabled providers', schema: ProvidersOut }],
      async handle() {
        return { status: 200, body: answer };
      },
    }),
  ];
}
