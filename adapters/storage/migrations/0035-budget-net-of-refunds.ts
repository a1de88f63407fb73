import { Migration } from '@mikro-orm/migrations';

/**
 * The budget counts what sticks (docs/decisions.md, "Monthly budgets"): a refund takes back from its month's spend
 * what was charged for the same thing (its reference, an instance) in that month, so a rental refused or refunded in
 * full counts 0. Each ledger entry remembers the transaction that posted it (`xact`, rows from before stay null), so
 * the budget watch can leave out the first hours of other rentals still in flight when it decides a stop.
 */
export class Migration0035BudgetNetOfRefunds extends Migration {
  override name = '0035-budget-net-of-refunds';

  override up(): void {
    this.addSql(`alter table ledger_entries add column xact bigint null`);
    this.addSql(`alter table ledger_entries alter column xact set default txid_current()`);
    this.addSql(`create index ledger_entries_reference on ledger_entries (tenant_id, reference) where reference is not null`);
    this.addSql(`
      create or replace function budget_spend_from_ledger() returns trigger language plpgsql as $$
      begin
        insert into budget_spend (tenant_id, month, spent_cents, xact)
        select tenant_id, date_trunc('month', created_at at time zone 'UTC')::date, sum(-amount_cents), txid_current()
          from posted
         where kind in ('rental_hour', 'usage') and amount_cents < 0
         group by 1, 2
        on conflict (tenant_id, month) do update
           set spent_cents = budget_spend.spent_cents + excluded.spent_cents, xact = excluded.xact;
        -- a refund gives back, from its own month, at most what that month charged for the same reference
        update budget_spend b
           set spent_cents = greatest(0, b.spent_cents - n.cents), xact = txid_current()
          from (
            select r.tenant_id, r.month, sum(least(r.refunded, coalesce((
                     select sum(-l.amount_cents) from ledger_entries l
                      where l.tenant_id = r.tenant_id and l.reference = r.reference and l.kind in ('rental_hour', 'usage')
                        and l.amount_cents < 0 and date_trunc('month', l.created_at at time zone 'UTC')::date = r.month), 0))) as cents
              from (select tenant_id, date_trunc('month', created_at at time zone 'UTC')::date as month, reference, sum(amount_cents) as refunded
                      from posted where kind = 'refund' and amount_cents > 0 and reference is not null group by 1, 2, 3) r
             group by 1, 2
          ) n
         where b.tenant_id = n.tenant_id and b.month = n.month and n.cents > 0;
        return null;
      end $$`);
  }
}
