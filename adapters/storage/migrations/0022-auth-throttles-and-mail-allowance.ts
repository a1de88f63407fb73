import { Migration } from '@mikro-orm/migrations';

export class Migration0022AuthThrottlesAndMailAllowance extends Migration {
  override name = '0022-auth-throttles-and-mail-allowance';

  override up(): void {
    // a failure is now recorded before the check it counts (and removed again when the check succeeds), so
    // each row needs an id; and sign-ins are throttled per email and client address, under a per-email ceiling
    this.addSql(`alter table auth_failures add column id bigint generated always as identity primary key`);
    this.addSql(`alter table auth_failures add column client_key text not null default ''`);
    this.addSql(`create index auth_failures_client on auth_failures (email_key, kind, client_key, at)`);
    this.addSql(`create index auth_failures_at on auth_failures (at)`);
    // every ask that may mail an address (sign-up, resend, forgot, an invitation, a notice), for the hourly allowance
    this.addSql(`
      create table mail_sends (
        id bigint generated always as identity primary key,
        address text not null,
        at timestamptz not null
      )`);
    this.addSql(`create index mail_sends_address on mail_sends (address, at)`);
    this.addSql(`create index mail_sends_at on mail_sends (at)`);
  }
}
