import type { Invitation } from '../invitations/invitation.ts';

/** A tenant's invitations (docs/decisions.md, "Invitations"). */
export interface InvitationStore {
  add(invitation: Invitation): Promise<void>;
  /** The tenant's invitations, newest first, at most `limit`. */
  list(tenantId: string, limit: number): Promise<Invitation[]>;
  /** Locked until the transaction ends; null when the tenant has no such invitation. */
  lock(tenantId: string, invitationId: string): Promise<Invitation | null>;
  /** The invitation with this code's digest, of any tenant, locked until the transaction ends. */
  lockByDigest(codeDigest: string): Promise<Invitation | null>;
  update(invitation: Invitation): Promise<void>;
}
