import type { EntityManager } from '@mikro-orm/sql';
import type { SearchTerms } from '../../../core/market/search-terms.ts';
import type { QuoteStore } from '../../../core/ports/quote-storage.ts';
import type { RentalQuote } from '../../../core/quotes/quote.ts';
import { date, num, numOrNull, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = [
  'id', 'tenant_id', 'token_id', 'node_id', 'search', 'termination_hours', 'name', 'rate_cents_per_hour', 'per_gpu_cents',
  'charged_now_cents', 'commitment_cents', 'cap_remaining_after_cents', 'created_at', 'expires_at', 'instance_id',
] as const;
const SELECT = COLUMNS.join(', ');

const toQuote = (row: Row): RentalQuote => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  tokenId: String(row.token_id),
  nodeId: String(row.node_id),
  search: row.search === null || row.search === undefined ? null : ((typeof row.search === 'string' ? JSON.parse(row.search) : row.search) as SearchTerms),
  terminationHours: numOrNull(row.termination_hours),
  name: textOrNull(row.name),
  rateCentsPerHour: num(row.rate_cents_per_hour),
  perGpuCents: num(row.per_gpu_cents),
  chargedNowCents: num(row.charged_now_cents),
  commitmentCents: num(row.commitment_cents),
  capRemainingAfterCents: numOrNull(row.cap_remaining_after_cents),
  createdAt: date(row.created_at),
  expiresAt: date(row.expires_at),
  instanceId: textOrNull(row.instance_id),
});

export class MikroQuoteStore implements QuoteStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(q: RentalQuote): Promise<void> {
    const marks = COLUMNS.map((column) => (column === 'search' ? '?::jsonb' : '?')).join(', ');
    await this.em.execute(`insert into quotes (${SELECT}) values (${marks})`, [
      q.id, q.tenantId, q.tokenId, q.nodeId, q.search === null ? null : JSON.stringify(q.search), q.terminationHours, q.name, q.rateCentsPerHour,
      q.perGpuCents, q.chargedNowCents, q.commitmentCents, q.capRemainingAfterCents, q.createdAt, q.expiresAt, q.instanceId,
    ]);
  }

  async get(tenantId: string, quoteId: string): Promise<RentalQuote | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from quotes where tenant_id = ? and id = ?`, [tenantId, quoteId]);
    return row ? toQuote(row) : null;
  }

  async lock(tenantId: string, quoteId: string): Promise<RentalQuote | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from quotes where tenant_id = ? and id = ? for update`, [tenantId, quoteId]);
    return row ? toQuote(row) : null;
  }

  async markUsed(quoteId: string, instanceId: string): Promise<void> {
    await this.em.execute(`update quotes set instance_id = ? where id = ?`, [instanceId, quoteId]);
  }

  async prune(before: Date, limit: number): Promise<number> {
    // a quote being rented holds its row: skipped, it is either used now or pruned by a later pass
    const rows = await this.em.execute<{ id: string }[]>(
      `delete from quotes where id in (
         select id from quotes where instance_id is null and expires_at < ? order by expires_at limit ? for update skip locked)
       returning id`,
      [before, limit],
    );
    return rows.length;
  }
}
