import { Migration } from '@mikro-orm/migrations';

export class Migration0012Metering extends Migration {
  override name = '0012-metering';

  override up(): void {
    // One row per (tenant, kind): the exact sum of quantity x unit price so far, and what it has cost in
    // cents. The check is the one rounding: what was charged is always ceil(total x 100).
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
    // to its total's charge. unique_key makes an ingestion idempotent (per tenant). A record is only ever
    // inserted beside its running total, whose row references the account: no foreign key of its own, so
    // an ingestion takes no key-share lock on the account row (a settlement or a rental holds it FOR UPDATE).
    this.addSql(`
      create table usage_records (
        id text primary key,
        tenant_id text not null,
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
    // One record metered (core/metering/rounding.ts): lock the (tenant, kind) running total
    // (opened at zero on first use), price the record as what it adds to ceil(total x 100), insert it unless
    // its unique key was used, and move the total by what was inserted. One call per record; a function
    // because its plans are kept per session (the statements sent as text would be planned every time).
    // Answers the new record's amount_cents, or null: the key was used before, or there is no such tenant.
    this.addSql(`
      create function meter_usage(p_id text, p_tenant text, p_kind text, p_quantity numeric, p_unit text, p_price numeric,
                                  p_started timestamptz, p_ended timestamptz, p_reference text, p_key text, p_request text, p_created timestamptz)
      returns bigint language plpgsql as $$
      declare
        v_total numeric;
        v_charged bigint;
        v_amount bigint;
      begin
        select total_usd, charged_cents into v_total, v_charged from usage_totals where tenant_id = p_tenant and resource_kind = p_kind for update;
        if not found then
          insert into accounts (tenant_id, created_at) select id, p_created from tenants where id = p_tenant on conflict (tenant_id) do nothing;
          insert into usage_totals (tenant_id, resource_kind, total_usd, charged_cents, created_at)
            select tenant_id, p_kind, 0, 0, p_created from accounts where tenant_id = p_tenant
            on conflict (tenant_id, resource_kind) do nothing;
          select total_usd, charged_cents into v_total, v_charged from usage_totals where tenant_id = p_tenant and resource_kind = p_kind for update;
          if not found then
            return null;
          end if;
        end if;
        v_amount := ceil((v_total + p_quantity * p_price) * 100)::bigint - v_charged;
        insert into usage_records (id, tenant_id, resource_kind, quantity, unit, unit_price_usd, amount_cents, started_at, ended_at, reference, unique_key, request, created_at)
          values (p_id, p_tenant, p_kind, p_quantity, p_unit, p_price, v_amount, p_started, p_ended, p_reference, p_key, p_request, p_created)
          on conflict (tenant_id, unique_key) do nothing;
        if not found then
          return null;
        end if;
        update usage_totals set total_usd = v_total + p_quantity * p_price, charged_cents = v_charged + v_amount
         where tenant_id = p_tenant and resource_kind = p_kind;
        return v_amount;
      end $$`);
    // Records ingested at the same moment, metered in one call and one transaction: in (tenant, kind) order, so
    // two such calls lock running totals in the same order and never deadlock. Answers each input's position
    // (ord, as given) with its amount_cents, or null as meter_usage does.
    this.addSql(`
      create function meter_usage_many(p_records jsonb) returns table (ord integer, amount_cents bigint) language plpgsql as $$
      declare
        r record;
      begin
        for r in
          select * from jsonb_to_recordset(p_records) as x(ord integer, id text, tenant_id text, resource_kind text, quantity numeric, unit text,
                                                           unit_price_usd numeric, started_at timestamptz, ended_at timestamptz, reference text,
                                                           unique_key text, request text, created_at timestamptz)
           order by x.tenant_id, x.resource_kind, x.ord
        loop
          ord := r.ord;
          amount_cents := meter_usage(r.id, r.tenant_id, r.resource_kind, r.quantity, r.unit, r.unit_price_usd, r.started_at, r.ended_at,
                                      r.reference, r.unique_key, r.request, r.created_at);
          return next;
        end loop;
      end $$`);
    this.addSql(`create index usage_records_tenant on usage_records (tenant_id, started_at desc, seq desc)`);
    // what settlement walks (oldest first per tenant) and what owed_cents sums
    this.addSql(`create index usage_records_unsettled on usage_records (tenant_id, seq) include (amount_cents) where settled_at is null`);
  }
}
