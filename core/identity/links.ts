import type { Cents } from '../money.ts';
import type { Role } from '../tenancy/roles.ts';

export const IDENTITY_ID_PREFIX = 'idn';

/** An identity (provider, subject) linked to the tenant it signs in to: one of the tenant's people. */
export interface IdentityLink {
  /** How the tenant lists and removes it (GET and DELETE /v1/identities). */
  id: string;
  provider: string;
  subject: string;
  tenantId: string;
  email: string | null;
  /** The handle at the provider (GitHub's login), shown beside or instead of the address. */
  login: string | null;
  /** The token whose bearer linked the person into the tenant; null: their first sign-in made the tenant, or an operator invited them. */
  linkedByTokenId: string | null;
  createdAt: Date;
  /** The person's node in the tenant's tree of tokens (kind `link`): their sessions hang under it. */
  nodeId: string;
  /** Read from the node: the person's role, and a member's limits (null when none). */
  role: Role;
  spendLimitCents: Cents | null;
  maxRentalHours: number | null;
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
