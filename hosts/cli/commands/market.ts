import { Option, type Command } from 'commander';
import type { paths, Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, optionsOf, print, printJson, withJson } from '../context.ts';
import { money, relative, table } from '../format.ts';
import { decimal, integer, usd } from '../parse.ts';

// by path, not operationId: operations are renamed to read as MCP tools
type SearchQuery = NonNullable<paths['/v1/gpus']['get']['parameters']['query']>;

export interface FilterOptions {
  gpuType?: string;
  gpuCount?: number;
  minVramGb?: string;
  minDownloadMbps?: string;
  minPorts?: number;
  minCpus?: number;
  minRamGb?: string;
  minDiskGb?: string;
  maxPrice?: string;
  country?: string;
  region?: string;
  dockerInDocker?: boolean;
  mig?: boolean;
  baremetal?: boolean;
  virtualized?: boolean;
  provider?: string;
  extraFilters?: string;
}

/** Each GET /v1/gpus filter as a flag; a boolean filter as --x and --no-x (neither: any). */
export function filterFlags(command: Command): Command {
  command
    .option('--gpu-type <family>', 'GPU family: H100, A100, RTX4090... (any case or spacing)')
    .option('--gpu-count <n>', 'exactly this many GPUs', integer(1, 64))
    .option('--min-vram-gb <gb>', 'memory of each GPU, at least', decimal)
    .option('--min-download-mbps <mbps>', 'download bandwidth, at least', decimal)
    .option('--min-ports <n>', 'open ports, at least', integer(0, 65_535))
    .option('--min-cpus <n>', 'vCPUs, at least', integer(1, 100_000))
    .option('--min-ram-gb <gb>', 'system memory, at least', decimal)
    .option('--min-disk-gb <gb>', 'disk, at least', decimal)
    .option('--max-price <usd>', 'per-GPU ceiling in USD per hour (max_price_per_gpu_hour), e.g. 2.5', usd)
    .option('--country <code>', 'ISO 3166-1 alpha-2 country, e.g. US')
    .option('--region <name>', "the provider's region, e.g. us-east-1")
    .option('--provider <name>', 'only this provider (`gpuctl providers` lists those of the server)')
    .option('--extra-filters <pairs>', 'raw upstream fields: key=value, also != >= <= > <, comma separated');
  for (const [flag, what] of [
    ['docker-in-docker', 'machines that can run Docker inside'],
    ['mig', 'MIG-partitioned GPUs'],
    ['baremetal', 'bare-metal machines'],
    ['virtualized', 'virtual machines'],
  ] as const) {
    command.addOption(new Option(`--${flag}`, `only ${what}`)).addOption(new Option(`--no-${flag}`, `no ${what}`));
  }
  return command;
}

/**
 * The query the flags ask for. Decimals stay the text the user typed: the query string carries text and the
 * server reads prices exactly into cents (the generated type says number because the document does).
 */
export function filterQuery(options: FilterOptions): SearchQuery {
  const text = (value: string | undefined) => value as unknown as number | undefined;
  const query: Record<string, unknown> = {
    gpu_type: options.gpuType,
    gpu_count: options.gpuCount,
    min_vram_gb: text(options.minVramGb),
    min_download_mbps: text(options.minDownloadMbps),
    min_ports: options.minPorts,
    min_cpus: options.minCpus,
    min_ram_gb: text(options.minRamGb),
    min_disk_gb: text(options.minDiskGb),
    max_price_per_gpu_hour: text(options.maxPrice),
    country: options.country,
    region: options.region,
    docker_in_docker: options.dockerInDocker,
    mig: options.mig,
    baremetal: options.baremetal,
    virtualized: options.virtualized,
    provider: options.provider,
    extra_filters: options.extraFilters,
  };
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as SearchQuery;
}

const providerLine = (providers: Schema<'ProviderStatusOut'>[]) =>
  providers
    .map((p) => `${p.provider} ${p.status === 'ok' ? 'ok' : `error (${p.error ?? 'unknown'})`}${p.fetched_at ? `, offers from ${relative(p.fetched_at)}` : ''}`)
    .join('; ');

const ignored = (names: string[]) => (names.length > 0 ? `\nFilters no provider applied: ${names.join(', ')}` : '');

export function registerMarket(program: Command): void {
  example(
    withJson(filterFlags(program.command('gpus').description('Search every provider at once: nodes cheapest first (rent one with `gpuctl rent <NODE>`)'))).option(
      '--limit <n>',
      'how many nodes (default 100)',
      integer(1, 1_000),
    ),
    'gpuctl gpus --gpu-type H100 --gpu-count 8 --max-price 2.5 --region us-east-1',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf<FilterOptions & { limit?: number }>(command);
    const session = connect(command);
    const answer = await expectOk(session, session.client.GET('/v1/gpus', { params: { query: { ...filterQuery(options), ...(options.limit && { limit: options.limit }) } } }));
    if (options.json) return printJson(answer);
    print(
      table(
        ['NODE', 'GPUS', 'VRAM', 'PER GPU', 'MACHINE', 'CPUS', 'RAM', 'DISK', 'WHERE', 'FREE'],
        answer.nodes.map((node) => [
          node.id,
          `${node.gpu_count}x ${node.gpu_model}`,
          `${node.vram_gb} GB`,
          `${money(node.price_per_gpu_hour_cents)}/h`,
          `${money(node.price_per_hour_cents)}/h${node.price_verified ? '' : '*'}`,
          node.cpus,
          `${node.ram_gb} GB`,
          `${node.disk_gb} GB`,
          [node.country, node.region].filter(Boolean).join(' '),
          node.available,
        ]),
        'No node matches these filters.',
      ) +
        `${answer.nodes.length} of ${answer.total} matches; ${providerLine(answer.providers)}` +
        (answer.nodes.some((node) => !node.price_verified) ? '\n* price not verified by the provider yet' : '') +
        ignored(answer.ignored_filters) +
        (answer.rentals_open ? '' : '\nRenting is not open on this server yet.'),
    );
  });

  example(withJson(program.command('providers').description('The clouds the server rents from: the SSH user of their machines, volumes, what they support')), 'gpuctl providers').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const answer = await expectOk(session, session.client.GET('/v1/providers'));
      if (optionsOf(command).json) return printJson(answer);
      print(
        table(
          ['PROVIDER', 'SSH USER', 'VOLUMES', 'SUPPORTS'],
          answer.providers.map((p) => [p.name, p.ssh_user, p.volumes ? 'yes' : 'no', p.supported_operations.join(', ')]),
          'No provider is enabled on this server.',
        ),
      );
    },
  );

  const market = program.command('market');
  example(
    withJson(filterFlags(market.description('Offers grouped by GPU type, provider and region, with price ranges and availability'))).option(
      '--recent <n>',
      'how many of your latest instances to list too (default 10)',
      integer(1, 100),
    ),
    'gpuctl market --gpu-type A100',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf<FilterOptions & { recent?: number }>(command);
    const session = connect(command);
    const answer = await expectOk(
      session,
      session.client.GET('/v1/marketplace', { params: { query: { ...filterQuery(options), ...(options.recent && { recent_limit: options.recent }) } } }),
    );
    if (options.json) return printJson(answer);
    const range = (min: number | null, max: number | null) => (min === null ? '-' : min === max ? `${money(min)}/h` : `${money(min)}-${money(max)}/h`);
    print(
      table(
        ['GPU', 'PROVIDER', 'REGION', 'OFFERS', 'MACHINES', 'GPUS', 'PER GPU', 'MACHINE'],
        answer.groups.map((g) => [g.gpu_type, g.provider, g.region, g.offers, g.available_machines, g.available_gpus, range(g.min_price_per_gpu_cents, g.max_price_per_gpu_cents), range(g.min_price_cents, g.max_price_cents)]),
        'No offers match these filters.',
      ) +
        providerLine(answer.providers) +
        ignored(answer.ignored_filters),
    );
  });
  example(
    withJson(
      market
        .command('history')
        .description("A GPU family's lowest and median verified price per GPU-hour and GPUs available, by hour or day (90 days kept)")
        .argument('<gpu-type>', 'a GPU family, e.g. H100')
        .option('--provider <name>', "one provider's prices (default: every enabled provider)")
        .addOption(new Option('--by <granularity>', 'one point per hour or per day').choices(['hour', 'day']).default('hour'))
        .option('--since <time>', 'from this ISO 8601 time (default: 7 days back by hour, 90 by day)')
        .option('--until <time>', 'up to this ISO 8601 time (default: now)'),
    ),
    'gpuctl market history H100 --by day',
  ).action(async (gpuType: string, _options: unknown, command: Command) => {
    const o = optionsOf<{ provider?: string; by: 'hour' | 'day'; since?: string; until?: string }>(command);
    const session = connect(command);
    const query = { gpu_type: gpuType, granularity: o.by, ...(o.provider && { provider: o.provider }), ...(o.since && { since: o.since }), ...(o.until && { until: o.until }) };
    const answer = await expectOk(session, session.client.GET('/v1/market/history', { params: { query } }));
    if (o.json) return printJson(answer);
    print(
      table(
        ['AT', 'PROVIDER', 'LOWEST', 'MEDIAN', 'GPUS'],
        answer.points.map((p) => [p.at, p.provider, `${money(p.min_price_per_gpu_hour_cents)}/h`, `${money(p.median_price_per_gpu_hour_cents)}/h`, p.available_gpus]),
        `No prices recorded for ${answer.gpu_type} in this range.`,
      ),
    );
  });
}
