import type { EntityManager } from '@mikro-orm/sql';
import type { Deposit, DepositKind, DepositStatus } from '../../../core/billing/account.ts';
import type { DepositStore } from '../../../core/ports/storage.ts';
import { date, dateOrNull, num, textOrNull, type Row } from './sql-rows.ts';

const toDeposit = (row: Row): Deposit => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  kind: row.kind as DepositKind,
  status: row.status as DepositStatus,
  amountCents: num(row.amount_cents),
  reference: textOrNull(row.reference),
  reason: textOrNull(row.reason),
  createdAt: date(row.created_at),
  decidedAt: dateOrNull(row.decided_at),
  sessionId: textOrNull(row.session_id),
  conflict: textOrNull(row.conflict),
});

const COLUMNS = 'id, tenant_id, kind, status, amount_cents, reference, reason, created_at, decided_at, session_id, conflict';
/** Deposits an operator decides: bank transfers, and checkouts whose payment conflicts with them. */
const FOR_OPERATOR = `(kind = 'bank_transfer' or conflict is not null)`;

export class MikroDepositStore implements DepositStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(d: Deposit): Promise<void> {
    await this.em.execute(
      `insert into deposits (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.id, d.tenantId, d.kind, d.status, d.amountCents, d.reference, d.reason, d.createdAt, d.decidedAt, d.sessionId, d.conflict],
    );
  }

  async lock(depositId: string): Promise<Deposit | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from deposits where id = ? for update`, [depositId]);
    return row ? toDeposit(row) : null;
  }

  async get(depositId: string): Promise<Deposit | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from deposits where id = ?`, [depositId]);
    return row ? toDeposit(row) : null;
  }

  async decide(depositId: string, status: DepositStatus, at: Date): Promise<void> {
    await this.em.execute(`update deposits set status = ?, decided_at = ? where id = ?`, [status, at, depositId]);
  }

  async attachSession(depositId: string, sessionId: string): Promise<void> {
    await this.em.execute(`update deposits set session_id = ? where id = ?`, [sessionId, depositId]);
  }

  async lockBySession(sessionId: string): Promise<Deposit | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from deposits where session_id = ? for update`, [sessionId]);
    return row ? toDeposit(row) : null;
  }

  async listForTenant(tenantId: string): Promise<Deposit[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from deposits where tenant_id = ? order by created_at desc, id desc`, [tenantId]);
    return rows.map(toDeposit);
  }

  async listByStatus(status: DepositStatus, kind?: DepositKind): Promise<Deposit[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${COLUMNS} from deposits where status = ? and (?::text is null or kind = ?) order by created_at, id`,
      [status, kind ?? null, kind ?? null],
    );
    return rows.map(toDeposit);
  }

  async fundRequests(status: DepositStatus): Promise<Deposit[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from deposits where status = ? and ${FOR_OPERATOR} order by created_at, id`, [status]);
    return rows.map(toDeposit);
  }

  async pendingCheckouts(): Promise<Deposit[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${COLUMNS} from deposits where status = 'pending' and kind = 'checkout' and conflict is null order by created_at, id`,
    );
    return rows.map(toDeposit);
  }

  async recordConflict(depositId: string, conflict: string): Promise<void> {
    await this.em.execute(`update deposits set conflict = ? where id = ?`, [conflict, depositId]);
  }

  async pendingCounts(tenantId?: string): Promise<Map<string, number>> {
    const rows = await this.em.execute<Row[]>(
      `select tenant_id, count(*) as n from deposits where status = 'pending' and ${FOR_OPERATOR} and (?::text is null or tenant_id = ?) group by tenant_id`,
      [tenantId ?? null, tenantId ?? null],
    );
    return new Map(rows.map((row) => [String(row.tenant_id), num(row.n)]));
  }
}
