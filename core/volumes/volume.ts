/** Our volume ids (vol_…): the label a provider keeps, so a volume is known as ours. */
export const VOLUME_ID_PREFIX = 'vol';
const VOLUME_ID = /^vol_[a-z0-9]+$/;
export const isVolumeId = (label: unknown): label is string => typeof label === 'string' && VOLUME_ID.test(label);

export type VolumeStatus = 'creating' | 'available' | 'attached' | 'deleted' | 'failed';

/** Persistent network storage at a provider that outlives machines. */
export interface Volume {
  id: string;
  tenantId: string;
  name: string;
  sizeGb: number;
  provider: string;
  region: string;
  status: VolumeStatus;
  /** The provider's own id; null until it answered the create. */
  upstreamId: string | null;
  /** The live instance it is attached to. */
  attachedInstanceId: string | null;
  /** The provider's storage price when it was made: exact decimal USD per GB-month. */
  priceUsdPerGbMonth: string;
  /** What each GB-hour is billed: the monthly price / 730, rounded up to 6 decimals (exact decimal text). */
  priceUsdPerGbHour: string;
  /** Hours of storage already recorded for metering (the sweep records each started hour once). */
  billedHours: number;
  createdAt: Date;
  deletedAt: Date | null;
  /** The token that made it: its storage is committed on that token's chain. null: made before volumes were gated. */
  tokenId: string | null;
  /** Its window: storage is billed up to here at most, and the sweep deletes it then. null: kept until deleted. */
  endsAt: Date | null;
  /** What it may still be charged at most, held on its token's chain (docs/decisions.md, "Volumes cost money"). */
  commitmentCents: number;
}

/** A volume costs storage from its creation to its deletion, every started hour; a failed create costs nothing. */
export const isBillable = (volume: Volume): boolean => volume.status !== 'failed' && volume.status !== 'creating';
