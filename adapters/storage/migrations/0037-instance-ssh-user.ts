import { Migration } from '@mikro-orm/migrations';

/**
 * An instance keeps the login user its machine stated, where a provider states one per machine (a reseller whose
 * machines come from many clouds: docs/decisions.md, "A provider is a plugin"). Null for every other provider,
 * whose user its module states; rows from before stay null.
 */
export class Migration0037InstanceSshUser extends Migration {
  override name = '0037-instance-ssh-user';

  override up(): void {
    this.addSql(`alter table instances add column ssh_user text null`);
  }
}
