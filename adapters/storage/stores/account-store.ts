import type { EntityManager } from '@mikro-orm/sql';
import type { Account, Pause, PauseKind } from '../../../core/billing/account.ts';
import type { AccountStore } from '../../../core/ports/storage.ts';
import { date, num, numOrNull, textOrNull, type Row } from './sql-rows.ts';

const toAccount = (row: Row): Account => ({
  tenantId: String(row.tenant_id),
  balanceCents: num(row.balance_cents),
  pause: row.pause_kind ? { kind: row.pause_kind as PauseKind, reason: textOrNull(row.pause_reason), at: date(row.paused_at) } : null,
  maxBurnCentsPerHour: numOrNull(row.max_burn_cents_per_hour),
});

const COLUMNS = 'tenant_id, balance_cents, pause_kind, pause_reason, paused_at, max_burn_cents_per_hour';

export class MikroAccountStore implements AccountStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async lock(tenantId: string, now: Date): Promise<Account | null> {
    await this.em.execute(
      `insert into accounts (tenant_id, created_at) select id, ? from tenants where id = ? on conflict (tenant_id) do nothing`,
      [now, tenantId],
    );
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from accounts where tenant_id = ? for update`, [tenantId]);
    return row ? toAccount(row) : null;
  }

  async get(tenantId: string): Promise<Account | null> {
    const [row] = await this.em.execute<Row[]>(
      `select t.id as tenant_id, coalesce(a.balance_cents, 0) as balance_cents, a.pause_kind, a.pause_reason, a.paused_at, a.max_burn_cents_per_hour
         from tenants t left join accounts a on a.tenant_id = t.id where t.id = ?`,
      [tenantId],
    );
    return row ? toAccount(row) : null;
  }

  async setPause(tenantId: string, pause: Pause | null): Promise<void> {
    await this.em.execute(`update accounts set pause_kind = ?, pause_reason = ?, paused_at = ? where tenant_id = ?`, [
      pause?.kind ?? null,
      pause?.reason ?? null,
      pause?.at ?? null,
      tenantId,
    ]);
  }

  async list(): Promise<Account[]> {
    const rows = await this.em.execute<Row[]>(
      `select t.id as tenant_id, coalesce(a.balance_cents, 0) as balance_cents, a.pause_kind, a.pause_reason, a.paused_at, a.max_burn_cents_per_hour
         from tenants t left join accounts a on a.tenant_id = t.id order by t.created_at, t.id`,
    );
    return rows.map(toAccount);
  }
}

