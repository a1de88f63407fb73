import type { SearchTerms } from '../market/search-terms.ts';
import { DomainError, invalidInput } from '../errors.ts';
import { HOUR_MS } from '../rentals/context.ts';
import type { RentRequest } from '../rentals/rent-request.ts';
import type { RentalOptionsRequest } from '../rentals/rental-options.ts';

/**
 * What bookings (reservations, spot claims) share: a booking asks for a node or a search, rents later through the
 * same path as POST /v1/instances (rentals/rent.ts) as the token that made it, and takes only a template and a
 * saved key of a rental's options.
 */

/** Every rental option a booking does not take. */
export const NO_RENTAL_OPTIONS = {
  sshPublicKey: null,
  imageId: null,
  volumeIds: null,
  env: null,
  ports: null,
  startupScript: null,
  terminationHours: null,
} as const satisfies Omit<RentalOptionsRequest, 'sshKeyId' | 'templateId'>;

/** A booking names exactly one of a node and a search. */
export function checkNodeOrSearch(request: { nodeId: string | null; search: SearchTerms | null }): void {
  if ((request.nodeId === null) === (request.search === null)) {
    throw invalidInput(['body', 'node_id'], 'send exactly one of node_id (a node from GET /v1/gpus) and search (GET /v1/gpus filters)');
  }
}

/** What a booking is rented as: its name, template and key, keyed by `idempotencyKey`, for the hours left to its end. */
export function bookingRentRequest(
  booking: { name: string; sshKeyId: string | null; templateId: string | null; endsAt: Date | null },
  nodeId: string,
  idempotencyKey: string,
  now: Date,
): RentRequest {
  return {
    ...NO_RENTAL_OPTIONS,
    nodeId,
    name: booking.name,
    idempotencyKey,
    sshKeyId: booking.sshKeyId,
    templateId: booking.templateId,
    // the hours left to ends_at, started hours counted; the window itself ends at ends_at
    terminationHours: booking.endsAt ? Math.max(1, Math.ceil((booking.endsAt.getTime() - now.getTime()) / HOUR_MS)) : null,
  };
}

/** A rental refused for something about the node (gone, dearer than allowed, not what was asked): another node may do. */
export const nodeRefused = (error: unknown): error is DomainError => error instanceof DomainError && (error.code === 'CONFLICT' || error.code === 'INVALID_INPUT');
