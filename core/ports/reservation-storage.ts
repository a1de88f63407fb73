import type { Reservation, ReservationView } from '../reservations/reservation.ts';

/** Reservations: reads are scoped to one tenant, so another tenant's ids read as absent. */
export interface ReservationStore {
  add(reservation: Reservation): Promise<void>;
  get(tenantId: string, reservationId: string): Promise<ReservationView | null>;
  /** The reservation row alone, locked until the transaction ends. */
  lock(tenantId: string, reservationId: string): Promise<Reservation | null>;
  /** The tenant's reservations made by these tokens that have not ended (scheduled, starting, active), locked. */
  lockOpenOf(tenantId: string, tokenIds: readonly string[]): Promise<Reservation[]>;
  byIdempotencyKey(tenantId: string, key: string): Promise<ReservationView | null>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<ReservationView[]>;
  /** The tenant's scheduled reservations starting at or before `until`, soonest first. */
  scheduledUntil(tenantId: string, until: Date, limit: number): Promise<ReservationView[]>;
  /**
   * Takes up to `limit` due reservations (starts_at <= now) of every tenant to start them: scheduled ones (but
   * `except`), and starting ones claimed before `staleBefore` (a start that stopped half way). Each is marked
   * starting, claimed at `now`, in one statement; rows another transaction holds are skipped, so two sweeps
   * never take the same one. Reservations of a node at one of `busyProviders` are left for later.
   */
  claimDue(now: Date, staleBefore: Date, limit: number, except: readonly string[], busyProviders?: readonly string[]): Promise<Reservation[]>;
  update(reservation: Reservation): Promise<void>;
  /**
   * Tokens of any tenant that made scheduled reservations and whose chain (the token or one that issued it) is past
   * its expiry at `now`: what ended by expiring still holds.
   */
  expiredMakers(now: Date, limit: number): Promise<{ tenantId: string; tokenId: string }[]>;
}
