import { Migration } from '@mikro-orm/migrations';

export class Migration0009IdentityLinksAndSessions extends Migration {
  override name = '0009-identity-links-and-sessions';

  override up(): void {
    // console sessions are tokens too: listed, revocable, expiring 30 days after sign-in
    this.addSql(`alter table tokens add column kind text not null default 'api' check (kind in ('api', 'session'))`);
    // an identity (provider, subject) belongs to one tenant at most: the primary key makes a second link impossible
    this.addSql(`
      create table identity_links (
        provider text not null,
        subject text not null,
        tenant_id text not null references tenants (id),
        email text null,
        created_at timestamptz not null,
        primary key (provider, subject)
      )`);
    this.addSql(`create index identity_links_tenant on identity_links (tenant_id)`);
    // a device flow's state: only the digest of the device code is kept
    this.addSql(`
      create table device_flows (
        id text primary key,
        provider text not null,
        device_code_digest text not null unique,
        status text not null check (status in ('pending', 'complete', 'expired', 'denied')),
        interval_seconds integer not null check (interval_seconds > 0),
        expires_at timestamptz not null,
        last_polled_at timestamptz null,
        tenant_id text null references tenants (id),
        created_at timestamptz not null
      )`);
    // failed sign-ins and code tries per email, for the per-email limit across replicas
    this.addSql(`
      create table auth_failures (
        email_key text not null,
        kind text not null check (kind in ('password', 'code')),
        at timestamptz not null
      )`);
    this.addSql(`create index auth_failures_email on auth_failures (email_key, kind, at)`);
  }
}
