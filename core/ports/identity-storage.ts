import type { DeviceFlow, IdentityLink } from '../identity/links.ts';

/** Which tenants each identity (provider, subject) belongs to: one link per tenant. */
export interface IdentityLinkStore {
  /** The identity's live link into `tenantId`, or without it the tenant it joined first (null: a stranger there). */
  find(provider: string, subject: string, tenantId?: string): Promise<IdentityLink | null>;
  /** Holds the identity until the transaction ends: two first sign-ins at once make one tenant, not two. */
  lockIdentity(provider: string, subject: string): Promise<void>;
  /** The identity's live links, the tenant it joined first first, with each tenant's name. */
  tenantsOf(provider: string, subject: string): Promise<(IdentityLink & { tenantName: string })[]>;
  /** Who the console session `tokenId` was issued to (recordSession), if anyone. */
  holderOf(tokenId: string): Promise<{ provider: string; subject: string } | null>;
  /** Adds the link unless the identity is linked already (then false, and nothing changes). */
  add(link: IdentityLink): Promise<boolean>;
  /** The provider's identity last seen with this address (any capitals), if one is linked. */
  findByEmail(provider: string, email: string): Promise<IdentityLink | null>;
  /** The tenant's people, oldest link first; with `lock`, their rows stay locked until the transaction ends. */
  listForTenant(tenantId: string, options?: { lock?: boolean }): Promise<IdentityLink[]>;
  /** Unlinks the tenant's identity `id`; false when the tenant has no such identity. */
  remove(tenantId: string, id: string): Promise<boolean>;
  /** Records that the console session `tokenId` was issued to the identity (provider, subject). */
  recordSession(tokenId: string, provider: string, subject: string): Promise<void>;
  /** The identity's console sessions not yet revoked nor expired at `now`, whatever their tenant. */
  liveSessions(provider: string, subject: string, now: Date): Promise<{ tenantId: string; tokenId: string }[]>;
}

/** Device flows begun here, found by the digest of their device code. */
export interface DeviceFlowStore {
  add(flow: DeviceFlow): Promise<void>;
  /** Locked until the transaction ends, so one poll at a time decides the flow. */
  lockByDigest(deviceCodeDigest: string): Promise<DeviceFlow | null>;
  update(flow: DeviceFlow): Promise<void>;
}

/** How many failures fell in a window, and the oldest of them (when the window frees a slot). */
export interface FailureCount {
  count: number;
  oldest: Date | null;
}

/**
 * Failed sign-ins and code tries, counted across replicas (docs/decisions.md, "Sign-in throttles"). A failure
 * is recorded before the check it counts and taken back when the check succeeds, under a lock on the email,
 * so parallel wrong answers can never all be checked against a count none of them has written yet.
 */
export interface AuthFailureStore {
  /** Locks the email until the transaction ends: one caller at a time counts and records its failures. */
  lockEmail(emailKey: string): Promise<void>;
  /** The failures of `kind` since `since`: of the email from anywhere, and of the email from `clientKey`. */
  count(emailKey: string, clientKey: string, kind: 'password' | 'code', since: Date): Promise<{ email: FailureCount; client: FailureCount }>;
  /** Records a failure; answers its id. */
  record(emailKey: string, clientKey: string, kind: 'password' | 'code', at: Date): Promise<string>;
  /** Takes a recorded failure back (the check it was recorded for succeeded, or never ran). */
  forget(id: string): Promise<void>;
  /** Forgets failures older than `before` (of every email). */
  prune(before: Date): Promise<void>;
}

/** Asks that may mail an address, for the hourly allowance per address, counted across replicas. */
export interface MailSendStore {
  /** Locks the address until the transaction ends: one caller at a time counts and records. */
  lockAddress(address: string): Promise<void>;
  countSince(address: string, since: Date): Promise<FailureCount>;
  record(address: string, at: Date): Promise<void>;
  /** Forgets asks older than `before` (of every address). */
  prune(before: Date): Promise<void>;
}
