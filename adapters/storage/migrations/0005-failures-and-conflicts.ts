import { Migration } from '@mikro-orm/migrations';

export class Migration0005FailuresAndConflicts extends Migration {
  override name = '0005-failures-and-conflicts';

  override up(): void {
    // why a rental failed, so a retry with its idempotency key gets the same answer as the first request
    this.addSql(`alter table instances add column failure text null`);
    // a checkout the processor reports paid with another amount: an operator decides, the sweep stops asking
    this.addSql(`alter table deposits add column conflict text null`);
  }
}
