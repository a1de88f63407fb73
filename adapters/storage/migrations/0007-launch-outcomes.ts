import { Migration } from '@mikro-orm/migrations';

export class Migration0007LaunchOutcomes extends Migration {
  override name = '0007-launch-outcomes';

  override up(): void {
    // how the provider's create answered (created, ambiguous, refused); null while it is in flight, so a
    // retry with the same idempotency key waits for the first request's answer instead of guessing
    this.addSql(`alter table instances add column launch text null check (launch in ('created', 'ambiguous', 'refused'))`);
    this.addSql(`update instances set launch = case when machine_id is null then 'ambiguous' else 'created' end`);
  }
}
