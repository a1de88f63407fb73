import { Migration } from '@mikro-orm/migrations';

/**
 * The built-in identity provider keeps its people beside our tables (only that adapter reads these; the core
 * knows identities by (provider, subject) alone). Every secret is kept as a digest: passwords and one-time
 * codes as argon2id hashes, authorization codes and new-password sessions (256 random bits each) as SHA-256.
 */
export class Migration0008BuiltinIdentity extends Migration {
  override name = '0008-builtin-identity';

  override up(): void {
    // the address is kept lower-cased; the index on lower() makes it unique whatever the capitals anyway
    this.addSql(`
      create table builtin_users (
        user_id text primary key,
        email text not null,
        password_hash text not null,
        status text not null check (status in ('unconfirmed', 'confirmed', 'new_password_required')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('create unique index builtin_users_email on builtin_users (lower(email))');
    // one live code per person and purpose: a new one replaces (voids) the old; tries are taken before a check
    this.addSql(`
      create table builtin_codes (
        user_id text not null references builtin_users (user_id) on delete cascade,
        purpose text not null check (purpose in ('confirm', 'reset')),
        code_hash text not null,
        tries_left integer not null check (tries_left >= 0),
        expires_at timestamptz not null,
        primary key (user_id, purpose)
      )`);
    this.addSql(`
      create table builtin_authorization_codes (
        code_digest text primary key,
        user_id text not null references builtin_users (user_id) on delete cascade,
        redirect_uri text not null,
        code_challenge text not null,
        expires_at timestamptz not null
      )`);
    this.addSql('create index builtin_authorization_codes_expiry on builtin_authorization_codes (expires_at)');
    this.addSql(`
      create table builtin_password_sessions (
        session_digest text primary key,
        user_id text not null references builtin_users (user_id) on delete cascade,
        expires_at timestamptz not null
      )`);
    this.addSql('create index builtin_password_sessions_expiry on builtin_password_sessions (expires_at)');
  }

  override down(): void {
    this.addSql('drop table builtin_password_sessions');
    this.addSql('drop table builtin_authorization_codes');
    this.addSql('drop table builtin_codes');
    this.addSql('drop table builtin_users');
  }
}
