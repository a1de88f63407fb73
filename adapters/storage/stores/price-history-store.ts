import type { PricePoint } from '../../../core/market/price-history.ts';
import type { PriceHistoryStore } from '../../../core/ports/price-history.ts';
import { date, num, textArray, type Row } from './sql-rows.ts';

type Execute = <T>(sql: string, params?: unknown[]) => Promise<T>;

/** market_price_history: a row per (family, provider, hour), each statement atomic on its own. */
export class MikroPriceHistoryStore implements PriceHistoryStore {
  private readonly execute: Execute;

  constructor(execute: Execute) {
    this.execute = execute;
  }

  async record(points: readonly PricePoint[]): Promise<void> {
    if (points.length === 0) return;
    // one statement for a snapshot's families: a later snapshot of the same hour replaces the earlier one's row
    await this.execute(
      `insert into market_price_history (gpu_type, provider, hour, min_per_gpu_cents, median_per_gpu_cents, available_gpus)
       select * from unnest(?::text[], ?::text[], ?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[])
       on conflict (gpu_type, provider, hour) do update
         set min_per_gpu_cents = excluded.min_per_gpu_cents, median_per_gpu_cents = excluded.median_per_gpu_cents, available_gpus = excluded.available_gpus`,
      [
        textArray(points.map((p) => p.gpuType)),
        textArray(points.map((p) => p.provider)),
        textArray(points.map((p) => p.at.toISOString())),
        textArray(points.map((p) => String(p.minPerGpuCents))),
        textArray(points.map((p) => String(p.medianPerGpuCents))),
        textArray(points.map((p) => String(p.availableGpus))),
      ],
    );
  }

  async prune(before: Date): Promise<void> {
    await this.execute(`delete from market_price_history where hour < ?`, [before]);
  }

  async hours(gpuType: string, provider: string | null, since: Date, until: Date): Promise<PricePoint[]> {
    const rows = await this.execute<Row[]>(
      `select gpu_type, provider, hour, min_per_gpu_cents, median_per_gpu_cents, available_gpus from market_price_history
        where gpu_type = ? and (?::text is null or provider = ?) and hour >= ? and hour < ?
        order by hour, provider`,
      [gpuType, provider, provider, since, until],
    );
    return rows.map((row) => ({
      gpuType: String(row.gpu_type),
      provider: String(row.provider),
      at: date(row.hour),
      minPerGpuCents: num(row.min_per_gpu_cents),
      medianPerGpuCents: num(row.median_per_gpu_cents),
      availableGpus: num(row.available_gpus),
    }));
  }
}
