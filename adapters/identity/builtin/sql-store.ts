import type { AuthorizationCodeRecord, BuiltinStore, CodePurpose, UserRecord, UserStatus } from './store.ts';

/** Raw SQL on the control plane's database (MikroStorage.execute; `?` placeholders), one statement per call. */
export interface BuiltinDatabase {
  execute<T = Record<string, unknown>[]>(sql: string, params?: unknown[]): Promise<T>;
}

type Row = Record<string, unknown>;

const USER_COLUMNS = 'user_id, email, password_hash, status, temporary_password_expires_at';
const toUser = (row: Row): UserRecord => ({
  userId: String(row.user_id),
  email: String(row.email),
  passwordHash: String(row.password_hash),
  status: String(row.status) as UserStatus,
  temporaryPasswordExpiresAt: row.temporary_password_expires_at == null ? null : new Date(row.temporary_password_expires_at as string | Date),
});
const qualified = (alias: string): string => USER_COLUMNS.split(', ').map((c) => `${alias}.${c}`).join(', ');
const iso = (date: Date): string => date.toISOString();

/**
 * The built-in provider's people in tables `builtin_users`, `builtin_codes`, `builtin_authorization_codes`
 * and `builtin_password_sessions` (migration 0008). Every method is one statement, so nothing is held open
 * around a call, and each use of a code or session is atomic. Times come from the provider's clock.
 */
export class SqlBuiltinStore implements BuiltinStore {
  private readonly db: BuiltinDatabase;

  constructor(db: BuiltinDatabase) {
    this.db = db;
  }

  async userByEmail(email: string): Promise<UserRecord | null> {
    const [row] = await this.db.execute<Row[]>(`select ${USER_COLUMNS} from builtin_users where lower(email) = lower(?)`, [email]);
    return row ? toUser(row) : null;
  }

  async userById(userId: string): Promise<UserRecord | null> {
    const [row] = await this.db.execute<Row[]>(`select ${USER_COLUMNS} from builtin_users where user_id = ?`, [userId]);
    return row ? toUser(row) : null;
  }

  async addUser(user: UserRecord, at: Date): Promise<boolean> {
    const rows = await this.db.execute<Row[]>(
      `insert into builtin_users (user_id, email, password_hash, status, temporary_password_expires_at, created_at, updated_at)
       values (?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?::timestamptz)
       on conflict (lower(email)) do nothing
       returning user_id`,
      [user.userId, user.email, user.passwordHash, user.status, user.temporaryPasswordExpiresAt && iso(user.temporaryPasswordExpiresAt), iso(at), iso(at)],
    );
    return rows.length === 1;
  }

  async renewInvitation(email: string, passwordHash: string, expiresAt: Date, at: Date): Promise<UserRecord | null> {
    const [row] = await this.db.execute<Row[]>(
      `with renewed as (
         update builtin_users set password_hash = ?, status = 'new_password_required', temporary_password_expires_at = ?::timestamptz, updated_at = ?::timestamptz
          where lower(email) = lower(?) and status in ('new_password_required', 'unconfirmed')
         returning ${USER_COLUMNS}
       ), stale_sessions as (
         delete from builtin_password_sessions s using renewed where s.user_id = renewed.user_id
       ), stale_codes as (
         delete from builtin_codes c using renewed where c.user_id = renewed.user_id
       )
       select ${USER_COLUMNS} from renewed`,
      [passwordHash, iso(expiresAt), iso(at), email],
    );
    return row ? toUser(row) : null;
  }

  async forgetUnconfirmed(before: Date, email?: string): Promise<void> {
    if (email === undefined) {
      await this.db.execute(`delete from builtin_users where status = 'unconfirmed' and created_at <= ?::timestamptz`, [iso(before)]);
      return;
    }
    await this.db.execute(`delete from builtin_users where lower(email) = lower(?) and status = 'unconfirmed' and created_at <= ?::timestamptz`, [email, iso(before)]);
  }

  async putCode(email: string, statuses: readonly UserStatus[], code: { purpose: CodePurpose; hash: string; tries: number; expiresAt: Date }): Promise<string | null> {
    // the same statement whether or not the address has an account: the answer takes the same time
    const [row] = await this.db.execute<Row[]>(
      `insert into builtin_codes (user_id, purpose, code_hash, tries_left, expires_at)
       select user_id, ?, ?, ?, ?::timestamptz from builtin_users where lower(email) = lower(?) and status = any(string_to_array(?, ','))
       on conflict (user_id, purpose) do update
         set code_hash = excluded.code_hash, tries_left = excluded.tries_left, expires_at = excluded.expires_at
       returning user_id`,
      [code.purpose, code.hash, code.tries, iso(code.expiresAt), email, statuses.join(',')],
    );
    return row ? String(row.user_id) : null;
  }

  async takeCodeTry(email: string, purpose: CodePurpose, now: Date): Promise<{ userId: string; codeHash: string } | null> {
    // the try is spent before the check: parallel guesses cannot share one try
    const [row] = await this.db.execute<Row[]>(
      `update builtin_codes c set tries_left = c.tries_left - 1
         from builtin_users u
        where u.user_id = c.user_id and lower(u.email) = lower(?) and c.purpose = ? and c.tries_left > 0 and c.expires_at > ?::timestamptz
       returning c.user_id, c.code_hash`,
      [email, purpose, iso(now)],
    );
    return row ? { userId: String(row.user_id), codeHash: String(row.code_hash) } : null;
  }

  async confirmWithCode(userId: string, codeHash: string, at: Date): Promise<boolean> {
    const rows = await this.db.execute<Row[]>(
      `with used as (
         delete from builtin_codes where user_id = ? and purpose = 'confirm' and code_hash = ? returning user_id
       )
       update builtin_users u set status = 'confirmed', updated_at = ?::timestamptz
         from used where u.user_id = used.user_id and u.status = 'unconfirmed'
       returning u.user_id`,
      [userId, codeHash, iso(at)],
    );
    return rows.length === 1;
  }

  async resetWithCode(userId: string, codeHash: string, passwordHash: string, at: Date): Promise<UserRecord | null> {
    const rows = await this.db.execute<Row[]>(
      `with used as (
         delete from builtin_codes where user_id = ? and purpose = 'reset' and code_hash = ? returning user_id
       ), stale_codes as (
         delete from builtin_codes c using used where c.user_id = used.user_id and c.purpose = 'confirm'
       ), stale_sessions as (
         delete from builtin_password_sessions s using used where s.user_id = used.user_id
       )
       update builtin_users u set password_hash = ?, status = 'confirmed', temporary_password_expires_at = null, updated_at = ?::timestamptz
         from used where u.user_id = used.user_id
       returning ${qualified('u')}`,
      [userId, codeHash, passwordHash, iso(at)],
    );
    return rows[0] ? toUser(rows[0]) : null;
  }

  async rehash(userId: string, from: string, to: string): Promise<void> {
    await this.db.execute(`update builtin_users set password_hash = ? where user_id = ? and password_hash = ?`, [to, userId, from]);
  }

  async addPasswordSession(digest: string, userId: string, expiresAt: Date, now: Date): Promise<void> {
    await this.db.execute(
      `with expired as (delete from builtin_password_sessions where expires_at <= ?::timestamptz)
       insert into builtin_password_sessions (session_digest, user_id, expires_at) values (?, ?, ?::timestamptz)`,
      [iso(now), digest, userId, iso(expiresAt)],
    );
  }

  async completeNewPassword(email: string, sessionDigest: string, passwordHash: string, now: Date): Promise<UserRecord | null> {
    const [row] = await this.db.execute<Row[]>(
      `with used as (
         delete from builtin_password_sessions s using builtin_users u
          where s.session_digest = ? and s.user_id = u.user_id and lower(u.email) = lower(?) and s.expires_at > ?::timestamptz
         returning s.user_id
       )
       update builtin_users u set password_hash = ?, status = 'confirmed', temporary_password_expires_at = null, updated_at = ?::timestamptz
         from used where u.user_id = used.user_id and u.status = 'new_password_required'
       returning ${qualified('u')}`,
      [sessionDigest, email, iso(now), passwordHash, iso(now)],
    );
    return row ? toUser(row) : null;
  }

  async addAuthorizationCode(digest: string, record: AuthorizationCodeRecord, now: Date): Promise<void> {
    await this.db.execute(
      `with expired as (delete from builtin_authorization_codes where expires_at <= ?::timestamptz)
       insert into builtin_authorization_codes (code_digest, user_id, redirect_uri, code_challenge, expires_at)
       values (?, ?, ?, ?, ?::timestamptz)`,
      [iso(now), digest, record.userId, record.redirectUri, record.codeChallenge, iso(record.expiresAt)],
    );
  }

  async takeAuthorizationCode(digest: string): Promise<AuthorizationCodeRecord | null> {
    const [row] = await this.db.execute<Row[]>(
      `delete from builtin_authorization_codes where code_digest = ? returning user_id, redirect_uri, code_challenge, expires_at`,
      [digest],
    );
    if (!row) return null;
    return {
      userId: String(row.user_id),
      redirectUri: String(row.redirect_uri),
      codeChallenge: String(row.code_challenge),
      expiresAt: new Date(row.expires_at as string | Date),
    };
  }
}
