import type { TemplateSearch } from '../catalog/records.ts';
import type { Cents } from '../money.ts';
import type { InstanceStatus } from '../rentals/instance.ts';

/** Our reservation ids (res_…); a reservation's rental carries it as its idempotency key. */
export const RESERVATION_ID_PREFIX = 'res';

/** The rules of reservations: how far ahead a reservation starts, and how long it may run. */
export const RESERVATION_LIMITS = {
  minLeadMs: 5 * 60_000,
  maxLeadMs: 90 * 24 * 3_600_000,
  minHours: 1,
  maxHours: 720,
  /** GET /v1/reservations/due: those starting within this long. */
  dueWithinMs: 60 * 60_000,
} as const;

/** What is stored. `completed`, and `failed` after a start, are read from the rental (see shownStatus). */
export type StoredReservationStatus = 'scheduled' | 'starting' | 'active' | 'failed' | 'cancelled';
export type ReservationStatus = StoredReservationStatus | 'completed';

/** A machine booked for a future window: rented by the sweep at `startsAt`, removed at `endsAt`. */
export interface Reservation {
  id: string;
  tenantId: string;
  /** The token that made it: its chain holds the commitment, and the rental is made as it. */
  tokenId: string;
  name: string;
  status: StoredReservationStatus;
  startsAt: Date;
  hours: number;
  endsAt: Date;
  /** The node asked for, or null when a search chooses one at the start. */
  nodeId: string | null;
  /** GET /v1/gpus filters (a template's search form), or null for a node_id reservation. */
  search: TemplateSearch | null;
  /** The quoted node's machine: a node_id whose node is gone falls back to this type and count. */
  gpuType: string;
  gpuCount: number;
  /** The quote, per GPU-hour: the start never rents above it (or above maxPricePerGpuCents, when given). */
  quotedPerGpuCents: Cents;
  maxPricePerGpuCents: Cents | null;
  /** The quote for the whole machine until the start; the rental's rate once it started. */
  rateCentsPerHour: Cents;
  /** What the reservation holds on its token chain (quote x hours); 0 once its rental took it over, or it ended. */
  commitmentCents: Cents;
  templateId: string | null;
  sshKeyId: string | null;
  idempotencyKey: string | null;
  requestDigest: string;
  instanceId: string | null;
  failure: string | null;
  /** When a sweep last took it up to start it (a start left half way is taken up again after a while). */
  claimedAt: Date | null;
  createdAt: Date;
}

/** A reservation with what its rental has become, when it has one. */
export interface ReservationView extends Reservation {
  rental: { status: InstanceStatus; failure: string | null } | null;
}

/** The per-GPU price a start may rent at, at most. */
export const ceilingPerGpuCents = (r: Pick<Reservation, 'quotedPerGpuCents' | 'maxPricePerGpuCents'>): Cents => r.maxPricePerGpuCents ?? r.quotedPerGpuCents;

/** A reservation whose rental ended is completed (or failed, when the rental failed: never ran). */
export function shownStatus(view: ReservationView): ReservationStatus {
  if (view.status !== 'active' || !view.rental) return view.status;
  if (view.rental.status === 'failed') return 'failed';
  if (view.rental.status === 'terminating' || view.rental.status === 'terminated') return 'completed';
  return 'active';
}

export const shownFailure = (view: ReservationView): string | null =>
  view.failure ?? (view.status === 'active' && view.rental?.status === 'failed' ? view.rental.failure : null);
