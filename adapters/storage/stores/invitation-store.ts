import type { EntityManager } from '@mikro-orm/sql';
import type { Invitation, InvitationStatus } from '../../../core/invitations/invitation.ts';
import type { InvitationStore } from '../../../core/ports/invitation-storage.ts';
import type { Role } from '../../../core/tenancy/roles.ts';
import { date, dateOrNull, numOrNull, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = [
  'id', 'tenant_id', 'email', 'role', 'spend_limit_cents', 'max_rental_hours', 'code_digest', 'invited_by_token_id', 'parent_node_id',
  'status', 'mailed', 'expires_at', 'created_at', 'ended_at', 'accepted_by',
] as const;
const SELECT = COLUMNS.join(', ');

const toInvitation = (row: Row): Invitation => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  email: String(row.email),
  role: String(row.role) as Role,
  spendLimitCents: numOrNull(row.spend_limit_cents),
  maxRentalHours: numOrNull(row.max_rental_hours),
  codeDigest: String(row.code_digest),
  invitedByTokenId: String(row.invited_by_token_id),
  parentNodeId: textOrNull(row.parent_node_id),
  status: String(row.status) as InvitationStatus,
  mailed: Boolean(row.mailed),
  expiresAt: date(row.expires_at),
  createdAt: date(row.created_at),
  endedAt: dateOrNull(row.ended_at),
  acceptedBy: textOrNull(row.accepted_by),
});

export class MikroInvitationStore implements InvitationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(i: Invitation): Promise<void> {
    await this.em.execute(`insert into invitations (${SELECT}) values (${COLUMNS.map(() => '?').join(', ')})`, [
      i.id, i.tenantId, i.email, i.role, i.spendLimitCents, i.maxRentalHours, i.codeDigest, i.invitedByTokenId, i.parentNodeId,
      i.status, i.mailed, i.expiresAt, i.createdAt, i.endedAt, i.acceptedBy,
    ]);
  }

  async list(tenantId: string, limit: number): Promise<Invitation[]> {
    const rows = await this.em.execute<Row[]>(`select ${SELECT} from invitations where tenant_id = ? order by created_at desc, id desc limit ?`, [tenantId, limit]);
    return rows.map(toInvitation);
  }

  async lock(tenantId: string, invitationId: string): Promise<Invitation | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from invitations where tenant_id = ? and id = ? for update`, [tenantId, invitationId]);
    return row ? toInvitation(row) : null;
  }

  async lockByDigest(codeDigest: string): Promise<Invitation | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from invitations where code_digest = ? for update`, [codeDigest]);
    return row ? toInvitation(row) : null;
  }

  async update(i: Invitation): Promise<void> {
    await this.em.execute(`update invitations set status = ?, ended_at = ?, accepted_by = ? where id = ?`, [i.status, i.endedAt, i.acceptedBy, i.id]);
  }
}
