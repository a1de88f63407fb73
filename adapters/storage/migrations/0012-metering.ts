import { Migration } from '@mikro-orm/migrations';

export class Migration0012Metering extends Migration {
  override name = '0012-metering';

  override up(): void {
    // One row per (tenant, kind): the exact sum of quantity x unit price so far, and what it has cost in
    // cents. The check is the one rounding (DESIGN.md §13): what was charged is always ceil(total x 100).
    this.addSql(`
      create table usage_totals (
        tenant_id text not null references accounts (tenant_id),
        resource_kind text not null,
        total_usd numeric not null check (total_usd >= 0),
        charged_cents bigint not null,
        created_at timestamptz not null,
        primary key (tenant_id, resource_kind),
        check (charged_cents = ceil(total_usd * 100))
      )`);
    // Quantities and prices are exact decimals with at most 6 places; amount_cents is what the record added
    // to its total's charge. unique_key makes an ingestion idempotent (per tenant).
    this.addSql(`
      create table usage_records (
        id text primary key,
        tenant_id text not null references accounts (tenant_id),
        seq bigserial not null,
        resource_kind text not null,
        quantity numeric(16, 6) not null check (quantity > 0 and quantity <= 1000000000),
        unit text not null,
        unit_price_usd numeric(10, 6) not null check (unit_price_usd > 0),
        amount_cents bigint not null check (amount_cents >= 0),
        started_at timestamptz not null,
        ended_at timestamptz null check (ended_at is null or ended_at >= started_at),
        reference text null,
        unique_key text not null,
        request text null,
        settled_at timestamptz null,
        created_at timestamptz not null
      )`);
    this.addSql(`create unique index usage_records_key on usage_records (tenant_id, unique_key)`);
    this.addSql(`create index usage_records_tenant on usage_records (tenant_id, started_at desc, seq desc)`);
    // what settlement walks (oldest first per tenant) and what owed_cents sums
    this.addSql(`create index usage_records_unsettled on usage_records (tenant_id, seq) include (amount_cents) where settled_at is null`);
  }
}
