import { Migration } from '@mikro-orm/migrations';

/**
 * One tree of authority (docs/decisions.md, "One tree of authority"): each person's place in a tenant becomes a node
 * of the tokens tree (kind `link`, no secret) carrying their role, and their console sessions hang under it. People
 * linked before had every scope: they become owners, and their live sessions move under their link (with everything
 * those sessions issued, whose ancestors gain the link).
 */
export class Migration0034AuthorityTree extends Migration {
  override name = '0034-authority-tree';

  override up(): void {
    this.addSql(`alter table tokens drop constraint if exists tokens_kind_check`);
    this.addSql(`alter table tokens add constraint tokens_kind_check check (kind in ('api', 'session', 'link'))`);
    this.addSql(`alter table tokens add column role text null check (role in ('owner', 'admin', 'member', 'billing', 'viewer'))`);
    this.addSql(`alter table identity_links add column node_id text null references tokens (id)`);
    // one link node per person, named from the identity's id so the statement can be run once, whatever the rows
    this.addSql(`
      insert into tokens (id, tenant_id, kind, name, scopes, spend_limit_cents, committed_cents, max_rental_hours, expires_at,
                          parent_id, ancestor_ids, created_at, revoked_at, secret_digest, role)
      select 'tok_' || substr(md5('link:' || l.id), 1, 24), l.tenant_id, 'link', coalesce(l.email, l.login, l.subject),
             array['read', 'rent', 'manage', 'billing'], null, 0, null, null, null, '{}', l.created_at, null, 'link', 'owner'
        from identity_links l`);
    this.addSql(`update identity_links set node_id = 'tok_' || substr(md5('link:' || id), 1, 24)`);
    this.addSql(`alter table identity_links alter column node_id set not null`);
    this.addSql(`create unique index identity_links_node on identity_links (node_id)`);
    this.addSql(`
      with moved as (
        select t.id as session_id, l.node_id
          from tokens t
          join session_identities s on s.token_id = t.id
          join identity_links l on l.provider = s.provider and l.subject = s.subject and l.tenant_id = t.tenant_id
         where t.kind = 'session' and t.parent_id is null
      )
      update tokens t
         set ancestor_ids = array[m.node_id] || t.ancestor_ids,
             parent_id = case when t.id = m.session_id then m.node_id else t.parent_id end,
             role = case when t.id = m.session_id then 'owner' else t.role end
        from moved m
       where t.id = m.session_id or t.ancestor_ids[1] = m.session_id`);
    // sessions no person can be found for (issued before sessions were recorded) keep what they held
    this.addSql(`update tokens set role = 'owner' where kind = 'session' and role is null`);
  }
}
