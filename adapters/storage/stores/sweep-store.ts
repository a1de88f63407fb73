import type { EntityManager } from '@mikro-orm/sql';
import type { SweepStore } from '../../../core/ports/storage.ts';
import type { LedgerTally } from '../ledger-tally.ts';
import { num, textArray, type Row } from './sql-rows.ts';

/**
 * One statement pays one due block of every instance that can be paid. Charges follow the one cost
 * rule (core/billing/charges.ts): cost(t) = ceil(rate * max(minimum minutes, started minutes) / 60), and a block's
 * charge is cost(next boundary) - what the instance was charged so far, so the sum always equals cost.
 */
const PAY_DUE_BLOCKS = `
with due as (
  select i.id, i.tenant_id, i.rate_cents_per_hour as rate, i.created_at, i.paid_until, i.charged_cents, i.ledger_note, i.minimum_minutes,
         least(i.paid_until + interval '1 hour', coalesce(least(i.removal_scheduled_at, i.window_ends_at), 'infinity'::timestamptz)) as next_until
    from instances i
   where i.status in ('provisioning', 'running', 'rebooting')
     and i.paid_until <= ?
     and i.paid_until < coalesce(least(i.removal_scheduled_at, i.window_ends_at), 'infinity'::timestamptz)
),
priced as (
  select d.*,
         (d.rate * greatest(d.minimum_minutes, ceil(extract(epoch from (d.next_until - d.created_at)) / 60)::bigint) + 59) / 60 - d.charged_cents as charge
    from due d
),
ordered as (
  select p.*, sum(p.charge) over (partition by p.tenant_id order by p.paid_until, p.id) as running_total
    from priced p
),
payable as (
  -- the block's key names its start in UTC, whatever the session's TimeZone
  select o.*, a.balance_cents - o.running_total as balance_after,
         'block:' || o.id || ':' || to_char(o.paid_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as block_key
    from ordered o join accounts a on a.tenant_id = o.tenant_id
   where o.running_total <= a.balance_cents
),
posted as (
  insert into ledger_entries (id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, unique_key, created_at)
  select 'led_' || substr(md5(p.block_key), 1, 20), p.tenant_id, 'rental_hour', -p.charge, p.balance_after,
         p.id, 'hour block' || coalesce(' (' || p.ledger_note || ')', ''), p.block_key, ?
    from payable p
  on conflict (unique_key) do nothing
  returning reference, tenant_id, amount_cents
),
advanced as (
  update instances i set paid_until = p.next_until, charged_cents = i.charged_cents + p.charge
    from payable p join posted on posted.reference = p.id
   where i.id = p.id
  returning i.id
),
debited as (
  update accounts a set balance_cents = a.balance_cents + s.total
    from (select tenant_id, sum(amount_cents) as total from posted group by tenant_id) s
   where a.tenant_id = s.tenant_id
  returning a.tenant_id
)
select (select count(*) from posted) as paid, (select coalesce(sum(amount_cents), 0) from posted) as amount,
       (select count(*) from advanced) as advanced, (select count(*) from debited) as accounts`;

export class MikroSweepStore implements SweepStore {
  private readonly em: EntityManager;
  private readonly tally: LedgerTally;

  constructor(em: EntityManager, tally: LedgerTally) {
    this.em = em;
    this.tally = tally;
  }

  async payDueBlocks(now: Date): Promise<number> {
    // lock the accounts first, in a fixed order, so a rental or termination cannot move a balance meanwhile
    await this.em.execute(
      `select tenant_id from accounts where tenant_id in (
         select tenant_id from instances where status in ('provisioning', 'running', 'rebooting') and paid_until <= ?
       ) order by tenant_id for update`,
      [now],
    );
    const [row] = await this.em.execute<Row[]>(PAY_DUE_BLOCKS, [now, now]);
    if (!row) return 0;
    this.tally.posted('rental_hour', num(row.amount), num(row.paid));
    return num(row.paid);
  }

  async breakerCandidates(now: Date, defaultMaxBurnCentsPerHour: number | null): Promise<string[]> {
    const rows = await this.em.execute<Row[]>(
      `select distinct tenant_id from instances
        where status in ('provisioning', 'running', 'rebooting') and paid_until < ?
       union
       select i.tenant_id from instances i join accounts a on a.tenant_id = i.tenant_id
        where i.status in ('provisioning', 'running', 'rebooting')
        group by i.tenant_id, a.max_burn_cents_per_hour
       having sum(i.rate_cents_per_hour) > coalesce(a.max_burn_cents_per_hour, ?::bigint, 9223372036854775807)
       union
       -- machines running while unsettled usage takes every cent of the balance (an overrun on top is caught above)
       select r.tenant_id from usage_records r join accounts a on a.tenant_id = r.tenant_id
        where r.settled_at is null
          and exists (select 1 from instances i where i.tenant_id = r.tenant_id and i.status in ('provisioning', 'running', 'rebooting'))
        group by r.tenant_id, a.balance_cents
       having sum(r.amount_cents) > 0 and sum(r.amount_cents) >= a.balance_cents`,
      [now, defaultMaxBurnCentsPerHour],
    );
    return rows.map((row) => String(row.tenant_id)).sort();
  }

  async markSeen(instanceIds: readonly string[], at: Date): Promise<void> {
    if (instanceIds.length === 0) return;
    await this.em.execute(`update instances set last_seen_at = ? where id = any(?::text[])`, [at, textArray(instanceIds)]);
  }

  async oldestDueStart(now: Date): Promise<Date | null> {
    const [row] = await this.em.execute<Row[]>(
      `select least(
         (select min(starts_at) from reservations where status = 'scheduled' and starts_at <= ?),
         (select min(created_at) from spot_claims
           where status = 'pending' and claimed_at is null and last_error is null and instance_id is null and machines = 0),
         (select min(due_at) from instance_recoveries where status = 'due')
       ) as oldest`,
      [now],
    );
    return row?.oldest ? new Date(row.oldest as string | Date) : null;
  }
}
