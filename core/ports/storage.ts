import type { ImageStore, SshKeyStore, TemplateStore } from './catalog-storage.ts';
import type { ReservationStore } from './reservation-storage.ts';
import type { EventOutbox } from './event-outbox.ts';
import type { WebhookStore } from './webhook-storage.ts';
import type { SpotClaimStore } from './spot-claim-storage.ts';
import type { BudgetStore } from './budget-storage.ts';
import type { RecoveryStore } from './recovery-storage.ts';
import type { QuoteStore } from './quote-storage.ts';
import type { LaunchLeaseStore } from './launch-lease-storage.ts';
import type { InvitationStore } from './invitation-storage.ts';
import type { AutoRechargeStore, AccountStore, LedgerStore, DepositStore } from './account-storage.ts';
import type { SweepStore } from './sweep-storage.ts';
import type { InstanceStore } from './instance-storage.ts';
import type { TenantStore, TokenStore } from './tenancy-storage.ts';
import type { MarketSummaryStore } from './market-summary-storage.ts';
import type { IdentityLinkStore, DeviceFlowStore, AuthFailureStore, MailSendStore } from './identity-storage.ts';
import type { VolumeStore } from './volume-storage.ts';
import type { UsageStore } from './usage-storage.ts';

// each store has a file of its own; imported from here as before
export type { AutoRechargeStore, AccountStore, LedgerStore, DepositStore } from './account-storage.ts';
export type { SweepStore } from './sweep-storage.ts';
export type { InstanceStore } from './instance-storage.ts';
export type { TenantStore, TokenStore } from './tenancy-storage.ts';
export type { StoredMarketSummary, MarketSummaryStore } from './market-summary-storage.ts';
export type { IdentityLinkStore, DeviceFlowStore, FailureCount, AuthFailureStore, MailSendStore } from './identity-storage.ts';
export type { VolumeStore } from './volume-storage.ts';
export type { UsageStore } from './usage-storage.ts';

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
  /** This process, as the holder of its creates' leases (docs/decisions.md, "Crash anywhere, lose nothing"): new at every start. */
  readonly holder: string;
  /** Whether the process that holds `holder` still lives; a process killed is known dead at once. */
  holderAlive(holder: string): Promise<boolean>;
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
  launchLeases: LaunchLeaseStore;
  invitations: InvitationStore;
}

/**
 * Told before a transaction that charged some account commits (docs/decisions.md, "Monthly budgets"), in that
 * transaction: what it records commits or rolls back with the charges. What it answers runs after the commit.
 */
export interface ChargeWatcher {
  charged(uow: UnitOfWork): Promise<(() => void) | null>;
}

