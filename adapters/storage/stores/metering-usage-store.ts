import type { EntityManager } from '@mikro-orm/sql';
import type { Granularity } from '../../../core/billing/periods.ts';
import type { Cents } from '../../../core/money.ts';
import { formatMicros, microsOf } from '../../../core/metering/decimal.ts';
import type { NewUsage, Settlement, StoredUsage, UsageFilter, UsagePeriodRow, UsageRecord } from '../../../core/metering/usage.ts';
import type { UsageStore } from '../../../core/ports/storage.ts';
import { date, dateOrNull, num, textOrNull, type Row } from './sql-rows.ts';

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

/**
 * One statement appends a record under its (tenant, kind) running total's row lock. The lock is taken
 * first (FOR UPDATE answers the latest committed total, even after waiting), so records of one kind are
 * metered one after another; the record's amount is ceil(total after x 100) - charged so far, the one
 * rounding of core/metering/rounding.ts in NUMERIC. A unique key used before inserts nothing, and then
 * the total does not move either (it only adds what was inserted).
 */
const ADD = `
with cur as (
  select total_usd, charged_cents from usage_totals where tenant_id = ? and resource_kind = ? for update
),
ins as (
  insert into usage_records (id, tenant_id, resource_kind, quantity, unit, unit_price_usd, amount_cents, started_at, ended_at, reference, unique_key, request, created_at)
  select ?, ?, ?, ?::numeric, ?, ?::numeric, ceil((cur.total_usd + ?::numeric * ?::numeric) * 100)::bigint - cur.charged_cents, ?, ?, ?, ?, ?, ?
    from cur
  on conflict (tenant_id, unique_key) do nothing
  returning ${COLUMNS}
),
added as (
  -- from the locked values, not t's: the row seen by this statement's snapshot may be an older version, and
  -- PostgreSQL checks the row's constraint on the values made from it before it moves to the latest one
  update usage_totals t set total_usd = cur.total_usd + ins.quantity * ins.unit_price_usd, charged_cents = cur.charged_cents + ins.amount_cents
    from ins, cur
   where t.tenant_id = ins.tenant_id and t.resource_kind = ins.resource_kind
  returning t.tenant_id
)
select (select count(*) from cur) as locked, ins.* from (select 1) as one left join ins on true`;

/**
 * Settlement, set-based: the accounts are locked first (in tenant order); then one statement posts every
 * unsettled record, oldest first per tenant, while the running sum of their amounts fits in the balance
 * (the first that does not fit and every later one wait), marks them settled and debits the accounts. The
 * ledger key `usage:<record id>` makes a second posting of a record impossible, whoever settles.
 */
const settleSql = (oneTenant: boolean) => `
with unsettled as (
  select r.id, r.tenant_id, r.resource_kind, r.amount_cents, r.seq,
         sum(r.amount_cents) over (partition by r.tenant_id order by r.seq rows unbounded preceding) as running
    from usage_records r
   where r.settled_at is null${oneTenant ? ' and r.tenant_id = ?' : ''}
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

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(usage: NewUsage): Promise<UsageRecord | 'exists' | 'no-total'> {
    const [row] = await this.em.execute<Row[]>(ADD, [
      usage.tenantId,
      usage.resourceKind,
      usage.id,
      usage.tenantId,
      usage.resourceKind,
      usage.quantity,
      usage.unit,
      usage.unitPriceUsd,
      usage.quantity,
      usage.unitPriceUsd,
      usage.startedAt,
      usage.endedAt,
      usage.reference,
      usage.uniqueKey,
      usage.request,
      usage.createdAt,
    ]);
    if (!row || num(row.locked) === 0) return 'no-total';
    return row.id === null || row.id === undefined ? 'exists' : toRecord(row);
  }

  async openTotal(tenantId: string, resourceKind: string, at: Date): Promise<boolean> {
    await this.em.execute(`insert into accounts (tenant_id, created_at) select id, ? from tenants where id = ? on conflict (tenant_id) do nothing`, [at, tenantId]);
    const rows = await this.em.execute<Row[]>(
      `insert into usage_totals (tenant_id, resource_kind, total_usd, charged_cents, created_at)
       select tenant_id, ?, 0, 0, ? from accounts where tenant_id = ?
       on conflict (tenant_id, resource_kind) do nothing
       returning tenant_id`,
      [resourceKind, at, tenantId],
    );
    if (rows.length > 0) return true;
    const [exists] = await this.em.execute<Row[]>(`select 1 from accounts where tenant_id = ?`, [tenantId]);
    return exists !== undefined;
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
    // the accounts first, in a fixed order, so a rental, a block payment or another settlement waits
    await this.em.execute(
      `select tenant_id from accounts where tenant_id in (select tenant_id from usage_records where settled_at is null${one ? ' and tenant_id = ?' : ''}) order by tenant_id for update`,
      one ? [tenantId] : [],
    );
    const [row] = await this.em.execute<Row[]>(settleSql(one), one ? [tenantId, at, at] : [at, at]);
    if (!row || num(row.marked) !== num(row.settled)) throw new Error(`settlement posted ${row?.settled} entries but marked ${row?.marked} records`);
    return { settled: num(row.settled), amountCents: num(row.amount) };
  }
}
