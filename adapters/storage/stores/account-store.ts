import type { EntityManager } from '@mikro-orm/sql';
import type { Account, AutoRecharge, CardOnFile, Pause, PauseKind } from '../../../core/billing/account.ts';
import type { AccountStore } from '../../../core/ports/storage.ts';
import { date, num, numOrNull, textOrNull, type Row } from './sql-rows.ts';

const toAccount = (row: Row): Account => ({
  tenantId: String(row.tenant_id),
  balanceCents: num(row.balance_cents),
  pause: row.pause_kind ? { kind: row.pause_kind as PauseKind, reason: textOrNull(row.pause_reason), at: date(row.paused_at) } : null,
  maxBurnCentsPerHour: numOrNull(row.max_burn_cents_per_hour),
  paymentCustomerId: textOrNull(row.payment_customer_id),
  card: row.card_payment_method_id
    ? { paymentMethodId: String(row.card_payment_method_id), brand: String(row.card_brand ?? ''), last4: String(row.card_last4 ?? '') }
    : null,
  autoRecharge: {
    enabled: row.auto_recharge_enabled === true,
    thresholdCents: numOrNull(row.auto_recharge_threshold_cents) ?? 0,
    amountCents: numOrNull(row.auto_recharge_amount_cents) ?? 0,
    lastError: textOrNull(row.auto_recharge_last_error),
    suspended: row.auto_recharge_suspended === true,
  },
});

const PAYMENT_COLUMNS =
  'payment_customer_id, card_payment_method_id, card_brand, card_last4, auto_recharge_enabled, auto_recharge_threshold_cents, auto_recharge_amount_cents, auto_recharge_last_error, auto_recharge_suspended';
const COLUMNS = `tenant_id, balance_cents, pause_kind, pause_reason, paused_at, max_burn_cents_per_hour, ${PAYMENT_COLUMNS}`;
const JOINED = `t.id as tenant_id, coalesce(a.balance_cents, 0) as balance_cents, a.pause_kind, a.pause_reason, a.paused_at, a.max_burn_cents_per_hour,
  ${PAYMENT_COLUMNS.split(', ').map((c) => `a.${c}`).join(', ')}`;

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
      `select ${JOINED} from tenants t left join accounts a on a.tenant_id = t.id where t.id = ?`,
      [tenantId],
    );
    return row ? toAccount(row) : null;
  }

  async lowBalanceCandidates(now: Date, hours: number): Promise<string[]> {
    const rows = await this.em.execute<Row[]>(
      `select a.tenant_id from accounts a
         left join lateral (
           select coalesce(sum(i.rate_cents_per_hour), 0) as burn, coalesce(bool_or(i.paid_until < ?), false) as overdue
             from instances i where i.tenant_id = a.tenant_id and i.status in ('provisioning', 'running', 'rebooting')) b on true
        where a.balance_low_at is not null
           or (b.burn > 0 and (b.overdue or a.balance_cents < greatest(2 * b.burn * ?, case when a.auto_recharge_enabled then a.auto_recharge_threshold_cents else 0 end)))
        order by a.tenant_id`,
      [now, hours],
    );
    return rows.map((row) => String(row.tenant_id));
  }

  async balanceLowSince(tenantId: string): Promise<Date | null> {
    const [row] = await this.em.execute<Row[]>(`select balance_low_at from accounts where tenant_id = ?`, [tenantId]);
    return row?.balance_low_at ? date(row.balance_low_at) : null;
  }

  async markBalanceLow(tenantId: string, at: Date | null): Promise<void> {
    await this.em.execute(`update accounts set balance_low_at = ? where tenant_id = ?`, [at, tenantId]);
  }

  async setPause(tenantId: string, pause: Pause | null): Promise<void> {
    await this.em.execute(`update accounts set pause_kind = ?, pause_reason = ?, paused_at = ? where tenant_id = ?`, [
      pause?.kind ?? null,
      pause?.reason ?? null,
      pause?.at ?? null,
      tenantId,
    ]);
  }

  async setCard(tenantId: string, customerId: string | null, card: CardOnFile | null): Promise<void> {
    await this.em.execute(
      `update accounts set payment_customer_id = coalesce(?, payment_customer_id), card_payment_method_id = ?, card_brand = ?, card_last4 = ? where tenant_id = ?`,
      [customerId, card?.paymentMethodId ?? null, card?.brand ?? null, card?.last4 ?? null, tenantId],
    );
  }

  async setAutoRecharge(tenantId: string, settings: AutoRecharge): Promise<void> {
    await this.em.execute(
      `update accounts set auto_recharge_enabled = ?, auto_recharge_threshold_cents = ?, auto_recharge_amount_cents = ?,
              auto_recharge_last_error = ?, auto_recharge_suspended = ? where tenant_id = ?`,
      [settings.enabled, settings.thresholdCents, settings.amountCents, settings.lastError, settings.suspended, tenantId],
    );
  }

  async list(): Promise<Account[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${JOINED} from tenants t left join accounts a on a.tenant_id = t.id order by t.created_at, t.id`,
    );
    return rows.map(toAccount);
  }
}

