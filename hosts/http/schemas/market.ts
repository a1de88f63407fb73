import { z } from 'zod';
import { PROVIDER_NAMES } from '../../../adapters/providers/registry.ts';
import type { MarketGroup, ProviderReport } from '../../../core/market/market-service.ts';
import type { MarketNode } from '../../../core/market/node.ts';
import { ceilingCents } from '../../../core/market/pricing.ts';
import { parseExtraFilters, type ExtraFilter, type MarketFilter } from '../../../core/market/search-filter.ts';
import { SEARCH_TERMS as T } from '../../../core/market/search-terms.ts';
import type { SummaryAnswer } from '../../../core/market/summary-service.ts';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import { dateTimeOut, documentedAs, isoOrNull, queryInt } from './common.ts';

// ---- query parameters ---------------------------------------------------------------------------

const DECIMAL = /^\s*\d+(\.\d+)?\s*$/;

const queryNumber = (min: number, max: number, description: string, example: number) =>
  z
    .string()
    .regex(DECIMAL, `must be a number from ${min} to ${max}, e.g. 24`)
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .meta({ description, ...documentedAs({ type: 'number', minimum: min, maximum: max, examples: [example] }) });

const queryFlag = (description: string) =>
  z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .transform((text) => text === 'true' || text === '1')
    .meta({ description, ...documentedAs({ type: 'boolean', examples: [true] }) });

const queryText = (max: number, description: string, example: string) =>
  z.string().trim().min(1, 'must not be empty').max(max).meta({ description, examples: [example] });

/** The GET /v1/gpus filters, each read from its query text (a template's `search` reuses them: schemas/catalog.ts). */
export const filterFields = {
  gpu_type: queryText(T.gpu_type.max, 'GPU family, e.g. H100, A100, RTX4090 (case and spaces do not matter: "rtx 4090" works).', 'H100'),
  gpu_count: queryInt(T.gpu_count.min, T.gpu_count.max, 'Exactly this many GPUs in the machine.', 8),
  min_vram_gb: queryNumber(T.min_vram_gb.min, T.min_vram_gb.max, 'Memory of each GPU, at least, in GB.', 80),
  min_download_mbps: queryNumber(T.min_download_mbps.min, T.min_download_mbps.max, 'Download bandwidth, at least, in Mbit/s.', 1000),
  min_ports: queryInt(T.min_ports.min, T.min_ports.max, 'Open ports, at least.', 2),
  min_cpus: queryInt(T.min_cpus.min, T.min_cpus.max, 'vCPUs, at least.', 16),
  min_ram_gb: queryNumber(T.min_ram_gb.min, T.min_ram_gb.max, 'System memory, at least, in GB.', 64),
  min_disk_gb: queryNumber(T.min_disk_gb.min, T.min_disk_gb.max, 'Disk, at least, in GB.', 100),
  max_price_per_gpu_hour: z
    .string()
    .regex(DECIMAL, 'must be a USD amount >= 0, e.g. 2.5')
    .transform((text, ctx) => {
      const cents = ceilingCents(text);
      if (cents === null || cents > T.max_price_per_gpu_hour.maxCents) {
        ctx.addIssue({ code: 'custom', message: 'must be a USD amount from 0 to 100000' });
        return z.NEVER;
      }
      return cents;
    })
    .meta({
      description: 'Per-GPU ceiling in USD per hour (not a whole-machine price): nodes whose price_per_gpu_hour_cents is at most this.',
      ...documentedAs({ type: 'number', minimum: 0, maximum: 100_000, examples: [2.5] }),
    }),
  country: queryText(T.country.max, 'ISO 3166-1 alpha-2 country code, e.g. US (any case).', 'US'),
  region: queryText(T.region.max, "The provider's region name, e.g. us-east-1 (any case).", 'us-east-1'),
  docker_in_docker: queryFlag('Machines that can (true) or cannot (false) run Docker inside.'),
  mig: queryFlag('Machines with (true) or without (false) MIG-partitioned GPUs.'),
  baremetal: queryFlag('Bare-metal machines (true) or not (false).'),
  virtualized: queryFlag('Virtual machines (true) or not (false).'),
  provider: queryText(T.provider.max, `Only this provider: one of ${PROVIDER_NAMES.join(', ')} that this server enables (GET /v1/providers lists them).`, 'sandbox'),
  extra_filters: z
    .string()
    .max(T.extra_filters.max)
    .default('')
    .transform((text, ctx) => {
      const parsed = parseExtraFilters(text);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: `"${parsed.item}" is not key=value (also !=, >=, <=, >, <), e.g. reliability>=0.99` });
        return z.NEVER;
      }
      return parsed.filters;
    })
    .meta({
      examples: ['reliability>=0.99'],
      description:
        'Comma-separated key=value pairs (also !=, >=, <=, >, <) matched against the raw upstream fields of the providers that know the key (see each provider\'s extra_filter_keys); keys a provider does not know are listed in its ignored_filters.',
    }),
};

const optionalFilters = Object.fromEntries(Object.entries(filterFields).map(([name, schema]) => [name, schema.optional()])) as {
  [K in keyof typeof filterFields]: z.ZodOptional<(typeof filterFields)[K]>;
};

export const GpuSearchQuery = z.strictObject({
  ...optionalFilters,
  limit: queryInt(1, 1_000, 'How many nodes to answer, cheapest first (default 100); `total` counts every match.').default(100),
});

export const MarketplaceQuery = z.strictObject({
  ...optionalFilters,
  recent_limit: queryInt(1, 100, "How many of the tenant's latest instances to include (default 10).").default(10),
});

type FilterQuery = { [K in keyof typeof filterFields]?: z.output<(typeof filterFields)[K]> };

export const toMarketFilter = (query: FilterQuery): MarketFilter => ({
  ...(query.gpu_type !== undefined && { gpuType: gpuFamily(query.gpu_type) }),
  ...(query.gpu_count !== undefined && { gpuCount: query.gpu_count }),
  ...(query.min_vram_gb !== undefined && { minVramGb: query.min_vram_gb }),
  ...(query.min_download_mbps !== undefined && { minDownloadMbps: query.min_download_mbps }),
  ...(query.min_ports !== undefined && { minPorts: query.min_ports }),
  ...(query.min_cpus !== undefined && { minCpus: query.min_cpus }),
  ...(query.min_ram_gb !== undefined && { minRamGb: query.min_ram_gb }),
  ...(query.min_disk_gb !== undefined && { minDiskGb: query.min_disk_gb }),
  ...(query.max_price_per_gpu_hour !== undefined && { maxPricePerGpuCents: query.max_price_per_gpu_hour }),
  ...(query.country !== undefined && { country: query.country }),
  ...(query.region !== undefined && { region: query.region }),
  ...(query.docker_in_docker !== undefined && { dockerInDocker: query.docker_in_docker }),
  ...(query.mig !== undefined && { mig: query.mig }),
  ...(query.baremetal !== undefined && { baremetal: query.baremetal }),
  ...(query.virtualized !== undefined && { virtualized: query.virtualized }),
  ...(query.provider !== undefined && { provider: query.provider }),
  extra: (query.extra_filters ?? []) as ExtraFilter[],
});

// ---- responses --------------------------------------------------------------------------------


export const NodeOut = z
  .object({
    id: z.string().meta({ description: 'Provider-scoped and stable, `<provider>:<its offer id>`; pass it as node_id to rent.' }),
    provider: z.string(),
    underlying_cloud: z.string().nullable().meta({
      description:
        'Where the provider resells other clouds: the cloud the machine comes from (our provider name where this server reaches that cloud directly). null when the provider is the cloud itself.',
    }),
    gpu_type: z.string().meta({ description: 'GPU family, e.g. H100.' }),
    gpu_model: z.string(),
    gpu_count: z.int(),
    vram_gb: z.number().meta({ description: 'Per GPU.' }),
    price_per_hour_cents: z.int().meta({ description: 'Whole machine, per hour. Checked again upstream when you rent.' }),
    price_per_gpu_hour_cents: z.int().meta({ description: 'price_per_hour_cents / gpu_count, rounded up.' }),
    spot_price_per_gpu_hour_cents: z.int().nullable().meta({
      description:
        "One GPU's share of the machine's spot (interruptible) price now, rounded up like price_per_gpu_hour_cents and with the same markup; null where the provider has no spot market or states no spot price for this node (see `spot` in supported_operations).",
    }),
    price_verified: z.boolean(),
    cpus: z.int(),
    ram_gb: z.number(),
    disk_gb: z.number(),
    download_mbps: z.number().nullable(),
    ports: z.int().nullable(),
    country: z.string().nullable(),
    region: z.string().nullable(),
    docker_in_docker: z.boolean(),
    mig: z.boolean(),
    baremetal: z.boolean(),
    virtualized: z.boolean(),
    available: z.int().meta({ description: 'How many such machines can be rented now.' }),
    supported_operations: z.array(z.string()),
    attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).meta({
      description: 'Raw upstream fields that extra_filters can match.',
    }),
  })
  .meta({ id: 'NodeOut' });

export const ProviderStatusOut = z
  .object({
    provider: z.string(),
    status: z.enum(['ok', 'error']).meta({ description: 'error: the last refresh failed; offers from an older snapshot may still be listed.' }),
    error: z.string().nullable(),
    snapshot_age_seconds: z.int().nullable().meta({ description: 'Age of the offers served; null when none are.' }),
    fetched_at: dateTimeOut().nullable(),
    count: z.int().meta({ description: 'Matching offers of this provider.' }),
    ignored_filters: z.array(z.string()).meta({ description: 'Filters not applied to this provider: fields it does not report, extra_filters keys it does not know.' }),
    extra_filter_keys: z.array(z.string()),
  })
  .meta({ id: 'ProviderStatusOut' });

export const GpuSearchOut = z
  .object({
    nodes: z.array(NodeOut).meta({ description: 'Cheapest first by price_per_hour_cents.' }),
    total: z.int().meta({ description: 'Matching nodes before `limit`.' }),
    providers: z.array(ProviderStatusOut),
    ignored_filters: z.array(z.string()).meta({ description: 'Filters that no queried provider applied.' }),
    rentals_open: z.boolean(),
  })
  .meta({ id: 'GpuSearchOut' });

export const MarketGroupOut = z
  .object({
    gpu_type: z.string(),
    provider: z.string(),
    region: z.string().nullable(),
    offers: z.int(),
    verified_offers: z.int(),
    available_machines: z.int(),
    available_gpus: z.int(),
    min_price_cents: z.int().nullable().meta({ description: 'Whole machine per hour, verified prices only; null when none is verified.' }),
    max_price_cents: z.int().nullable(),
    min_price_per_gpu_cents: z.int().nullable(),
    max_price_per_gpu_cents: z.int().nullable(),
  })
  .meta({ id: 'MarketGroupOut' });

export const RecentInstanceOut = z
  .object({
    id: z.string(),
    node_id: z.string(),
    provider: z.string(),
    gpu_type: z.string(),
    gpu_count: z.int(),
    status: z.string(),
    rate_cents_per_hour: z.int(),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'RecentInstanceOut' });

export const MarketplaceOut = z
  .object({
    groups: z.array(MarketGroupOut).meta({ description: 'By gpu_type, then provider, then region.' }),
    recent_instances: z.array(RecentInstanceOut).meta({ description: "The calling tenant's latest instances, newest first." }),
    providers: z.array(ProviderStatusOut),
    ignored_filters: z.array(z.string()),
  })
  .meta({ id: 'MarketplaceOut' });

export const FamilyOut = z
  .object({
    gpu_type: z.string(),
    gpu_model: z.string().meta({ description: 'The model of the cheapest machine of the family.' }),
    min_price_per_gpu_hour: z.number().meta({ description: 'USD per GPU-hour, the cheapest verified price (two decimals).' }),
    min_price_per_gpu_hour_cents: z.int(),
    available_gpus: z.int(),
    machines: z.int(),
    max_vram_gb: z.number(),
  })
  .meta({ id: 'MarketFamilyOut' });

export const MarketSummaryOut = z
  .object({
    updated_at: dateTimeOut(),
    stale: z.boolean().meta({ description: 'true when the last refresh failed and an older snapshot (at most 10 minutes old) is served.' }),
    gpus_available: z.int(),
    machines: z.int(),
    families: z.array(FamilyOut),
    rentals_open: z.boolean(),
  })
  .meta({ id: 'MarketSummaryOut' });

export const nodeOut = ({ offer, priceCents, perGpuCents, spotPerGpuCents, supportedOperations }: MarketNode): z.input<typeof NodeOut> => ({
  id: offer.id,
  provider: offer.provider,
  underlying_cloud: offer.underlyingCloud ?? null,
  gpu_type: offer.gpuType,
  gpu_model: offer.gpuModel,
  gpu_count: offer.gpuCount,
  vram_gb: offer.vramGb,
  price_per_hour_cents: priceCents,
  price_per_gpu_hour_cents: perGpuCents,
  spot_price_per_gpu_hour_cents: spotPerGpuCents,
  price_verified: offer.priceVerified,
  cpus: offer.cpus,
  ram_gb: offer.ramGb,
  disk_gb: offer.diskGb,
  download_mbps: offer.downloadMbps,
  ports: offer.ports,
  country: offer.country,
  region: offer.region,
  docker_in_docker: offer.dockerInDocker,
  mig: offer.mig,
  baremetal: offer.baremetal,
  virtualized: offer.virtualized,
  available: offer.available,
  supported_operations: [...supportedOperations],
  attributes: offer.attributes,
});

export const providerStatusOut = (report: ProviderReport, extraFilterKeys: readonly string[]): z.input<typeof ProviderStatusOut> => ({
  provider: report.provider,
  status: report.ok ? 'ok' : 'error',
  error: report.error,
  snapshot_age_seconds: report.snapshotAgeSeconds,
  fetched_at: isoOrNull(report.fetchedAt),
  count: report.count,
  ignored_filters: report.ignoredFilters,
  extra_filter_keys: [...extraFilterKeys],
});

export const marketGroupOut = (group: MarketGroup): z.input<typeof MarketGroupOut> => ({
  gpu_type: group.gpuType,
  provider: group.provider,
  region: group.region,
  offers: group.offers,
  verified_offers: group.verifiedOffers,
  available_machines: group.availableMachines,
  available_gpus: group.availableGpus,
  min_price_cents: group.minPriceCents,
  max_price_cents: group.maxPriceCents,
  min_price_per_gpu_cents: group.minPerGpuCents,
  max_price_per_gpu_cents: group.maxPerGpuCents,
});

export const marketSummaryOut = ({ summary, updatedAt, stale, rentalsOpen }: SummaryAnswer): z.input<typeof MarketSummaryOut> => ({
  updated_at: updatedAt.toISOString(),
  stale,
  gpus_available: summary.gpusAvailable,
  machines: summary.machines,
  families: summary.families.map((family) => ({
    gpu_type: family.gpuType,
    gpu_model: family.gpuModel,
    // cents / 100 prints as the exact two-decimal amount in JSON; the integer stays beside it
    min_price_per_gpu_hour: family.minPerGpuCents / 100,
    min_price_per_gpu_hour_cents: family.minPerGpuCents,
    available_gpus: family.availableGpus,
    machines: family.machines,
    max_vram_gb: family.maxVramGb,
  })),
  rentals_open: rentalsOpen,
});
