import { Migration } from '@mikro-orm/migrations';

export class Migration0019SessionIdentities extends Migration {
  override name = '0019-session-identities';

  override up(): void {
    // which identity each console session was issued to: a password reset ends that identity's sessions
    this.addSql(`
      create table session_identities (
        token_id text primary key references tokens (id),
        provider text not null,
        subject text not null
      )`);
    this.addSql(`create index session_identities_identity on session_identities (provider, subject)`);
    // sessions issued before: in a tenant with one linked identity every session was that identity's
    // (sessions come only from sign-ins, and links are never removed); elsewhere they stay unattributed
    this.addSql(`
      insert into session_identities (token_id, provider, subject)
      select t.id, l.provider, l.subject
        from tokens t
        join identity_links l on l.tenant_id = t.tenant_id
       where t.kind = 'session'
         and (select count(*) from identity_links o where o.tenant_id = t.tenant_id) = 1`);
    // an invitation's temporary password stops working 7 days after it was mailed (null: none pending)
    this.addSql(`alter table builtin_users add column temporary_password_expires_at timestamptz null`);
    this.addSql(`
      update builtin_users set temporary_password_expires_at = updated_at + interval '7 days'
       where status = 'new_password_required'`);
  }
}
