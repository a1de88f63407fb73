import { Migration } from '@mikro-orm/migrations';

/**
 * The sandbox carries out every create option a real cloud does, so it keeps them on its machines (several SSH
 * keys, image credentials, command, env, ports, startup script, attached volumes), and it hosts network volumes
 * of its own. Only the sandbox adapter reads these; the registry password is kept as a SHA-256 digest only.
 */
export class Migration0011SandboxRentalOptionsAndVolumes extends Migration {
  override name = '0011-sandbox-rental-options-and-volumes';

  override up(): void {
    this.addSql(`
      alter table sandbox_machines
        add column ssh_public_keys jsonb not null default '[]',
        add column registry_username text null,
        add column registry_password_sha256 text null,
        add column command text null,
        add column env jsonb not null default '{}',
        add column ports jsonb not null default '[]',
        add column startup_script text null,
        add column volume_ids jsonb not null default '[]'`);
    this.addSql(`update sandbox_machines set ssh_public_keys = jsonb_build_array(ssh_public_key) where ssh_public_key is not null`);
    this.addSql('alter table sandbox_machines drop column ssh_public_key');
    // volume ids are `sbv-<serial>`, like machine ids: one sequence for every process and every restart
    this.addSql('create sequence sandbox_volume_serial');
    this.addSql(`
      create table sandbox_volumes (
        volume_id text primary key,
        label text not null,
        name text not null,
        region text not null,
        size_gb integer not null check (size_gb > 0),
        created_at_ms bigint not null
      )`);
  }

  override down(): void {
    this.addSql('drop table sandbox_volumes');
    this.addSql('drop sequence sandbox_volume_serial');
    this.addSql('alter table sandbox_machines add column ssh_public_key text null');
    this.addSql(`update sandbox_machines set ssh_public_key = ssh_public_keys ->> 0`);
    this.addSql(`
      alter table sandbox_machines
        drop column ssh_public_keys, drop column registry_username, drop column registry_password_sha256,
        drop column command, drop column env, drop column ports, drop column startup_script, drop column volume_ids`);
  }
}
