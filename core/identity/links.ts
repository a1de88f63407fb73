/** An identity (provider, subject) linked to the tenant it signs in to. */
export interface IdentityLink {
  provider: string;
  subject: string;
  tenantId: string;
  email: string | null;
  createdAt: Date;
}

export type DeviceFlowStatus = 'pending' | 'complete' | 'expired' | 'denied';

/** A device flow begun here: its code host's device code is kept as a digest only. */
export interface DeviceFlow {
  id: string;
  provider: string;
  deviceCodeDigest: string;
  status: DeviceFlowStatus;
  /** Seconds a poller must wait between polls (raised by slow_down). */
  intervalSeconds: number;
  expiresAt: Date;
  lastPolledAt: Date | null;
  /** The tenant the completed flow signed in to. */
  tenantId: string | null;
  createdAt: Date;
}
