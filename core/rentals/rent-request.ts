import type { SearchTerms } from '../market/search-terms.ts';
import type { Cents } from '../money.ts';
import type { RecoveryRequest } from '../recovery/recovery.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { Instance } from './instance.ts';
import type { RentalOptionsRequest } from './rental-options.ts';

export interface RentRequest extends RentalOptionsRequest {
  /** null: chosen by `search` or `quoteId`, else the cheapest node matching the template's search now (templateId names one). */
  nodeId: string | null;
  /** GET /v1/gpus filters: the cheapest match with a verified live price at or under its ceiling (left out when not sent). */
  search?: SearchTerms;
  /** A quote (POST /v1/quotes): its node, for its hours, at no more than its rate (left out when not sent). */
  quoteId?: string;
  name: string | null;
  idempotencyKey: string | null;
  /** Managed recovery: a replacement is rented when the machine is lost, preempted or fails at its provider. */
  recovery?: RecoveryRequest | null;
}

/**
 * A rental that takes over a booking made earlier (a reservation): the commitment the booking holds on the
 * caller's token chain becomes the rental's in the rental's own transaction, so it is counted once.
 */
export interface Adoption {
  /** Cents the booking holds on the caller's chain: free for this rental's cap check, and released by it. */
  heldCents: Cents;
  /** The window ends here (the booking's end) rather than termination_hours from now (the hours are still its commitment); null: none. */
  windowEndsAt: Date | null;
  /**
   * The rental's own commitment on the chain instead of rate x termination hours (a spot claim keeps its
   * commitment on itself for its life, so its machines add none).
   */
  commitmentCents?: Cents;
  /**
   * A spot rental: priced at the offer's spot price now, refused (CONFLICT) above this bid per GPU-hour, made
   * with the provider's createSpotMachine at the bid, billed by the started minute (no minimum).
   */
  spot?: { bidCentsPerGpuHour: Cents };
  /** Named in the description of each ledger entry of the rental ("reservation res_…"). */
  ledgerNote: string;
  /** Runs in the rental's transaction once the instance is added (the booking records it); throwing undoes the rental. */
  adopt(uow: UnitOfWork, instance: Instance): Promise<void>;
  /**
   * Runs in the transaction that fails the rental when the provider refused its machine (the charge refunded): the
   * booking lets go of it there, so it is never seen holding a machine that was not charged.
   */
  refused?(uow: UnitOfWork, failed: Instance): Promise<void>;
}

export interface Rented {
  instance: Instance;
  /** The answer to an earlier request with the same idempotency key. */
  replayed: boolean;
}
