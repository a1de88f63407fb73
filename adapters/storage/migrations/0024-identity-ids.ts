import { Migration } from '@mikro-orm/migrations';

export class Migration0024IdentityIds extends Migration {
  override name = '0024-identity-ids';

  override up(): void {
    // a linked identity is listed and removed by an id of its own (GET and DELETE /v1/identities)
    this.addSql(`alter table identity_links add column id text null`);
    // links made before: an id derived from the identity, in the form of every other id (prefix, [a-z0-9])
    this.addSql(`update identity_links set id = 'idn_' || substr(md5(provider || ':' || subject), 1, 16)`);
    this.addSql(`alter table identity_links alter column id set not null`);
    this.addSql(`create unique index identity_links_id on identity_links (id)`);
    // shown beside the address: GitHub's login, which an identity without a verified address has alone
    this.addSql(`alter table identity_links add column login text null`);
    // the token whose bearer linked the person in; null when the person's own sign-up or an invitation made the link
    this.addSql(`alter table identity_links add column linked_by_token_id text null references tokens (id)`);
  }
}
