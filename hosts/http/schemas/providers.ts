import { z } from 'zod';

export const ProviderOut = z
  .object({
    name: z.string().meta({ description: 'The prefix of its node ids (`<name>:<offer id>`), and the `provider` of its nodes, instances and volumes.' }),
    ssh_user: z.string().nullable().meta({ description: 'The user its machines log in as, as each of its instances states it (`ssh_user`).' }),
    supported_operations: z.array(z.string()).meta({ description: "What its nodes and instances support, as each node's `supported_operations` lists it (reboot, spot, create options)." }),
    volumes: z.boolean().meta({ description: 'Whether it hosts volumes (POST /v1/volumes).' }),
    extra_filter_keys: z.array(z.string()).meta({ description: 'The `extra_filters` keys of GET /v1/gpus it knows.' }),
  })
  .meta({ id: 'ProviderOut' });

export const ProvidersOut = z
  .object({ providers: z.array(ProviderOut).meta({ description: 'Every provider this server lists and rents from, in the order of its configuration.' }) })
  .meta({ id: 'ProvidersOut' });
