import { Migration } from '@mikro-orm/migrations';

/**
 * A create in flight holds a lease its process renews (docs/decisions.md, "Crash anywhere, lose nothing"): a create
 * whose process died is known for nobody's as soon as its lease runs out, not at the provisioning deadline. Rows
 * from before have no lease: their creates answered long ago or are nobody's.
 */
export class Migration0038LaunchLeases extends Migration {
  override name = '0038-launch-leases';

  override up(): void {
    this.addSql(`create table launch_leases (
      instance_id text primary key references instances (id) on delete cascade,
      holder text not null,
      lease_until timestamptz not null
    )`);
  }
}
