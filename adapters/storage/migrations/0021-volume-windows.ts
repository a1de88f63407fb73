import { Migration } from '@mikro-orm/migrations';

export class Migration0021VolumeWindows extends Migration {
  override name = '0021-volume-windows';

  override up(): void {
    // a volume is money like a machine: the token that made it carries its storage on its chain's caps, and a
    // capped token's volume has a window the sweep ends (docs/decisions.md, "Volumes cost money")
    this.addSql(`alter table volumes add column token_id text null references tokens (id)`);
    this.addSql(`alter table volumes add column ends_at timestamptz null`);
    this.addSql(`alter table volumes add column commitment_cents bigint not null default 0 check (commitment_cents >= 0)`);
    // the sweep reads the volumes whose window ended every pass: a few rows among all volumes ever made
    this.addSql(`create index volumes_ending on volumes (ends_at) where ends_at is not null and status in ('available', 'attached')`);
  }
}
