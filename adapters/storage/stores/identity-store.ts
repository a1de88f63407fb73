import type { EntityManager } from '@mikro-orm/sql';
import type { DeviceFlow, DeviceFlowStatus, IdentityLink } from '../../../core/identity/links.ts';
import type { Role } from '../../../core/tenancy/roles.ts';
import type { AuthFailureStore, DeviceFlowStore, FailureCount, IdentityLinkStore, MailSendStore } from '../../../core/ports/storage.ts';
import { date, dateOrNull, num, textOrNull, type Row } from './sql-rows.ts';

const LINK_COLUMNS = 'id, provider, subject, tenant_id, email, login, linked_by_token_id, created_at, node_id';
/** A link as read: its row with its node's role and limits; a link whose node ended is gone (docs/decisions.md, "One tree of authority"). */
const LINK_SELECT = `select l.id, l.provider, l.subject, l.tenant_id, l.email, l.login, l.linked_by_token_id, l.created_at, l.node_id, l.join_seq,
                            n.role, n.spend_limit_cents, n.max_rental_hours
                       from identity_links l join tokens n on n.id = l.node_id and n.revoked_at is null`;

const toLink = (row: Row): IdentityLink => ({
  id: String(row.id),
  provider: String(row.provider),
  subject: String(row.subject),
  tenantId: String(row.tenant_id),
  email: textOrNull(row.email),
  login: textOrNull(row.login),
  linkedByTokenId: textOrNull(row.linked_by_token_id),
  createdAt: date(row.created_at),
  nodeId: String(row.node_id),
  role: String(row.role) as Role,
  spendLimitCents: row.spend_limit_cents === null || row.spend_limit_cents === undefined ? null : num(row.spend_limit_cents),
  maxRentalHours: row.max_rental_hours === null || row.max_rental_hours === undefined ? null : num(row.max_rental_hours),
});

export class MikroIdentityLinkStore implements IdentityLinkStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async find(provider: string, subject: string, tenantId?: string): Promise<IdentityLink | null> {
    const [row] =
      tenantId === undefined
        ? await this.em.execute<Row[]>(`${LINK_SELECT} where l.provider = ? and l.subject = ? order by l.created_at, l.join_seq limit 1`, [provider, subject])
        : await this.em.execute<Row[]>(`${LINK_SELECT} where l.provider = ? and l.subject = ? and l.tenant_id = ?`, [provider, subject, tenantId]);
    return row ? toLink(row) : null;
  }

  async lockIdentity(provider: string, subject: string): Promise<void> {
    // a transaction-scoped advisory lock: nothing to clean up, released at commit or rollback
    await this.em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`identity:${provider}:${subject}`]);
  }

  async tenantsOf(provider: string, subject: string): Promise<(IdentityLink & { tenantName: string })[]> {
    const rows = await this.em.execute<Row[]>(
      `select x.*, t.name as tenant_name from (${LINK_SELECT} where l.provider = ? and l.subject = ?) x join tenants t on t.id = x.tenant_id order by x.created_at, x.join_seq`,
      [provider, subject],
    );
    return rows.map((row) => ({ ...toLink(row), tenantName: String(row.tenant_name) }));
  }

  async holderOf(tokenId: string): Promise<{ provider: string; subject: string } | null> {
    const [row] = await this.em.execute<Row[]>(`select provider, subject from session_identities where token_id = ?`, [tokenId]);
    return row ? { provider: String(row.provider), subject: String(row.subject) } : null;
  }

  async findByEmail(provider: string, email: string): Promise<IdentityLink | null> {
    const [row] = await this.em.execute<Row[]>(
      `${LINK_SELECT} where l.provider = ? and lower(l.email) = lower(?) order by l.created_at desc, l.join_seq desc limit 1`,
      [provider, email.trim()],
    );
    return row ? toLink(row) : null;
  }

  async add(link: IdentityLink): Promise<boolean> {
    // a link whose node ended is gone: its row makes way; a concurrent insert of the same identity waits for the
    // other transaction, then adds nothing
    await this.em.execute(
      `delete from identity_links l using tokens n where n.id = l.node_id and n.revoked_at is not null and l.provider = ? and l.subject = ? and l.tenant_id = ?`,
      [link.provider, link.subject, link.tenantId],
    );
    const rows = await this.em.execute<Row[]>(
      `insert into identity_links (${LINK_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing returning provider`,
      [link.id, link.provider, link.subject, link.tenantId, link.email, link.login, link.linkedByTokenId, link.createdAt, link.nodeId],
    );
    return rows.length === 1;
  }

  async listForTenant(tenantId: string, options: { lock?: boolean } = {}): Promise<IdentityLink[]> {
    // locked first, then read by a statement of its own: it sees what a transaction that held the locks committed
    if (options.lock) await this.em.execute(`select id from identity_links where tenant_id = ? order by id for update`, [tenantId]);
    const rows = await this.em.execute<Row[]>(`${LINK_SELECT} where l.tenant_id = ? order by l.created_at, l.join_seq`, [tenantId]);
    return rows.map(toLink);
  }

  async remove(tenantId: string, id: string): Promise<boolean> {
    const rows = await this.em.execute<Row[]>(`delete from identity_links where tenant_id = ? and id = ? returning id`, [tenantId, id]);
    return rows.length === 1;
  }

  async recordSession(tokenId: string, provider: string, subject: string): Promise<void> {
    await this.em.execute(`insert into session_identities (token_id, provider, subject) values (?, ?, ?)`, [tokenId, provider, subject]);
  }

  async liveSessions(provider: string, subject: string, now: Date): Promise<{ tenantId: string; tokenId: string }[]> {
    const rows = await this.em.execute<Row[]>(
      `select t.tenant_id, t.id from session_identities s join tokens t on t.id = s.token_id
        where s.provider = ? and s.subject = ? and t.kind = 'session' and t.revoked_at is null and (t.expires_at is null or t.expires_at > ?)
        order by t.id`,
      [provider, subject, now],
    );
    return rows.map((row) => ({ tenantId: String(row.tenant_id), tokenId: String(row.id) }));
  }
}

const FLOW_COLUMNS = 'id, provider, device_code_digest, status, interval_seconds, expires_at, last_polled_at, tenant_id, created_at';

const toFlow = (row: Row): DeviceFlow => ({
  id: String(row.id),
  provider: String(row.provider),
  deviceCodeDigest: String(row.device_code_digest),
  status: row.status as DeviceFlowStatus,
  intervalSeconds: num(row.interval_seconds),
  expiresAt: date(row.expires_at),
  lastPolledAt: dateOrNull(row.last_polled_at),
  tenantId: textOrNull(row.tenant_id),
  createdAt: date(row.created_at),
});

export class MikroDeviceFlowStore implements DeviceFlowStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(f: DeviceFlow): Promise<void> {
    await this.em.execute(`insert into device_flows (${FLOW_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      f.id, f.provider, f.deviceCodeDigest, f.status, f.intervalSeconds, f.expiresAt, f.lastPolledAt, f.tenantId, f.createdAt,
    ]);
  }

  async lockByDigest(digest: string): Promise<DeviceFlow | null> {
    const [row] = await this.em.execute<Row[]>(`select ${FLOW_COLUMNS} from device_flows where device_code_digest = ? for update`, [digest]);
    return row ? toFlow(row) : null;
  }

  async update(f: DeviceFlow): Promise<void> {
    await this.em.execute(`update device_flows set status = ?, interval_seconds = ?, last_polled_at = ?, tenant_id = ? where id = ?`, [
      f.status, f.intervalSeconds, f.lastPolledAt, f.tenantId, f.id,
    ]);
  }
}

export class MikroAuthFailureStore implements AuthFailureStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async lockEmail(emailKey: string): Promise<void> {
    // a transaction-scoped advisory lock: nothing to clean up, released at commit or rollback
    await this.em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`auth-failures:${emailKey}`]);
  }

  async count(emailKey: string, clientKey: string, kind: 'password' | 'code', since: Date): Promise<{ email: FailureCount; client: FailureCount }> {
    const [row] = await this.em.execute<Row[]>(
      `select count(*) as n, min(at) as oldest,
              count(*) filter (where client_key = ?) as client_n, min(at) filter (where client_key = ?) as client_oldest
         from auth_failures where email_key = ? and kind = ? and at > ?`,
      [clientKey, clientKey, emailKey, kind, since],
    );
    return {
      email: { count: row ? num(row.n) : 0, oldest: row ? dateOrNull(row.oldest) : null },
      client: { count: row ? num(row.client_n) : 0, oldest: row ? dateOrNull(row.client_oldest) : null },
    };
  }

  async record(emailKey: string, clientKey: string, kind: 'password' | 'code', at: Date): Promise<string> {
    const [row] = await this.em.execute<Row[]>(`insert into auth_failures (email_key, client_key, kind, at) values (?, ?, ?, ?) returning id`, [emailKey, clientKey, kind, at]);
    return String(row!.id);
  }

  async forget(id: string): Promise<void> {
    await this.em.execute(`delete from auth_failures where id = ?`, [id]);
  }

  async prune(before: Date): Promise<void> {
    await this.em.execute(`delete from auth_failures where at <= ?`, [before]);
  }
}

export class MikroMailSendStore implements MailSendStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async lockAddress(address: string): Promise<void> {
    await this.em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`mail-sends:${address}`]);
  }

  async countSince(address: string, since: Date): Promise<FailureCount> {
    const [row] = await this.em.execute<Row[]>(`select count(*) as n, min(at) as oldest from mail_sends where address = ? and at > ?`, [address, since]);
    return { count: row ? num(row.n) : 0, oldest: row ? dateOrNull(row.oldest) : null };
  }

  async record(address: string, at: Date): Promise<void> {
    await this.em.execute(`insert into mail_sends (address, at) values (?, ?)`, [address, at]);
  }

  async prune(before: Date): Promise<void> {
    await this.em.execute(`delete from mail_sends where at <= ?`, [before]);
  }
}
