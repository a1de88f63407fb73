import type { Offer } from '../../../core/market/offer.ts';
import type { MarketSnapshotStore, SnapshotHead, StoredSnapshot } from '../../../core/ports/market-snapshots.ts';

type Execute = <T>(sql: string, params?: unknown[]) => Promise<T>;

const asDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

/**
 * The market_snapshots rows, each statement atomic on its own (no transaction needed): a claim is one
 * upsert whose WHERE lets one replica through; storing ends the lease in the same statement.
 */
export class MikroMarketSnapshotStore implements MarketSnapshotStore {
  private readonly execute: Execute;

  constructor(execute: Execute) {
    this.execute = execute;
  }

  async claim(provider: string, now: Date, lastStartedBefore: Date, leaseUntil: Date): Promise<boolean> {
    const rows = await this.execute<{ provider: string }[]>(
      `insert into market_snapshots (provider, refresh_started_at, lease_until) values (?, ?, ?)
       on conflict (provider) do update set refresh_started_at = excluded.refresh_started_at, lease_until = excluded.lease_until
        where (market_snapshots.refresh_started_at is null or market_snapshots.refresh_started_at <= ?)
          and (market_snapshots.lease_until is null or market_snapshots.lease_until <= ?)
       returning provider`,
      [provider, now, leaseUntil, lastStartedBefore, now],
    );
    return rows.length === 1;
  }

  async store(provider: string, offers: readonly Offer[], fetchedAt: Date): Promise<number> {
    const [row] = await this.execute<{ generation: string | number }[]>(
      `update market_snapshots set offers = ?::jsonb, fetched_at = ?, generation = generation + 1, lease_until = null, last_error = null
        where provider = ? returning generation`,
      [JSON.stringify(offers), fetchedAt, provider],
    );
    if (!row) throw new Error(`no market snapshot row for ${provider}: store() without claim()`);
    return Number(row.generation);
  }

  async fail(provider: string, error: string): Promise<void> {
    await this.execute(`update market_snapshots set lease_until = null, last_error = ? where provider = ?`, [error.slice(0, 2000), provider]);
  }

  async head(provider: string, now: Date): Promise<SnapshotHead> {
    const [row] = await this.execute<{ generation: string | number; fetched_at: Date | string | null; last_error: string | null; refreshing: boolean; stored: boolean }[]>(
      `select generation, fetched_at, last_error, coalesce(lease_until > ?, false) as refreshing, offers is not null as stored
         from market_snapshots where provider = ?`,
      [now, provider],
    );
    if (!row) return { generation: null, fetchedAt: null, error: null, refreshing: false };
    return {
      generation: row.stored ? Number(row.generation) : null,
      fetchedAt: row.stored && row.fetched_at ? asDate(row.fetched_at) : null,
      error: row.last_error,
      refreshing: row.refreshing,
    };
  }

  async load(provider: string): Promise<StoredSnapshot | null> {
    const [row] = await this.execute<{ generation: string | number; fetched_at: Date | string; offers: Offer[] | string }[]>(
      `select generation, fetched_at, offers from market_snapshots where provider = ? and offers is not null`,
      [provider],
    );
    if (!row) return null;
    const offers = typeof row.offers === 'string' ? (JSON.parse(row.offers) as Offer[]) : row.offers;
    return { generation: Number(row.generation), fetchedAt: asDate(row.fetched_at), offers };
  }
}
