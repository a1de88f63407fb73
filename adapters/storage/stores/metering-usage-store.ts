import type { EntityManager } from '@mikro-orm/sql';
import type { Granularity } from '../../../core/billing/periods.ts';
import type { Cents } from '../../../core/money.ts';
import { formatMicros, microsOf } from '../../../core/metering/decimal.ts';
import type { NewUsage, Settlement, StoredUsage, UsageFilter, UsagePeriodRow, UsageRecord } from '../../../core/metering/usage.ts';
import type { UsageStore } from '../../../core/ports/storage.ts';
import type { LedgerTally } from '../ledger-tally.ts';
import { date, dateOrNull, num, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = 'id, tenant_id, resource_kind, quantity, unit, unit_price_usd, amount_cents, started_at, ended_at, reference, settled_at, created_at';

/** PostgreSQL answers numeric(…, 6) as "1.500000": back to the one canonical text. */
const decimalText = (value: unknown): string => formatMicros(microsOf(String(value)));

const toRecord = (row: Row): UsageRecord => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  resourceKind: String(row.resource_kind),
  quantity: decimalText(row.quantity),
  unit: String(row.unit),
  unitPriceUsd: decimalText(row.unit_price_usd),
  amountCents: num(row.amount_cents),
  startedAt: date(row.started_at),
  endedAt: dateOrNull(row.ended_at),
  reference: textOrNull(row.reference),
  settledAt: dateOrNull(row.settled_at),
  createdAt: date(row.created_at),
});

/** The record just inserted, from what was sent and the amount the database priced it at. */
const recordOf = ({ uniqueKey: _key, request: _request, ...usage }: NewUsage, amountCents: number): UsageRecord => ({ ...usage, amountCents, settledAt: null });

/**
 * Settlement, set-based: the accounts are locked first (in tenant order); then one statement posts every
 * unsettled record, oldest first per tenant, while the running sum of their amounts fits in the balance
 * (the first that does not fit and every later one wait), marks them settled and debits the accounts. The
 * ledger key `usage:<record id>` makes a second posting of a record impossible, whoever settles.
 */
const SETTLE_SQL = `
with unsettled as (
  select r.id, r.tenant_id, r.resource_kind, r.amount_cents, r.seq,
         sum(r.amount_cents) over (partition by r.tenant_id order by r.seq rows unbounded preceding) as running
    from usage_records r
   where r.settled_at is null and r.tenant_id = any(?::text[])
),
payable as (
  select u.*, a.balance_cents - u.running as balance_after
    from unsettled u join accounts a on a.tenant_id = u.tenant_id
   where u.running <= a.balance_cents
),
posted as (
  insert into ledger_entries (id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, unique_key, created_at)
  select 'led_' || substr(md5('usage:' || p.id), 1, 20), p.tenant_id, 'usage', -p.amount_cents, p.balance_after, p.id, p.resource_kind, 'usage:' || p.id, ?
    from payable p
   order by p.tenant_id, p.seq
  on conflict (unique_key) do nothing
  returning reference, tenant_id, amount_cents
),
marked as (
  update usage_records r set settled_at = ? from posted where r.id = posted.reference returning r.id
),
debited as (
  update accounts a set balance_cents = a.balance_cents + s.total
    from (select tenant_id, sum(amount_cents) as total from posted group by tenant_id) s
   where a.tenant_id = s.tenant_id
  returning a.tenant_id
)
select (select count(*) from posted) as settled, (select coalesce(-sum(amount_cents), 0) from posted) as amount,
       (select count(*) from marked) as marked, (select count(*) from debited) as debited`;

export class MikroUsageStore implements UsageStore {
  private readonly em: EntityManager;
  private readonly tally: LedgerTally;

  constructor(em: EntityManager, tally: LedgerTally) {
    this.em = em;
    this.tally = tally;
  }

  async add(usage: NewUsage): Promise<UsageRecord | null> {
    // meter_usage (migration 0012): the running total's row lock, the one rounding, the record, the total
    const [row] = await this.em.execute<Row[]>(`select meter_usage(?, ?, ?, ?::numeric, ?, ?::numeric, ?, ?, ?, ?, ?, ?) as amount_cents`, [
      usage.id,
      usage.tenantId,
      usage.resourceKind,
      usage.quantity,
      usage.unit,
      usage.unitPriceUsd,
      usage.startedAt,
      usage.endedAt,
      usage.reference,
      usage.uniqueKey,
      usage.request,
      usage.createdAt,
    ]);
    return row?.amount_cents === null || row?.amount_cents === undefined ? null : recordOf(usage, num(row.amount_cents));
  }

  async addMany(usages: readonly NewUsage[]): Promise<(UsageRecord | null)[]> {
    if (usages.length === 1) return [await this.add(usages[0]!)];
    // one JSON document: every value as text, numerics and times cast by the function (exact, no float)
    const records = usages.map((u, ord) => ({
      ord,
      id: u.id,
      tenant_id: u.tenantId,
      resource_kind: u.resourceKind,
      quantity: u.quantity,
      unit: u.unit,
      unit_price_usd: u.unitPriceUsd,
      started_at: u.startedAt.toISOString(),
      ended_at: u.endedAt?.toISOString() ?? null,
      reference: u.reference,
      unique_key: u.uniqueKey,
      request: u.request,
      created_at: u.createdAt.toISOString(),
    }));
    const rows = await this.em.execute<Row[]>(`select ord, amount_cents from meter_usage_many(?::jsonb)`, [JSON.stringify(records)]);
    const amounts = new Map(rows.map((row) => [num(row.ord), row.amount_cents]));
    return usages.map((usage, ord) => {
      const amount = amounts.get(ord);
      return amount === null || amount === undefined ? null : recordOf(usage, num(amount));
    });
  }

  async byUniqueKey(tenantId: string, uniqueKey: string): Promise<StoredUsage | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS}, unique_key, request from usage_records where tenant_id = ? and unique_key = ?`, [tenantId, uniqueKey]);
    return row ? { ...toRecord(row), uniqueKey: String(row.unique_key), request: textOrNull(row.request) } : null;
  }

  async list(tenantId: string, filter: UsageFilter): Promise<UsageRecord[]> {
    const where = ['tenant_id = ?'];
    const params: unknown[] = [tenantId];
    if (filter.resourceKind !== undefined) (where.push('resource_kind = ?'), params.push(filter.resourceKind));
    if (filter.since !== undefined) (where.push('started_at >= ?'), params.push(filter.since));
    if (filter.until !== undefined) (where.push('started_at < ?'), params.push(filter.until));
    params.push(filter.limit);
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from usage_records where ${where.join(' and ')} order by started_at desc, seq desc limit ?`, params);
    return rows.map(toRecord);
  }

  async periods(tenantId: string, granularity: Granularity, year?: number): Promise<UsagePeriodRow[]> {
    // UTC calendar months, or ISO weeks (date_trunc('week') starts on Monday; the week's year is its ISO year)
    const field = granularity === 'monthly' ? 'month' : 'week';
    const yearOf = granularity === 'monthly' ? 'year' : 'isoyear';
    const rows = await this.em.execute<Row[]>(
      `select date_trunc('${field}', started_at at time zone 'UTC') at time zone 'UTC' as period_start, resource_kind,
              sum(quantity) as quantity, sum(amount_cents) as amount_cents, count(*) as records
         from usage_records
        where tenant_id = ?${year === undefined ? '' : ` and extract(${yearOf} from started_at at time zone 'UTC') = ?`}
        group by 1, 2
        order by 1 desc, 2`,
      year === undefined ? [tenantId] : [tenantId, year],
    );
    return rows.map((row) => ({
      periodStart: date(row.period_start),
      resourceKind: String(row.resource_kind),
      quantity: decimalText(row.quantity),
      amountCents: num(row.amount_cents),
      records: num(row.records),
    }));
  }

  async chargedFor(tenantId: string, kind: string, reference: string, since: Date): Promise<Cents> {
    // on usage_records_tenant (tenant_id, started_at): the tenant's records since then, not all of them
    const [row] = await this.em.execute<Row[]>(
      `select coalesce(sum(amount_cents), 0) as charged from usage_records where tenant_id = ? and started_at >= ? and resource_kind = ? and reference = ?`,
      [tenantId, since, kind, reference],
    );
    return row ? num(row.charged) : 0;
  }

  async unsettledCents(tenantId: string): Promise<Cents> {
    const [row] = await this.em.execute<Row[]>(`select coalesce(sum(amount_cents), 0) as owed from usage_records where tenant_id = ? and settled_at is null`, [tenantId]);
    return row ? num(row.owed) : 0;
  }

  async unsettledByTenant(): Promise<Map<string, Cents>> {
    const rows = await this.em.execute<Row[]>(`select tenant_id, sum(amount_cents) as owed from usage_records where settled_at is null group by tenant_id`);
    return new Map(rows.map((row) => [String(row.tenant_id), num(row.owed)]));
  }

  async settle(at: Date, tenantId?: string): Promise<Settlement> {
    const one = tenantId !== undefined;
    // the accounts first, in a fixed order, so a rental, a block payment or another settlement waits; then
    // only those accounts' records: one whose first record arrived after the lock is not locked, and
    // settling it here would race a settlement that holds its lock (found by the metering model test)
    const locked = await this.em.execute<Row[]>(
      `select tenant_id from accounts where tenant_id in (select tenant_id from usage_records where settled_at is null${one ? ' and tenant_id = ?' : ''}) order by tenant_id for update`,
      one ? [tenantId] : [],
    );
    if (locked.length === 0) return { settled: 0, amountCents: 0 };
    const [row] = await this.em.execute<Row[]>(SETTLE_SQL, [textArray(locked.map((r) => String(r.tenant_id))), at, at]);
    if (!row || num(row.marked) !== num(row.settled)) throw new Error(`settlement posted ${row?.settled} entries but marked ${row?.marked} records`);
    // usage entries are debits: `amount` is what they took from the balances
    this.tally.posted('usage', -num(row.amount), num(row.settled));
    return { settled: num(row.settled), amountCents: num(row.amount) };
  }
}
