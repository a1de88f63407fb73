import type { Account, AutoRecharge, AutoRechargePayment, CardOnFile, Deposit, DepositKind, DepositStatus, LedgerEntry, LedgerPosting, Pause } from '../billing/account.ts';
import type { MarketSummary } from '../market/summary.ts';
import type { Instance } from '../rentals/instance.ts';
import type { BootstrapSecret, Tenant } from '../tenancy/tenant.ts';
import type { DeviceFlow, IdentityLink } from '../identity/links.ts';
import type { Volume } from '../volumes/volume.ts';
import type { Token } from '../tenancy/token.ts';
import type { Role } from '../tenancy/roles.ts';
import type { Scope } from '../tenancy/scopes.ts';
import type { Granularity } from '../billing/periods.ts';
import type { Cents } from '../money.ts';
import type { NewUsage, Settlement, StoredUsage, UsageFilter, UsagePeriodRow, UsageRecord } from '../metering/usage.ts';
import type { ImageStore, SshKeyStore, TemplateStore } from './catalog-storage.ts';
import type { ReservationStore } from './reservation-storage.ts';
import type { EventOutbox } from './event-outbox.ts';
import type { WebhookStore } from './webhook-storage.ts';
import type { SpotClaimStore } from './spot-claim-storage.ts';
import type { BudgetStore } from './budget-storage.ts';
import type { RecoveryStore } from './recovery-storage.ts';
import type { QuoteStore } from './quote-storage.ts';
import type { InvitationStore } from './invitation-storage.ts';

/**
 * Persistence, shaped around the use cases. A unit of work is one database transaction:
 * everything done through it commits together or not at all. Locks live here, not in the core.
 */
export interface Storage {
  /**
   * Runs `work` only if no other process (or call) is running work under the same name; answers
   * `{ ran: false }` at once otherwise. On PostgreSQL this is an advisory lock held by a session of its
   * own; `lease.held()` tells whether that session (and so the lock) is still alive, so long work can
   * stop before its next step once another runner may have started.
   */
  exclusive<T>(name: string, work: (lease: Lease) => Promise<T>): Promise<{ ran: true; result: T } | { ran: false }>;
  /** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
  transaction<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  /** Runs read-only `work` outside any transaction. */
  read<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  /**
   * Runs `work` outside any transaction, each statement committing on its own: for a write that is one
   * atomic statement (or steps each safe alone), where BEGIN and COMMIT would only add two round trips.
   */
  autocommit<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface Lease {
  held(): Promise<boolean>;
}

export interface UnitOfWork {
  volumes: VolumeStore;
  identities: IdentityLinkStore;
  deviceFlows: DeviceFlowStore;
  authFailures: AuthFailureStore;
  mailSends: MailSendStore;
  tenants: TenantStore;
  tokens: TokenStore;
  marketSummary: MarketSummaryStore;
  accounts: AccountStore;
  ledger: LedgerStore;
  deposits: DepositStore;
  instances: InstanceStore;
  sweep: SweepStore;
  autoRecharges: AutoRechargeStore;
  sshKeys: SshKeyStore;
  images: ImageStore;
  templates: TemplateStore;
  usage: UsageStore;
  reservations: ReservationStore;
  /** Events told in the transaction of their change. */
  events: EventOutbox;
  webhooks: WebhookStore;
  spotClaims: SpotClaimStore;
  budgets: BudgetStore;
  recoveries: RecoveryStore;
  quotes: QuoteStore;
  invitations: InvitationStore;
}

/**
 * Told before a transaction that charged some account commits (docs/decisions.md, "Monthly budgets"), in that
 * transaction: what it records commits or rolls back with the charges. What it answers runs after the commit.
 */
export interface ChargeWatcher {
  charged(uow: UnitOfWork): Promise<(() => void) | null>;
}

export interface AutoRechargeStore {
  /**
   * Accounts with auto-recharge on, a card saved and not suspended, that may need a payment: a balance
   * under the threshold, or an hour block due at `now` that is not paid.
   */
  candidates(now: Date): Promise<string[]>;
  /** Attempts that charged the card (or may have: pending) since `since`. */
  countSince(tenantId: string, since: Date): Promise<number>;
  /** Adds a pending attempt; false when the account already has one pending (another sweep is paying). */
  claim(payment: AutoRechargePayment): Promise<boolean>;
  decide(paymentId: string, status: 'succeeded' | 'failed', error: string | null, at: Date): Promise<void>;
  /** Attempts still waiting for the processor's answer, oldest first. */
  pending(): Promise<AutoRechargePayment[]>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<AutoRechargePayment[]>;
}

/** The billing sweep's set-based steps: each is a few statements, whatever the number of machines. */
export interface SweepStore {
  /**
   * Pays every hourly block that has come due (at most one per instance per call) from each account's
   * balance, cheapest-in-time first, while the balance covers it; a block that does not fit, and every
   * later one of that account, stays unpaid (it accrues to owed). Returns how many blocks were paid.
   */
  payDueBlocks(now: Date): Promise<number>;
  /**
   * Tenants that may need their breaker tripped: a billed machine past its paid time (funds may be
   * exhausted), machines that together burn more than the account's maximum (or `defaultMaxBurn`), or
   * billed machines while unsettled usage is positive and at least the balance (available <= 0 by usage alone).
   */
  breakerCandidates(now: Date, defaultMaxBurnCentsPerHour: number | null): Promise<string[]>;
  /** Records that the providers still show these instances' machines (one statement for all). */
  markSeen(instanceIds: readonly string[], at: Date): Promise<void>;
  /**
   * Since when the oldest start that is due waits to be taken: the earliest starts_at of a scheduled reservation
   * due by `now`, the creation of a pending spot claim never tried yet, or when a machine to recover was found lost; null when none waits.
   */
  oldestDueStart(now: Date): Promise<Date | null>;
}

export interface AccountStore {
  /** The tenant's account, created on first use, locked until the transaction ends. null: no such tenant. */
  lock(tenantId: string, now: Date): Promise<Account | null>;
  /** The tenant's account without a lock; an account never used reads as empty and open. */
  get(tenantId: string): Promise<Account | null>;
  setPause(tenantId: string, pause: Pause | null): Promise<void>;
  /** The processor's customer and the card saved on it (null forgets the card). */
  setCard(tenantId: string, customerId: string | null, card: CardOnFile | null): Promise<void>;
  setAutoRecharge(tenantId: string, settings: AutoRecharge): Promise<void>;
  /** Every account, oldest tenant first. */
  list(): Promise<Account[]>;
  /**
   * Accounts that may have crossed the low-balance line (balance.low) either way: those marked low, and those with
   * machines billed now whose balance is under twice `hours` of their burn or their auto-recharge threshold, or
   * whose machines run past their paid time. The caller decides under the lock.
   */
  lowBalanceCandidates(now: Date, hours: number): Promise<string[]>;
  /** When the account was last told its balance is low; null: not low since. */
  balanceLowSince(tenantId: string): Promise<Date | null>;
  markBalanceLow(tenantId: string, at: Date | null): Promise<void>;
}

export interface LedgerStore {
  /**
   * Posts an entry and moves the balance with it. The caller holds the account's lock. Returns null,
   * posting nothing, when an entry with the same unique key exists.
   */
  post(posting: LedgerPosting, id: string): Promise<LedgerEntry | null>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<LedgerEntry[]>;
  /** Every entry of the tenant, oldest first (summaries). */
  all(tenantId: string): Promise<LedgerEntry[]>;
}

export interface DepositStore {
  add(deposit: Deposit): Promise<void>;
  /** Locked until the transaction ends, so one decision wins. */
  lock(depositId: string): Promise<Deposit | null>;
  get(depositId: string): Promise<Deposit | null>;
  decide(depositId: string, status: DepositStatus, at: Date): Promise<void>;
  attachSession(depositId: string, sessionId: string): Promise<void>;
  /** The checkout deposit of a processor session, locked until the transaction ends. */
  lockBySession(sessionId: string): Promise<Deposit | null>;
  /** The tenant's, newest first. */
  listForTenant(tenantId: string): Promise<Deposit[]>;
  /** Every tenant's with this status (and kind, when given), oldest first. */
  listByStatus(status: DepositStatus, kind?: DepositKind): Promise<Deposit[]>;
  /**
   * What waits for an operator, oldest first: bank transfers with this status, and (for `pending`)
   * card checkouts whose paid amount conflicts with the deposit.
   */
  fundRequests(status: DepositStatus): Promise<Deposit[]>;
  /** Pending checkouts the sweep should ask the processor about: those without a recorded conflict. */
  pendingCheckouts(): Promise<Deposit[]>;
  /** Records why a deposit needs an operator; it stays pending. */
  recordConflict(depositId: string, conflict: string): Promise<void>;
  /** Pending fund requests (as `fundRequests('pending')` lists them) per tenant. */
  pendingCounts(tenantId?: string): Promise<Map<string, number>>;
}

export interface InstanceStore {
  add(instance: Instance): Promise<void>;
  get(tenantId: string, instanceId: string): Promise<Instance | null>;
  /** Locked until the transaction ends. */
  lock(tenantId: string, instanceId: string): Promise<Instance | null>;
  byIdempotencyKey(tenantId: string, key: string): Promise<Instance | null>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<Instance[]>;
  /** Instances that may exist upstream (provisioning, running, rebooting, terminating) of one tenant. */
  live(tenantId: string): Promise<Instance[]>;
  /** The tenant's billed instances running past their paid time (the only ones that owe anything). */
  overdue(tenantId: string, now: Date): Promise<Instance[]>;
  /** Live instances of every tenant. */
  allLive(): Promise<Instance[]>;
  /** Live instances of every tenant at one provider. */
  liveAt(provider: string): Promise<Instance[]>;
  /** Any tenant's instance by id, locked until the transaction ends (the reconciler's check of a label). */
  lockById(instanceId: string): Promise<Instance | null>;
  /** Billed instances whose scheduled removal or window end is at or before `now`. */
  dueForRemoval(now: Date): Promise<Instance[]>;
  update(instance: Instance): Promise<void>;
}

export interface TenantStore {
  add(tenant: Tenant, bootstrap: BootstrapSecret): Promise<void>;
  get(tenantId: string): Promise<Tenant | null>;
  /** The tenant's bootstrap secret, locked until the transaction ends so only one caller can use it. */
  lockBootstrap(tenantId: string): Promise<BootstrapSecret | null>;
  markBootstrapUsed(tenantId: string, at: Date): Promise<void>;
}

export interface TokenStore {
  add(token: Token): Promise<void>;
  /** Any tenant's token by id: authentication looks a token up before it knows the tenant. */
  findById(tokenId: string): Promise<Token | null>;
  /**
   * The token followed by its ancestors, nearest first; empty when the token is not the tenant's.
   * With `lock`, the rows stay locked (in a fixed order) until the transaction ends.
   */
  chain(tenantId: string, tokenId: string, options?: { lock?: boolean }): Promise<Token[]>;
  /** The tenant's tokens, oldest first; with `under`, only that token and its descendants. */
  list(tenantId: string, options?: { under?: string }): Promise<Token[]>;
  /** Adds (or, negative, releases) a commitment on the token and every ancestor that issued it. */
  addCommitment(tokenId: string, cents: number): Promise<void>;
  /**
   * What burns under each of these tokens (itself and every descendant), in cents an hour: the rates of the
   * machines whose billing has not ended plus the storage rates of the volumes not deleted or failed.
   */
  burnCentsPerHour(tenantId: string, tokenIds: readonly string[]): Promise<Map<string, Cents>>;
  /** Revokes the token and every descendant not yet revoked; returns the ids it revoked. */
  revokeSubtree(tenantId: string, tokenId: string, at: Date): Promise<string[]>;
  /**
   * Activity at `now` of these tokens (one and its ancestors): each live one with an idle timeout whose deadline
   * would move by `coalesceMs` or more gets `now` plus its timeout; one past its deadline is left there. Answers
   * the first token's deadline after it.
   */
  recordActivity(tokenIds: readonly string[], now: Date, coalesceMs: number): Promise<Date | null>;
  /** Tokens of any tenant past their idle deadline at `now`, not revoked nor ended yet, earliest deadline first. */
  idleCandidates(now: Date, limit: number): Promise<Token[]>;
  /** The token and every descendant (revoked ones too), locked in id order until the transaction ends. */
  lockSubtree(tenantId: string, tokenId: string): Promise<Token[]>;
  /**
   * Moves a node with its subtree to hang from the tenant itself (an owner's link: narrow-subtree.ts); the ancestors it
   * leaves keep the commitments it made under them.
   */
  moveToTop(tenantId: string, nodeId: string): Promise<void>;
  /** Gives a node of the tree of authority new terms (a person's role changed: narrow-subtree.ts). */
  reshape(tokenId: string, terms: { scopes: Scope[]; role: Role | null; spendLimitCents: Cents | null; maxRentalHours: number | null }): Promise<void>;
  /** Ends these tokens for idleness at `at` (revoked then, idled_at set), those not revoked yet; returns their ids. */
  markIdle(tenantId: string, tokenIds: readonly string[], at: Date): Promise<string[]>;
}

export interface StoredMarketSummary {
  summary: MarketSummary;
  builtAt: Date;
}

/** The one market summary every replica serves, and the lease that lets one replica at a time rebuild it. */
export interface MarketSummaryStore {
  /** The last summary built from a refresh in which some market answered; null before the first. */
  latest(): Promise<StoredMarketSummary | null>;
  /**
   * Claims the next refresh: succeeds only when no refresh started after `lastStartedBefore` and no
   * claimed refresh is still running (its lease ends after `now`). The claim lasts until `leaseUntil`.
   */
  claimRefresh(now: Date, lastStartedBefore: Date, leaseUntil: Date): Promise<boolean>;
  /** Stores a new summary and ends the lease. */
  completeRefresh(summary: MarketSummary, builtAt: Date): Promise<void>;
  /** Ends the lease of a refresh in which no market answered; the last good summary stays. */
  failRefresh(error: string): Promise<void>;
  /** Whether another refresh holds the lease at `now`. */
  refreshRunning(now: Date): Promise<boolean>;
}

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

/** A tenant's volumes. */
export interface VolumeStore {
  add(volume: Volume): Promise<void>;
  get(tenantId: string, volumeId: string): Promise<Volume | null>;
  /** The tenant's volumes among `volumeIds`, locked (in id order) until the transaction ends. */
  lockMany(tenantId: string, volumeIds: readonly string[]): Promise<Volume[]>;
  /** The tenant's volumes that are not deleted, newest first. */
  list(tenantId: string): Promise<Volume[]>;
  update(volume: Volume): Promise<void>;
  attach(volumeIds: readonly string[], instanceId: string): Promise<void>;
  /** The instance ended: its volumes are available again. */
  detachFrom(instanceId: string): Promise<void>;
  /** Volumes of every tenant still `creating` at `provider` (their create had no answer), oldest first. */
  creatingAt(provider: string): Promise<Volume[]>;
  /** Volumes of any tenant among `volumeIds` (the labels a provider listed), unlocked. */
  byIds(volumeIds: readonly string[]): Promise<Volume[]>;
  /** One volume of any tenant, locked until the transaction ends; null when there is none. */
  lockById(volumeId: string): Promise<Volume | null>;
  /**
   * Volumes with started hours of storage not yet recorded at `now` (deleted ones up to their deletion, those with
   * a window up to its end).
   */
  withHoursToRecord(now: Date): Promise<Volume[]>;
  /** What the tenant's volumes that exist or may exist upstream (creating, available, attached) hold, in GB. */
  heldGb(tenantId: string): Promise<number>;
  /** Volumes of every tenant whose window ended at or before `now` and that are not deleted yet, oldest end first. */
  expired(now: Date, limit: number): Promise<Volume[]>;
}

/** Metered usage: records, their running totals per (tenant, kind), and their settlement. */
export interface UsageStore {
  /**
   * Appends a record under its (tenant, kind) running total's row lock (the total opens at zero on first
   * use), so records of one kind are metered one at a time: its amount is what it adds to ceil(exact total)
   * in cents (core/metering/rounding.ts). One atomic call. null: the tenant used the unique key before
   * (nothing changed), or there is no such tenant.
   */
  add(usage: NewUsage): Promise<UsageRecord | null>;
  /**
   * Several records in one atomic call, each as `add` would meter it (answers in the order given); they are
   * metered in (tenant, kind) order, so calls made at once lock running totals in one order.
   */
  addMany(usages: readonly NewUsage[]): Promise<(UsageRecord | null)[]>;
  byUniqueKey(tenantId: string, uniqueKey: string): Promise<StoredUsage | null>;
  /** Newest first (started_at). */
  list(tenantId: string, filter: UsageFilter): Promise<UsageRecord[]>;
  /** Sums per period (UTC month or ISO week of started_at) and kind, newest period first. */
  periods(tenantId: string, granularity: Granularity, year?: number): Promise<UsagePeriodRow[]>;
  /** What the tenant's records of one kind referencing `reference`, started at or after `since`, were charged in all. */
  chargedFor(tenantId: string, kind: string, reference: string, since: Date): Promise<Cents>;
  /** What the tenant's unsettled records add up to: part of owed_cents. */
  unsettledCents(tenantId: string): Promise<Cents>;
  /** The same for every tenant that has any. */
  unsettledByTenant(): Promise<Map<string, Cents>>;
  /**
   * Posts unsettled records to the ledger (kind usage, key usage:<record id>), oldest first per tenant, while
   * the balance covers each; of one tenant, or of every tenant. Locks the accounts it settles.
   */
  settle(at: Date, tenantId?: string): Promise<Settlement>;
}
