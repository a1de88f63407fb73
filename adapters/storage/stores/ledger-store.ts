import type { EntityManager } from '@mikro-orm/sql';
import type { LedgerEntry, LedgerKind, LedgerPosting } from '../../../core/billing/account.ts';
import type { LedgerStore } from '../../../core/ports/storage.ts';
import type { LedgerTally } from '../ledger-tally.ts';
import { date, num, textOrNull, type Row } from './sql-rows.ts';

const toEntry = (row: Row): LedgerEntry => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  kind: row.kind as LedgerKind,
  amountCents: num(row.amount_cents),
  balanceAfterCents: num(row.balance_after_cents),
  reference: textOrNull(row.reference),
  description: textOrNull(row.description),
  createdAt: date(row.created_at),
});

const COLUMNS = 'id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, created_at';

export class MikroLedgerStore implements LedgerStore {
  private readonly em: EntityManager;
  private readonly tally: LedgerTally;

  constructor(em: EntityManager, tally: LedgerTally) {
    this.em = em;
    this.tally = tally;
  }

  async post(posting: LedgerPosting, id: string): Promise<LedgerEntry | null> {
    // One statement: move the balance and append the entry, unless the key was posted before.
    const rows = await this.em.execute<Row[]>(
      `with moved as (
         update accounts set balance_cents = balance_cents + ?
          where tenant_id = ? and not exists (select 1 from ledger_entries where unique_key = ?)
          returning balance_cents
       )
       insert into ledger_entries (id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, unique_key, created_at)
       select ?, ?, ?, ?, moved.balance_cents, ?, ?, ?, ? from moved
       returning ${COLUMNS}`,
      [
        posting.amountCents,
        posting.tenantId,
        posting.uniqueKey,
        id,
        posting.tenantId,
        posting.kind,
        posting.amountCents,
        posting.reference,
        posting.description,
        posting.uniqueKey,
        posting.at,
      ],
    );
    if (!rows[0]) return null;
    this.tally.posted(posting.kind, posting.amountCents, 1);
    return toEntry(rows[0]);
  }

  async list(tenantId: string, limit: number): Promise<LedgerEntry[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from ledger_entries where tenant_id = ? order by seq desc limit ?`, [tenantId, limit]);
    return rows.map(toEntry);
  }

  async all(tenantId: string): Promise<LedgerEntry[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from ledger_entries where tenant_id = ? order by seq`, [tenantId]);
    return rows.map(toEntry);
  }
}
