import { Migration } from '@mikro-orm/migrations';

export class Migration0020VolumesCreating extends Migration {
  override name = '0020-volumes-creating';

  override up(): void {
    // the sweep's volume reconcile reads the volumes whose create had no answer, per provider, every pass: a few
    // rows among all volumes ever made
    this.addSql(`create index volumes_creating on volumes (provider, created_at) where status = 'creating'`);
  }
}
