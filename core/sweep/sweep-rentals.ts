import type { RentalService } from '../rentals/rental-service.ts';

/**
 * What the sweep asks of rentals: end a machine's billing in the caller's transaction, remove it upstream, and stop
 * every machine of the accounts a breaker tripped. Named once here, so the steps depend on these three alone.
 */
export type SweepRentals = Pick<RentalService, 'endBilling' | 'removeUpstream' | 'terminateAllOf' | 'launchingHere'>;
