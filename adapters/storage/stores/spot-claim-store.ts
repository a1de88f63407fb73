import type { EntityManager } from '@mikro-orm/sql';
import type { TemplateSearch } from '../../../core/catalog/records.ts';
import type { SpotClaimStore } from '../../../core/ports/spot-claim-storage.ts';
import type { InstanceStatus } from '../../../core/rentals/instance.ts';
import type { SpotClaim, SpotClaimView, StoredSpotClaimStatus } from '../../../core/spot/spot-claim.ts';
import { date, dateOrNull, num, numOrNull, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = [
  'id', 'tenant_id', 'token_id', 'name', 'status', 'node_id', 'search', 'gpu_type', 'gpu_count', 'bid_cents_per_gpu_hour', 'hours', 'ends_at',
  'commitment_cents', 'template_id', 'ssh_key_id', 'instance_id', 'machines', 'preemptions', 'ended_charged_cents', 'last_error', 'claimed_at',
  'created_at', 'ended_at',
] as const;
const SELECT = COLUMNS.map((column) => `c.${column}`).join(', ');
/** With its current (or last) machine: a claim is answered with it. */
const VIEW = `select ${SELECT}, i.status as rental_status, i.charged_cents as rental_charged_cents, i.preempted_at as rental_preempted_at
  from spot_claims c left join instances i on i.id = c.instance_id`;

const searchOf = (value: unknown): TemplateSearch | null => {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as TemplateSearch;
};

const toClaim = (row: Row): SpotClaim => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  tokenId: String(row.token_id),
  name: String(row.name),
  status: row.status as StoredSpotClaimStatus,
  nodeId: textOrNull(row.node_id),
  search: searchOf(row.search),
  gpuType: textOrNull(row.gpu_type),
  gpuCount: num(row.gpu_count),
  bidCentsPerGpuHour: num(row.bid_cents_per_gpu_hour),
  hours: numOrNull(row.hours),
  endsAt: dateOrNull(row.ends_at),
  commitmentCents: num(row.commitment_cents),
  templateId: textOrNull(row.template_id),
  sshKeyId: textOrNull(row.ssh_key_id),
  instanceId: textOrNull(row.instance_id),
  machines: num(row.machines),
  preemptions: num(row.preemptions),
  endedChargedCents: num(row.ended_charged_cents),
  lastError: textOrNull(row.last_error),
  claimedAt: dateOrNull(row.claimed_at),
  createdAt: date(row.created_at),
  endedAt: dateOrNull(row.ended_at),
});

const toView = (row: Row): SpotClaimView => ({
  ...toClaim(row),
  rental: row.rental_status
    ? { status: row.rental_status as InstanceStatus, chargedCents: num(row.rental_charged_cents), preemptedAt: dateOrNull(row.rental_preempted_at) }
    : null,
});

export class MikroSpotClaimStore implements SpotClaimStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(c: SpotClaim): Promise<void> {
    const marks = COLUMNS.map((column) => (column === 'search' ? '?::jsonb' : '?')).join(', ');
    await this.em.execute(`insert into spot_claims (${COLUMNS.join(', ')}) values (${marks})`, [
      c.id, c.tenantId, c.tokenId, c.name, c.status, c.nodeId, c.search === null ? null : JSON.stringify(c.search), c.gpuType, c.gpuCount,
      c.bidCentsPerGpuHour, c.hours, c.endsAt, c.commitmentCents, c.templateId, c.sshKeyId, c.instanceId, c.machines, c.preemptions,
      c.endedChargedCents, c.lastError, c.claimedAt, c.createdAt, c.endedAt,
    ]);
  }

  async get(tenantId: string, claimId: string): Promise<SpotClaimView | null> {
    const [row] = await this.em.execute<Row[]>(`${VIEW} where c.tenant_id = ? and c.id = ?`, [tenantId, claimId]);
    return row ? toView(row) : null;
  }

  async lock(tenantId: string, claimId: string): Promise<SpotClaim | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from spot_claims c where c.tenant_id = ? and c.id = ? for update`, [tenantId, claimId]);
    return row ? toClaim(row) : null;
  }

  async openOf(tenantId: string, tokenIds: readonly string[]): Promise<string[]> {
    const rows = await this.em.execute<{ id: string }[]>(
      `select id from spot_claims where tenant_id = ? and token_id = any(?::text[]) and status in ('pending', 'active') order by id`,
      [tenantId, textArray(tokenIds)],
    );
    return rows.map((row) => row.id);
  }

  async list(tenantId: string, limit: number): Promise<SpotClaimView[]> {
    const rows = await this.em.execute<Row[]>(`${VIEW} where c.tenant_id = ? order by c.created_at desc, c.id desc limit ?`, [tenantId, limit]);
    return rows.map(toView);
  }

  async claimOpen(now: Date, staleBefore: Date, limit: number, afterId: string, busyProviders: readonly string[] = []): Promise<SpotClaimView[]> {
    const rows = await this.em.execute<Row[]>(
      `with taken as (
         update spot_claims t set claimed_at = ?
          where t.id in (
            select s.id from spot_claims s left join instances m on m.id = s.instance_id
             where s.status in ('pending', 'active') and s.id > ?
               and (s.status = 'pending' or m.status not in ('provisioning', 'running', 'rebooting') or s.ends_at <= ?)
               and (s.claimed_at is null or s.claimed_at < ?)
               and (s.status <> 'pending' or s.node_id is null or split_part(s.node_id, ':', 1) <> all(?::text[]))
             order by s.id
             limit ?
             for update of s skip locked)
         returning t.id)
       ${VIEW} where c.id in (select id from taken) order by c.id`,
      [now, afterId, now, staleBefore, textArray(busyProviders), limit],
    );
    return rows.map(toView);
  }

  async update(c: SpotClaim): Promise<void> {
    await this.em.execute(
      `update spot_claims set status = ?, commitment_cents = ?, instance_id = ?, machines = ?, preemptions = ?, ended_charged_cents = ?, last_error = ?,
              claimed_at = ?, ended_at = ?
        where id = ?`,
      [c.status, c.commitmentCents, c.instanceId, c.machines, c.preemptions, c.endedChargedCents, c.lastError, c.claimedAt, c.endedAt, c.id],
    );
  }
}
