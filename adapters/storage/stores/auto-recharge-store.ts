import type { EntityManager } from '@mikro-orm/sql';
import type { AutoRechargePayment, AutoRechargePaymentStatus } from '../../../core/billing/account.ts';
import type { AutoRechargeStore } from '../../../core/ports/storage.ts';
import { date, num, textOrNull, type Row } from './sql-rows.ts';

const toPayment = (row: Row): AutoRechargePayment => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  amountCents: num(row.amount_cents),
  status: row.status as AutoRechargePaymentStatus,
  error: textOrNull(row.error),
  createdAt: date(row.created_at),
});

export class MikroAutoRechargeStore implements AutoRechargeStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async candidates(now: Date): Promise<string[]> {
    // balance under the threshold, or (what leaves available funds under it) an hour block due and unpaid
    const rows = await this.em.execute<Row[]>(
      `select a.tenant_id from accounts a
        where a.auto_recharge_enabled and not a.auto_recharge_suspended and a.card_payment_method_id is not null
          and (a.balance_cents - coalesce((select sum(u.amount_cents) from usage_records u where u.tenant_id = a.tenant_id and u.settled_at is null), 0) < a.auto_recharge_threshold_cents
               or exists (select 1 from instances i
                           where i.tenant_id = a.tenant_id and i.status in ('provisioning', 'running', 'rebooting') and i.paid_until <= ?
                             and i.paid_until < coalesce(least(i.removal_scheduled_at, i.window_ends_at), 'infinity'::timestamptz)))
        order by a.tenant_id`,
      [now],
    );
    return rows.map((row) => String(row.tenant_id));
  }

  async countSince(tenantId: string, since: Date): Promise<number> {
    const [row] = await this.em.execute<Row[]>(
      `select count(*) as n from auto_recharge_payments where tenant_id = ? and status in ('pending', 'succeeded') and created_at > ?`,
      [tenantId, since],
    );
    return row ? num(row.n) : 0;
  }

  async claim(p: AutoRechargePayment): Promise<boolean> {
    const rows = await this.em.execute<Row[]>(
      `insert into auto_recharge_payments (id, tenant_id, amount_cents, status, error, created_at)
       values (?, ?, ?, ?, ?, ?) on conflict do nothing returning id`,
      [p.id, p.tenantId, p.amountCents, p.status, p.error, p.createdAt],
    );
    return rows.length === 1;
  }

  async decide(paymentId: string, status: 'succeeded' | 'failed', error: string | null, at: Date): Promise<void> {
    await this.em.execute(`update auto_recharge_payments set status = ?, error = ?, decided_at = ? where id = ?`, [status, error, at, paymentId]);
  }

  async pending(): Promise<AutoRechargePayment[]> {
    const rows = await this.em.execute<Row[]>(
      `select id, tenant_id, amount_cents, status, error, created_at from auto_recharge_payments where status = 'pending' order by created_at, id`,
    );
    return rows.map(toPayment);
  }

  async list(tenantId: string, limit: number): Promise<AutoRechargePayment[]> {
    const rows = await this.em.execute<Row[]>(
      `select id, tenant_id, amount_cents, status, error, created_at from auto_recharge_payments where tenant_id = ? order by created_at desc, id desc limit ?`,
      [tenantId, limit],
    );
    return rows.map(toPayment);
  }
}
