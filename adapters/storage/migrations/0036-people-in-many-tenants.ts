import { Migration } from '@mikro-orm/migrations';

/**
 * A person may belong to several tenants, with a role in each (docs/decisions.md, "One tree of authority"): an
 * identity is linked once per tenant, no longer once in all. Invitations from a tenant (docs/decisions.md,
 * "Invitations") bring people in: a single-use code mailed to an address, kept as a digest, valid 7 days.
 */
export class Migration0036PeopleInManyTenants extends Migration {
  override name = '0036-people-in-many-tenants';

  override up(): void {
    this.addSql(`alter table identity_links drop constraint identity_links_pkey`);
    this.addSql(`alter table identity_links add primary key (id)`);
    this.addSql(`create unique index identity_links_identity_tenant on identity_links (provider, subject, tenant_id)`);
    this.addSql(`create index identity_links_identity on identity_links (provider, subject, created_at)`);
    this.addSql(`
      create table invitations (
        id text primary key,
        tenant_id text not null references tenants (id),
        email text not null,
        role text not null check (role in ('owner', 'admin', 'member', 'billing', 'viewer')),
        spend_limit_cents bigint null check (spend_limit_cents > 0),
        max_rental_hours integer null check (max_rental_hours > 0),
        code_digest text not null unique,
        invited_by_token_id text not null references tokens (id),
        parent_node_id text null references tokens (id),
        status text not null check (status in ('pending', 'accepted', 'revoked')),
        mailed boolean not null,
        expires_at timestamptz not null,
        created_at timestamptz not null,
        ended_at timestamptz null,
        accepted_by text null references identity_links (id) on delete set null
      )`);
    this.addSql(`create index invitations_tenant on invitations (tenant_id, created_at)`);
  }
}
