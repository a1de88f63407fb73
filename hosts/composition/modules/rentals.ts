import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { CatalogService } from '../../../core/catalog/catalog-service.ts';
import { MarketService } from '../../../core/market/market-service.ts';
import { MeteringService } from '../../../core/metering/metering-service.ts';
import { RentalService } from '../../../core/rentals/rental-service.ts';
import { ReservationService } from '../../../core/reservations/reservation-service.ts';
import { SpotClaimService } from '../../../core/spot/spot-claim-service.ts';
import { DEFAULT_MAX_GB_PER_TENANT, VolumeService } from '../../../core/volumes/volume-service.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { basics, get, METRICS, PROVIDERS, SECRETS } from './ports.ts';

/** What costs money as it runs: machines, volumes, reservations and spot claims, each through the one spend gate. */
export function registerRentals(container: DependencyContainer, parts: { config: ControlPlaneConfig; providerConcurrency: number }): void {
  const { config } = parts;
  container.register(VolumeService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new VolumeService({
          ...basics(c),
          providers: get(c, PROVIDERS),
          usage: c.resolve(MeteringService),
          limits: { maxGbPerTenant: config.volumes?.maxGbPerTenant ?? DEFAULT_MAX_GB_PER_TENANT },
        }),
    ),
  });
  container.register(RentalService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new RentalService({
          ...basics(c),
          secrets: get(c, SECRETS),
          market: c.resolve(MarketService),
          providers: get(c, PROVIDERS),
          catalog: c.resolve(CatalogService),
          volumes: c.resolve(VolumeService),
          metrics: get(c, METRICS),
          providerConcurrency: parts.providerConcurrency,
          ...(config.upstream?.rentTimeoutMs !== undefined && { answerWithinMs: config.upstream.rentTimeoutMs }),
          ...(config.upstream?.launchLeaseMs !== undefined && { launchLeaseMs: config.upstream.launchLeaseMs }),
        }),
    ),
  });
  container.register(ReservationService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new ReservationService({
          ...basics(c),
          secrets: get(c, SECRETS),
          market: c.resolve(MarketService),
          providers: get(c, PROVIDERS),
          rentals: c.resolve(RentalService),
          catalog: c.resolve(CatalogService),
        }),
    ),
  });
  container.register(SpotClaimService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new SpotClaimService({
          ...basics(c),
          market: c.resolve(MarketService),
          providers: get(c, PROVIDERS),
          rentals: c.resolve(RentalService),
          catalog: c.resolve(CatalogService),
        }),
    ),
  });
}
