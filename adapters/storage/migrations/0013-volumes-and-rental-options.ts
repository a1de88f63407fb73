import { Migration } from '@mikro-orm/migrations';

export class Migration0013VolumesAndRentalOptions extends Migration {
  override name = '0013-volumes-and-rental-options';

  override up(): void {
    this.addSql(`
      create table volumes (
        id text primary key,
        tenant_id text not null references tenants (id),
        name text not null,
        size_gb integer not null check (size_gb between 1 and 10000),
        provider text not null,
        region text not null,
        status text not null check (status in ('creating', 'available', 'attached', 'deleted', 'failed')),
        upstream_id text null,
        attached_instance_id text null references instances (id),
        price_usd_per_gb_month text not null,
        price_usd_per_gb_hour text not null,
        billed_hours integer not null default 0 check (billed_hours >= 0),
        created_at timestamptz not null,
        deleted_at timestamptz null
      )`);
    this.addSql(`create index volumes_tenant on volumes (tenant_id, created_at)`);
    // the sweep's hourly storage step reads only volumes with hours still to record
    this.addSql(`create index volumes_billable on volumes (created_at) where status in ('available', 'attached', 'deleted')`);
    // one live instance per volume: an attached volume names it
    this.addSql(`create unique index volumes_attached on volumes (attached_instance_id, id) where attached_instance_id is not null`);
    // what a rental was made with (InstanceOut): the image, the template and saved key it came from, its volumes
    this.addSql(`
      alter table instances
        add column image text null,
        add column template_id text null,
        add column ssh_key_id text null,
        add column volume_ids text[] not null default '{}'`);
  }
}
