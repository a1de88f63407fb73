import { DomainError } from '../errors.ts';

/**
 * Renting, reserving and claiming wait for the operator to open rentals (GET /v1/market/summary's rentals_open):
 * until then each is refused before anything is quoted, saying what was not done (`nothing`: "Nothing was charged.").
 */
export function requireRentalsOpen(settings: { rentalsOpen: boolean }, nothing: string): void {
  if (!settings.rentalsOpen) throw new DomainError('RENTALS_CLOSED', `renting is not open yet; GET /v1/market/summary says when rentals_open turns true. ${nothing}`);
}
