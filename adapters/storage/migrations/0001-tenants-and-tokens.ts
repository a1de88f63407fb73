import { Migration } from '@mikro-orm/migrations';

export class Migration0001TenantsAndTokens extends Migration {
  override name = '0001-tenants-and-tokens';

  override up(): void {
    this.addSql(`
      create table tenants (
        id text primary key,
        name text not null,
        created_at timestamptz not null,
        bootstrap_digest text not null,
        bootstrap_expires_at timestamptz not null,
        bootstrap_used_at timestamptz null
      )`);
    this.addSql(`
      create table tokens (
        id text primary key,
        tenant_id text not null references tenants (id),
        name text null,
        scopes text[] not null,
        spend_limit_cents bigint null check (spend_limit_cents is null or spend_limit_cents >= 0),
        committed_cents bigint not null default 0 check (committed_cents >= 0),
        max_rental_hours integer null check (max_rental_hours is null or max_rental_hours >= 1),
        expires_at timestamptz null,
        parent_id text null references tokens (id),
        ancestor_ids text[] not null,
        created_at timestamptz not null,
        revoked_at timestamptz null,
        secret_digest text not null
      )`);
    this.addSql('create index tokens_tenant_id_index on tokens (tenant_id)');
    // Finds a token's descendants in one statement (revocation, subtree listing).
    this.addSql('create index tokens_ancestor_ids_index on tokens using gin (ancestor_ids)');
  }

  override down(): void {
    this.addSql('drop table tokens');
    this.addSql('drop table tenants');
  }
}
