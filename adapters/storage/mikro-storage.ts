import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import type { EntityManager, MikroORM, Options } from '@mikro-orm/sql';
import type { ChargeWatcher, Lease, Storage, UnitOfWork } from '../../core/ports/storage.ts';
import { NO_METRICS, type Metrics } from '../../core/ports/metrics.ts';
import { DEFAULT_DATABASE_TIMEOUT_MS, deadlineClient, deadlineOptions, mapOutage, type StatementDeadline } from './database-deadline.ts';
import { immediateTally, PendingLedgerTally, type LedgerTally } from './ledger-tally.ts';
import { TenantEntity } from './entities/tenant.entity.ts';
import { TokenEntity } from './entities/token.entity.ts';
import { migrations } from './migrations/index.ts';
import { initPgliteDirectory, pgliteStartParams } from './pglite.ts';
import { refuseNewerSchema, underAdvisoryLock } from './migration-lock.ts';
import { ProcessLife } from './process-life.ts';
import { MikroAccountStore } from './stores/account-store.ts';
import { MikroAutoRechargeStore } from './stores/auto-recharge-store.ts';
import { MikroDepositStore } from './stores/deposit-store.ts';
import { MikroAuthFailureStore, MikroDeviceFlowStore, MikroIdentityLinkStore, MikroMailSendStore } from './stores/identity-store.ts';
import { MikroLedgerStore } from './stores/ledger-store.ts';
import { MikroMarketSummaryStore } from './stores/market-summary-store.ts';
import { MikroUsageStore } from './stores/metering-usage-store.ts';
import { MikroSweepStore } from './stores/sweep-store.ts';
import { MikroTenantStore } from './stores/tenant-store.ts';
import { MikroTokenStore } from './stores/token-store.ts';
import { MikroImageStore } from './stores/image-store.ts';
import { MikroSshKeyStore } from './stores/ssh-key-store.ts';
import { MikroTemplateStore } from './stores/template-store.ts';
import { MikroVolumeStore } from './stores/volume-store.ts';
import { MikroReservationStore } from './stores/reservation-store.ts';
import { RandomIds } from '../crypto/node-secrets.ts';
import { MikroEventOutbox } from './stores/event-outbox.ts';
import { EventedInstanceStore } from './stores/evented-instance-store.ts';
import { MikroWebhookStore } from './stores/webhook-store.ts';
import { MikroSpotClaimStore } from './stores/spot-claim-store.ts';
import { MikroBudgetStore } from './stores/budget-store.ts';
import { MikroRecoveryStore } from './stores/recovery-store.ts';
import { MikroInvitationStore } from './stores/invitation-store.ts';
import { MikroQuoteStore } from './stores/quote-store.ts';
import { MikroLaunchLeaseStore } from './stores/launch-lease-store.ts';

export const entities = [TenantEntity, TokenEntity];

const EVENT_IDS = new RandomIds();

const ALWAYS_HELD: Lease = { held: async () => true };

/** Where the data lives: a PostgreSQL server, or an embedded PGlite database in a directory. */
export type StorageTarget =
  /** timeoutMs: DATABASE_TIMEOUT_MS, longest a connection, a free pooled one or a statement is waited for (default 5000). */
  | { kind: 'postgres'; url: string; poolSize?: number; timeoutMs?: number }
  | { kind: 'pglite'; dataDir: string };

export const describeTarget = (target: StorageTarget): string =>
  target.kind === 'postgres' ? `PostgreSQL at ${new URL(target.url).host}` : `embedded PGlite in ${target.dataDir}`;

const baseOptions = (): Partial<Options> => ({
  entities,
  extensions: [Migrator],
  migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
  debug: false,
  allowGlobalContext: false,
});

// each driver is loaded only when used: a PostgreSQL server never loads PGlite, and the other way round
async function openOrm(target: StorageTarget, statements: StatementDeadline): Promise<MikroORM> {
  if (target.kind === 'postgres') {
    const { MikroORM: PostgresMikroORM } = await import('@mikro-orm/postgresql');
    return (await PostgresMikroORM.init({
      ...baseOptions(),
      clientUrl: target.url,
      pool: { min: 0, max: target.poolSize ?? 10 },
      driverOptions: deadlineOptions(target.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS, statements),
    } as Options)) as unknown as MikroORM;
  }
  const { MikroORM: PgliteMikroORM } = await import('@mikro-orm/pglite');
  const inMemory = target.dataDir.startsWith('memory:');
  if (!inMemory) {
    mkdirSync(resolve(target.dataDir), { recursive: true });
    await initPgliteDirectory(resolve(target.dataDir));
  }
  return (await PgliteMikroORM.init({
    ...baseOptions(),
    dbName: inMemory ? target.dataDir : resolve(target.dataDir),
    driverOptions: { startParams: await pgliteStartParams() },
  } as Options)) as unknown as MikroORM;
}

const unitOfWork = (em: EntityManager, ledger: LedgerTally): UnitOfWork => ({
  volumes: new MikroVolumeStore(em),
  identities: new MikroIdentityLinkStore(em),
  deviceFlows: new MikroDeviceFlowStore(em),
  authFailures: new MikroAuthFailureStore(em),
  mailSends: new MikroMailSendStore(em),
  tenants: new MikroTenantStore(em),
  tokens: new MikroTokenStore(em),
  marketSummary: new MikroMarketSummaryStore(em),
  accounts: new MikroAccountStore(em),
  ledger: new MikroLedgerStore(em, ledger),
  deposits: new MikroDepositStore(em),
  instances: new EventedInstanceStore(em, new MikroEventOutbox(em, EVENT_IDS)),
  sweep: new MikroSweepStore(em, ledger),
  autoRecharges: new MikroAutoRechargeStore(em),
  sshKeys: new MikroSshKeyStore(em),
  images: new MikroImageStore(em),
  templates: new MikroTemplateStore(em),
  usage: new MikroUsageStore(em, ledger),
  reservations: new MikroReservationStore(em),
  events: new MikroEventOutbox(em, EVENT_IDS),
  webhooks: new MikroWebhookStore(em),
  spotClaims: new MikroSpotClaimStore(em),
  budgets: new MikroBudgetStore(em),
  recoveries: new MikroRecoveryStore(em),
  quotes: new MikroQuoteStore(em),
  launchLeases: new MikroLaunchLeaseStore(em),
  invitations: new MikroInvitationStore(em),
});

/** A stable 63-bit advisory lock key for a name (FNV-1a), as PostgreSQL's bigint. */
export function lockKey(name: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(`gpu-control-plane:${name}`)) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0x7fffffffffffffffn;
  return hash.toString();
}

export class MikroStorage implements Storage {
  readonly orm: MikroORM;
  readonly target: StorageTarget;
  private readonly running = new Set<string>();
  private metrics: Metrics = NO_METRICS;
  private readonly immediate = immediateTally(() => this.metrics);
  private watcher: ChargeWatcher | null = null;
  /** This opening of the database, as the holder of the leases of its process's creates. */
  readonly holder = new RandomIds().newId('proc');
  private life: ProcessLife | null = null;

  private constructor(orm: MikroORM, target: StorageTarget) {
    this.orm = orm;
    this.target = target;
  }

  /** Opens the database and brings its schema up to the latest migration. */
  static async open(target: StorageTarget): Promise<MikroStorage> {
    // no statement deadline while migrating: a migration may rightly take minutes (an index on a large table)
    const statements: StatementDeadline = { ms: 0 };
    const orm = await openOrm(target, statements);
    const migrate = async () => {
      await refuseNewerSchema(orm);
      await orm.migrator.up();
    };
    try {
      // a PGlite directory belongs to one process; PostgreSQL may have several replicas starting at once
      await (target.kind === 'postgres' ? underAdvisoryLock(target.url, lockKey('migrations'), migrate) : migrate());
    } catch (error) {
      await orm.close(true);
      throw error;
    }
    statements.ms = target.kind === 'postgres' ? (target.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS) : 0;
    const storage = new MikroStorage(orm, target);
    try {
      if (target.kind === 'postgres') storage.life = await ProcessLife.hold(target.url, lockKey(`holder:${storage.holder}`), target.timeoutMs);
    } catch (error) {
      await orm.close(true);
      throw error;
    }
    return storage;
  }

  /**
   * Whether the process that holds `holder` lives. A PGlite directory belongs to this one process, so any other
   * holder is a process that was here before and is gone; on PostgreSQL, its session's lock tells (process-life.ts).
   */
  async holderAlive(holder: string): Promise<boolean> {
    if (holder === this.holder) return true;
    if (this.target.kind === 'pglite') return false;
    const key = lockKey(`holder:${holder}`);
    const [row] = await this.execute<{ alive: boolean }[]>('select case when pg_try_advisory_lock(?) then not pg_advisory_unlock(?) else true end as alive', [key, key]);
    return row?.alive === true;
  }

  exclusive<T>(name: string, work: (lease: Lease) => Promise<T>): Promise<{ ran: true; result: T } | { ran: false }> {
    return mapOutage(() => this.exclusiveRun(name, work));
  }

  private async exclusiveRun<T>(name: string, work: (lease: Lease) => Promise<T>): Promise<{ ran: true; result: T } | { ran: false }> {
    if (this.target.kind === 'pglite') {
      // a PGlite database belongs to this one process: a flag in memory is the lock
      if (this.running.has(name)) return { ran: false };
      this.running.add(name);
      try {
        return { ran: true, result: await work(ALWAYS_HELD) };
      } finally {
        this.running.delete(name);
      }
    }
    // a session-level advisory lock needs one connection held for the whole run, outside the pool
    const timeoutMs = this.target.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    const Client = deadlineClient({ ms: timeoutMs });
    const client = new Client({ connectionString: this.target.url, keepAlive: true, connectionTimeoutMillis: timeoutMs, application_name: `gpu-control-plane ${name}` });
    let lost: unknown = null;
    // without a listener a dropped connection would crash the process; with it, the run learns it lost the lock
    client.on('error', (error) => (lost ??= error));
    await client.connect();
    try {
      const key = lockKey(name);
      const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [key]);
      if (!rows[0]?.locked) return { ran: false };
      const lease: Lease = {
        held: async () => {
          if (lost) return false;
          try {
            await client.query('select 1');
          } catch (error) {
            lost ??= error;
          }
          return !lost;
        },
      };
      try {
        return { ran: true, result: await work(lease) };
      } finally {
        if (!lost) await client.query('select pg_advisory_unlock($1)', [key]).catch(() => undefined);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Ledger entries are told to `metrics` once committed (ledger_amount_cents_total). */
  observe(metrics: Metrics): void {
    this.metrics = metrics;
  }

  /**
   * `watcher` is told, before each transaction that posted a charge commits, in that transaction (monthly budgets:
   * docs/decisions.md, "Monthly budgets"); so every path that charges is watched without its caller knowing.
   */
  watchCharges(watcher: ChargeWatcher): void {
    this.watcher = watcher;
  }

  transaction<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return mapOutage(() => this.transactionRun(work));
  }

  private async transactionRun<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    const ledger = new PendingLedgerTally();
    let afterCommit: (() => void) | null = null;
    const result = await this.orm.em.fork().transactional(async (em) => {
      const uow = unitOfWork(em, ledger);
      const answer = await work(uow);
      if (this.watcher && ledger.charged()) afterCommit = await this.watcher.charged(uow);
      return answer;
    });
    ledger.committed(this.metrics);
    (afterCommit as (() => void) | null)?.();
    return result;
  }

  read<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return mapOutage(() => work(unitOfWork(this.orm.em.fork(), this.immediate)));
  }

  autocommit<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return mapOutage(() => work(unitOfWork(this.orm.em.fork(), this.immediate)));
  }

  /** Raw SQL for operators' tools and tests; never used by the core. */
  execute<T = Record<string, unknown>[]>(sql: string, params: unknown[] = []): Promise<T> {
    return mapOutage(() => this.orm.em.fork().execute(sql, params) as Promise<T>);
  }

  async close(): Promise<void> {
    await this.life?.release();
    await this.orm.close(true);
  }
}
