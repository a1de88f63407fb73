import type { MarketService } from '../market/market-service.ts';
import type { NodeChooser } from '../market/node-chooser.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { Metrics } from '../ports/metrics.ts';
import type { Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import type { VolumeService } from '../volumes/volume-service.ts';
import type { RentalCatalog } from './rental-options.ts';

export const HOUR_MS = 3_600_000;

/** A create's lease unless renewed: a create whose process died is taken up by the first pass past it. */
export const DEFAULT_LAUNCH_LEASE_MS = 30_000;

export interface RentalSettings {
  /** How long a retry waits for the first request's create in another live process before it answers 409 "still in progress". */
  launchWaitMs: number;
  /** How long a create's lease lasts unless its process renews it (renewed every third of it while the create is in flight). */
  launchLeaseMs: number;
  /** The longest a rental waits for the provider's create before it answers with the instance provisioning. */
  answerWithinMs: number;
  /** Machines stopped at once per provider when a whole account stops (emergency stop, hold, breaker). */
  providerConcurrency: number;
}

/** What every rentals use case works with: our records, the clock, ids, the market and its chooser, the providers. */
export interface RentalsContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  secrets: Secrets;
  market: MarketService;
  chooser: NodeChooser;
  providers: ReadonlyMap<string, Provider>;
  catalog: RentalCatalog;
  volumes: VolumeService;
  metrics: Metrics;
  settings: RentalSettings;
  /** Creates in flight in this process, by instance id: a retry with the same key waits for its answer. */
  launching: Map<string, Promise<unknown>>;
  /** This process, as the holder of its creates' leases: new at every start, so a restarted process holds none of before. */
  holder: string;
}
