import type { EntityManager } from '@mikro-orm/sql';
import type { MarketSummary } from '../../../core/market/summary.ts';
import type { MarketSummaryStore, StoredMarketSummary } from '../../../core/ports/storage.ts';

interface SummaryRow {
  summary: MarketSummary | string | null;
  built_at: Date | string | null;
}

const asDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

/** The single market_summary row, read and claimed with plain SQL: each claim is one atomic update. */
export class MikroMarketSummaryStore implements MarketSummaryStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async latest(): Promise<StoredMarketSummary | null> {
    const [row] = await this.em.execute<SummaryRow[]>(`select summary, built_at from market_summary where id = 'market'`);
    if (!row?.summary || !row.built_at) return null;
    const summary = typeof row.summary === 'string' ? (JSON.parse(row.summary) as MarketSummary) : row.summary;
    return { summary, builtAt: asDate(row.built_at) };
  }

  async claimRefresh(now: Date, lastStartedBefore: Date, leaseUntil: Date): Promise<boolean> {
    const rows = await this.em.execute<{ id: string }[]>(
      `update market_summary set refresh_started_at = ?, lease_until = ?
        where id = 'market'
          and (refresh_started_at is null or refresh_started_at <= ?)
          and (lease_until is null or lease_until <= ?)
        returning id`,
      [now, leaseUntil, lastStartedBefore, now],
    );
    return rows.length === 1;
  }

  async completeRefresh(summary: MarketSummary, builtAt: Date): Promise<void> {
    await this.em.execute(
      `update market_summary set summary = ?::jsonb, built_at = ?, lease_until = null, last_error = null where id = 'market'`,
      [JSON.stringify(summary), builtAt],
    );
  }

  async failRefresh(error: string): Promise<void> {
    await this.em.execute(`update market_summary set lease_until = null, last_error = ? where id = 'market'`, [error.slice(0, 2000)]);
  }

  async refreshRunning(now: Date): Promise<boolean> {
    const [row] = await this.em.execute<{ running: boolean }[]>(
      `select lease_until is not null and lease_until > ? as running from market_summary where id = 'market'`,
      [now],
    );
    return row?.running === true;
  }
}
