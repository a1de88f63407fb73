import { Migration } from '@mikro-orm/migrations';

export class Migration0023UnconfirmedSignUps extends Migration {
  override name = '0023-unconfirmed-sign-ups';

  override up(): void {
    // sign-ups never confirmed are forgotten after 7 days: found by age among the unconfirmed alone
    this.addSql(`create index builtin_users_unconfirmed on builtin_users (created_at) where status = 'unconfirmed'`);
  }
}
