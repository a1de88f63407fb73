import { MICROS_PER_UNIT, microsOf } from '../metering/decimal.ts';
import { chargedCents, exactCost } from '../metering/rounding.ts';
import type { Cents } from '../money.ts';

/** What a volume's storage is priced by: its size and its GB-hour price (exact decimal USD). */
export interface StoragePrice {
  sizeGb: number;
  priceUsdPerGbHour: string;
}

const hourPico = (volume: StoragePrice): bigint => exactCost(BigInt(volume.sizeGb) * MICROS_PER_UNIT, microsOf(volume.priceUsdPerGbHour));

/**
 * A volume's storage rate in whole cents per hour, rounded up: the most one recorded hour can add to its tenant's
 * metered total (one hour's exact cost can raise ceil(total) by at most its own ceiling), so `hours` of this rate
 * bound what the volume can be charged over `hours` (docs/decisions.md, "Volumes cost money").
 */
export const storageCentsPerHour = (volume: StoragePrice): Cents => Number(chargedCents(hourPico(volume)));

/** What `hours` of the volume's storage cost exactly, rounded up once: the funds asked for before it is made. */
export const storageCents = (volume: StoragePrice, hours: number): Cents => Number(chargedCents(hourPico(volume) * BigInt(hours)));
