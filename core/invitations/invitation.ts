import type { Cents } from '../money.ts';
import type { Role } from '../tenancy/roles.ts';

export const INVITATION_ID_PREFIX = 'inv';
/** An invitation's code works 7 days (docs/decisions.md, "Invitations"). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3_600_000;

export type InvitationStatus = 'pending' | 'accepted' | 'revoked';

/** An invitation from a tenant to an address, to join it with a role; its single-use code is kept as a digest only. */
export interface Invitation {
  id: string;
  tenantId: string;
  email: string;
  role: Role;
  spendLimitCents: Cents | null;
  maxRentalHours: number | null;
  codeDigest: string;
  /**
   * The credential that invited, and the node it acted for (its person's link for a session): the person joins under
   * that node (an owner from the tenant itself), and only while the node still holds the authority to have invited them.
   * Null in invitations of an owner made before the node was kept: the inviting credential's node is read then.
   */
  invitedByTokenId: string;
  parentNodeId: string | null;
  status: InvitationStatus;
  /** False when the address's mail allowance was spent: nothing was mailed (invite again later). */
  mailed: boolean;
  expiresAt: Date;
  createdAt: Date;
  endedAt: Date | null;
  acceptedBy: string | null;
}

/** What a reader is shown: a pending invitation past its time is `expired`. */
export const shownStatus = (invitation: Invitation, now: Date): InvitationStatus | 'expired' =>
  invitation.status === 'pending' && invitation.expiresAt.getTime() <= now.getTime() ? 'expired' : invitation.status;
