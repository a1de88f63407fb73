import { Migration } from '@mikro-orm/migrations';

export class Migration0010Catalog extends Migration {
  override name = '0010-catalog';

  override up(): void {
    // one key material once per tenant: the fingerprint is the SHA-256 of the key blob (the comment is not in it)
    this.addSql(`
      create table ssh_keys (
        id text primary key,
        tenant_id text not null references tenants (id),
        name text not null,
        public_key text not null,
        key_type text not null,
        fingerprint text not null,
        created_at timestamptz not null,
        unique (tenant_id, fingerprint)
      )`);
    this.addSql(`create index ssh_keys_tenant on ssh_keys (tenant_id, created_at)`);
    // the registry password only sealed (AES-256-GCM, the image id as associated data): never in the clear
    this.addSql(`
      create table images (
        id text primary key,
        tenant_id text not null references tenants (id),
        name text not null,
        image text not null,
        registry_username text null,
        registry_password_sealed text null,
        command text null,
        created_at timestamptz not null,
        check (registry_password_sealed is null or registry_username is not null)
      )`);
    this.addSql(`create index images_tenant on images (tenant_id, created_at)`);
    // image_id references a saved image (deleting one in use is refused); ssh_key_ids are checked by the
    // service under a lock, as arrays take no foreign keys; volume_ids are checked when a machine is rented
    this.addSql(`
      create table templates (
        id text primary key,
        tenant_id text not null references tenants (id),
        name text not null,
        image_id text null references images (id),
        image text null,
        ssh_key_ids text[] not null,
        env jsonb not null,
        ports integer[] not null,
        startup_script text null,
        termination_hours integer null,
        volume_ids text[] not null,
        search jsonb not null,
        created_at timestamptz not null,
        check (image_id is null or image is null)
      )`);
    this.addSql(`create index templates_tenant on templates (tenant_id, created_at)`);
    this.addSql(`create index templates_image on templates (image_id) where image_id is not null`);
    this.addSql(`create index templates_ssh_keys on templates using gin (ssh_key_ids)`);
  }
}
