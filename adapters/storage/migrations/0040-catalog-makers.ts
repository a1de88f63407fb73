import { Migration } from '@mikro-orm/migrations';

/**
 * A credential that is not root changes or deletes only the SSH keys, images, templates and webhook endpoints its own
 * subtree saved (docs/decisions.md, "One tree of authority"), so each row keeps the token that saved it. Rows from
 * before stay null: they belong to no credential, and only root changes them.
 */
export class Migration0040CatalogMakers extends Migration {
  override name = '0040-catalog-makers';

  override up(): void {
    for (const table of ['ssh_keys', 'images', 'templates', 'webhook_endpoints']) {
      this.addSql(`alter table ${table} add column token_id text null references tokens (id)`);
    }
  }
}
