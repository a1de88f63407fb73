import { Migration } from '@mikro-orm/migrations';

export class Migration0029TokenIdleTimeouts extends Migration {
  override name = '0029-token-idle-timeouts';

  override up(): void {
    // the dead-man switch (docs/decisions.md, "Dead-man switch"): activity moves idle_deadline_at to its time plus
    // idle_timeout_minutes; idled_at records that the sweep ended the token for it, so a refusal can say why
    this.addSql(`
      alter table tokens
        add column idle_timeout_minutes integer check (idle_timeout_minutes between 5 and 1440),
        add column idle_deadline_at timestamptz,
        add column idled_at timestamptz,
        add constraint tokens_idle_deadline_set check ((idle_timeout_minutes is null) = (idle_deadline_at is null))`);
    // what each pass of the sweep looks through: live tokens with a timeout, by deadline, never the whole table
    this.addSql(`create index tokens_idle_deadline on tokens (idle_deadline_at) where revoked_at is null and idled_at is null`);
  }
}
