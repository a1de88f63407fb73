import { Migration } from '@mikro-orm/migrations';

export class Migration0031MonthlyBudgets extends Migration {
  override name = '0031-monthly-budgets';

  override up(): void {
    this.addSql(`alter table accounts drop constraint if exists accounts_pause_kind_check`);
    this.addSql(`alter table accounts add constraint accounts_pause_kind_check check (pause_kind in ('emergency_stop', 'breaker', 'hold', 'budget'))`);
    this.addSql(`
      create table budgets (
        tenant_id text primary key references tenants (id),
        monthly_cents bigint not null check (monthly_cents > 0),
        alert_percents integer[] not null,
        stop_at_limit boolean not null,
        updated_at timestamptz not null
      )`);
    // What the ledger charged a tenant in a calendar month (UTC), kept by the ledger itself (docs/decisions.md,
    // "Monthly budgets"): whichever statement posts a charge (a first hour, the sweep's set-based hour blocks, a
    // settlement of usage), the trigger below adds it in that statement, so no posting path can leave it out.
    // `xact` names the transaction that last added to the row: the budget watch reads the rows its own
    // transaction touched.
    this.addSql(`
      create table budget_spend (
        tenant_id text not null references tenants (id),
        month date not null,
        spent_cents bigint not null check (spent_cents >= 0),
        xact bigint not null,
        primary key (tenant_id, month)
      )`);
    // the watch reads the rows of its own transaction: a few, however many tenants and budgets there are
    this.addSql(`create index budget_spend_xact on budget_spend (xact)`);
    this.addSql(`
      create function budget_spend_from_ledger() returns trigger language plpgsql as $$
      begin
        insert into budget_spend (tenant_id, month, spent_cents, xact)
        select tenant_id, date_trunc('month', created_at at time zone 'UTC')::date, sum(-amount_cents), txid_current()
          from posted
         where kind in ('rental_hour', 'usage') and amount_cents < 0
         group by 1, 2
        on conflict (tenant_id, month) do update
           set spent_cents = budget_spend.spent_cents + excluded.spent_cents, xact = excluded.xact;
        return null;
      end $$`);
    this.addSql(`
      create trigger ledger_budget_spend after insert on ledger_entries
        referencing new table as posted for each statement execute function budget_spend_from_ledger()`);
    this.addSql(`
      insert into budget_spend (tenant_id, month, spent_cents, xact)
      select tenant_id, date_trunc('month', created_at at time zone 'UTC')::date, sum(-amount_cents), 0
        from ledger_entries
       where kind in ('rental_hour', 'usage') and amount_cents < 0
       group by 1, 2`);
    // One row per alert told, per (tenant, month, percent): the key makes telling one twice impossible. A row is
    // also the alert's mail in waiting until mailed_at is set (an outbox: the mail leaves after the commit).
    this.addSql(`
      create table budget_alerts (
        tenant_id text not null references tenants (id),
        month date not null,
        percent integer not null check (percent between 1 and 100),
        monthly_cents bigint not null,
        spent_cents bigint not null,
        stop_at_limit boolean not null,
        told_at timestamptz not null,
        mailed_at timestamptz null,
        mail_claimed_until timestamptz null,
        primary key (tenant_id, month, percent)
      )`);
    this.addSql(`create index budget_alerts_unmailed on budget_alerts (told_at) where mailed_at is null`);
  }
}
