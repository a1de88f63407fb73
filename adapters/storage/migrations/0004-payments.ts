import { Migration } from '@mikro-orm/migrations';

export class Migration0004Payments extends Migration {
  override name = '0004-payments';

  override up(): void {
    this.addSql(`
      alter table accounts
        add column payment_customer_id text null,
        add column card_payment_method_id text null,
        add column card_brand text null,
        add column card_last4 text null,
        add column auto_recharge_enabled boolean not null default false,
        add column auto_recharge_threshold_cents bigint not null default 0 check (auto_recharge_threshold_cents >= 0),
        add column auto_recharge_amount_cents bigint not null default 0 check (auto_recharge_amount_cents >= 0),
        add column auto_recharge_last_error text null,
        add column auto_recharge_suspended boolean not null default false`);
    this.addSql(`alter table deposits add column session_id text null`);
    this.addSql(`create unique index deposits_session on deposits (session_id) where session_id is not null`);
    // One row per auto-recharge attempt: the rolling 24 h count, and the claim that keeps overlapping sweeps to one payment.
    this.addSql(`
      create table auto_recharge_payments (
        id text primary key,
        tenant_id text not null references accounts (tenant_id),
        amount_cents bigint not null check (amount_cents > 0),
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        error text null,
        created_at timestamptz not null,
        decided_at timestamptz null
      )`);
    this.addSql(`create index auto_recharge_payments_tenant on auto_recharge_payments (tenant_id, created_at)`);
    this.addSql(`create unique index auto_recharge_one_pending on auto_recharge_payments (tenant_id) where status = 'pending'`);
  }
}
