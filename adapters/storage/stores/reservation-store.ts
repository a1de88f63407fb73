import type { EntityManager } from '@mikro-orm/sql';
import type { TemplateSearch } from '../../../core/catalog/records.ts';
import type { ReservationStore } from '../../../core/ports/reservation-storage.ts';
import type { Reservation, ReservationView, StoredReservationStatus } from '../../../core/reservations/reservation.ts';
import type { InstanceStatus } from '../../../core/rentals/instance.ts';
import { date, dateOrNull, num, numOrNull, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = [
  'id', 'tenant_id', 'token_id', 'name', 'status', 'starts_at', 'hours', 'ends_at', 'node_id', 'search', 'gpu_type', 'gpu_count',
  'quoted_per_gpu_cents', 'max_price_per_gpu_cents', 'rate_cents_per_hour', 'commitment_cents', 'template_id', 'ssh_key_id',
  'idempotency_key', 'request_digest', 'instance_id', 'failure', 'claimed_at', 'created_at',
] as const;
const SELECT = COLUMNS.map((column) => `r.${column}`).join(', ');
/** With what its rental has become: a reservation is answered with it. */
const VIEW = `select ${SELECT}, i.status as rental_status, i.failure as rental_failure from reservations r left join instances i on i.id = r.instance_id`;

const searchOf = (value: unknown): TemplateSearch | null => {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as TemplateSearch;
};

const toReservation = (row: Row): Reservation => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  tokenId: String(row.token_id),
  name: String(row.name),
  status: row.status as StoredReservationStatus,
  startsAt: date(row.starts_at),
  hours: num(row.hours),
  endsAt: date(row.ends_at),
  nodeId: textOrNull(row.node_id),
  search: searchOf(row.search),
  gpuType: String(row.gpu_type),
  gpuCount: num(row.gpu_count),
  quotedPerGpuCents: num(row.quoted_per_gpu_cents),
  maxPricePerGpuCents: numOrNull(row.max_price_per_gpu_cents),
  rateCentsPerHour: num(row.rate_cents_per_hour),
  commitmentCents: num(row.commitment_cents),
  templateId: textOrNull(row.template_id),
  sshKeyId: textOrNull(row.ssh_key_id),
  idempotencyKey: textOrNull(row.idempotency_key),
  requestDigest: String(row.request_digest),
  instanceId: textOrNull(row.instance_id),
  failure: textOrNull(row.failure),
  claimedAt: dateOrNull(row.claimed_at),
  createdAt: date(row.created_at),
});

const toView = (row: Row): ReservationView => ({
  ...toReservation(row),
  rental: row.rental_status ? { status: row.rental_status as InstanceStatus, failure: textOrNull(row.rental_failure) } : null,
});

export class MikroReservationStore implements ReservationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(r: Reservation): Promise<void> {
    const marks = COLUMNS.map((column) => (column === 'search' ? '?::jsonb' : '?')).join(', ');
    await this.em.execute(`insert into reservations (${COLUMNS.join(', ')}) values (${marks})`, [
      r.id, r.tenantId, r.tokenId, r.name, r.status, r.startsAt, r.hours, r.endsAt, r.nodeId, r.search === null ? null : JSON.stringify(r.search),
      r.gpuType, r.gpuCount, r.quotedPerGpuCents, r.maxPricePerGpuCents, r.rateCentsPerHour, r.commitmentCents, r.templateId, r.sshKeyId,
      r.idempotencyKey, r.requestDigest, r.instanceId, r.failure, r.claimedAt, r.createdAt,
    ]);
  }

  async get(tenantId: string, reservationId: string): Promise<ReservationView | null> {
    const [row] = await this.em.execute<Row[]>(`${VIEW} where r.tenant_id = ? and r.id = ?`, [tenantId, reservationId]);
    return row ? toView(row) : null;
  }

  async lock(tenantId: string, reservationId: string): Promise<Reservation | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from reservations r where r.tenant_id = ? and r.id = ? for update`, [tenantId, reservationId]);
    return row ? toReservation(row) : null;
  }

  async lockOpenOf(tenantId: string, tokenIds: readonly string[]): Promise<Reservation[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${SELECT} from reservations r where r.tenant_id = ? and r.token_id = any(?::text[]) and r.status in ('scheduled', 'starting', 'active') order by r.id for update`,
      [tenantId, textArray(tokenIds)],
    );
    return rows.map(toReservation);
  }

  async byIdempotencyKey(tenantId: string, key: string): Promise<ReservationView | null> {
    const [row] = await this.em.execute<Row[]>(`${VIEW} where r.tenant_id = ? and r.idempotency_key = ?`, [tenantId, key]);
    return row ? toView(row) : null;
  }

  async list(tenantId: string, limit: number): Promise<ReservationView[]> {
    const rows = await this.em.execute<Row[]>(`${VIEW} where r.tenant_id = ? order by r.created_at desc, r.id desc limit ?`, [tenantId, limit]);
    return rows.map(toView);
  }

  async scheduledUntil(tenantId: string, until: Date, limit: number): Promise<ReservationView[]> {
    const rows = await this.em.execute<Row[]>(
      `${VIEW} where r.tenant_id = ? and r.status = 'scheduled' and r.starts_at <= ? order by r.starts_at, r.id limit ?`,
      [tenantId, until, limit],
    );
    return rows.map(toView);
  }

  async claimDue(now: Date, staleBefore: Date, limit: number, except: readonly string[], busyProviders: readonly string[] = []): Promise<Reservation[]> {
    const rows = await this.em.execute<Row[]>(
      `update reservations r set status = 'starting', claimed_at = ?
        where r.id in (
          select id from reservations
           where status in ('scheduled', 'starting') and starts_at <= ?
             and ((status = 'scheduled' and id <> all(?::text[])) or (status = 'starting' and claimed_at < ?))
             and (node_id is null or split_part(node_id, ':', 1) <> all(?::text[]))
           order by starts_at, id
           limit ?
           for update skip locked)
        returning ${SELECT}`,
      [now, now, textArray(except), staleBefore, textArray(busyProviders), limit],
    );
    return rows.map(toReservation).sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime() || (a.id < b.id ? -1 : 1));
  }

  async expiredMakers(now: Date, limit: number): Promise<{ tenantId: string; tokenId: string }[]> {
    const rows = await this.em.execute<Row[]>(
      `select distinct r.tenant_id, r.token_id
         from reservations r
         join tokens t on t.id = r.token_id
         join tokens a on a.id = t.id or a.id = any(t.ancestor_ids)
        where r.status = 'scheduled' and a.expires_at <= ?
        order by r.tenant_id, r.token_id
        limit ?`,
      [now, limit],
    );
    return rows.map((row) => ({ tenantId: String(row.tenant_id), tokenId: String(row.token_id) }));
  }

  async update(r: Reservation): Promise<void> {
    await this.em.execute(
      `update reservations set status = ?, rate_cents_per_hour = ?, commitment_cents = ?, instance_id = ?, failure = ?, claimed_at = ? where id = ?`,
      [r.status, r.rateCentsPerHour, r.commitmentCents, r.instanceId, r.failure, r.claimedAt, r.id],
    );
  }
}
