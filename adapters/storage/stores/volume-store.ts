import type { EntityManager } from '@mikro-orm/sql';
import type { VolumeStore } from '../../../core/ports/storage.ts';
import type { Volume, VolumeStatus } from '../../../core/volumes/volume.ts';
import { date, dateOrNull, num, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS =
  'id, tenant_id, name, size_gb, provider, region, status, upstream_id, attached_instance_id, price_usd_per_gb_month, price_usd_per_gb_hour, billed_hours, created_at, deleted_at, token_id, ends_at, commitment_cents';

const toVolume = (row: Row): Volume => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  name: String(row.name),
  sizeGb: num(row.size_gb),
  provider: String(row.provider),
  region: String(row.region),
  status: row.status as VolumeStatus,
  upstreamId: textOrNull(row.upstream_id),
  attachedInstanceId: textOrNull(row.attached_instance_id),
  priceUsdPerGbMonth: String(row.price_usd_per_gb_month),
  priceUsdPerGbHour: String(row.price_usd_per_gb_hour),
  billedHours: num(row.billed_hours),
  createdAt: date(row.created_at),
  deletedAt: dateOrNull(row.deleted_at),
  tokenId: textOrNull(row.token_id),
  endsAt: dateOrNull(row.ends_at),
  commitmentCents: num(row.commitment_cents),
});

export class MikroVolumeStore implements VolumeStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(v: Volume): Promise<void> {
    await this.em.execute(`insert into volumes (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      v.id, v.tenantId, v.name, v.sizeGb, v.provider, v.region, v.status, v.upstreamId, v.attachedInstanceId,
      v.priceUsdPerGbMonth, v.priceUsdPerGbHour, v.billedHours, v.createdAt, v.deletedAt, v.tokenId, v.endsAt, v.commitmentCents,
    ]);
  }

  async get(tenantId: string, volumeId: string): Promise<Volume | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from volumes where tenant_id = ? and id = ?`, [tenantId, volumeId]);
    return row ? toVolume(row) : null;
  }

  async lockMany(tenantId: string, volumeIds: readonly string[]): Promise<Volume[]> {
    if (volumeIds.length === 0) return [];
    // in id order, like every other lock of several rows
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from volumes where tenant_id = ? and id = any(?::text[]) order by id for update`, [
      tenantId,
      textArray(volumeIds),
    ]);
    return rows.map(toVolume);
  }

  async list(tenantId: string): Promise<Volume[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from volumes where tenant_id = ? and status <> 'deleted' order by created_at desc, id desc`, [tenantId]);
    return rows.map(toVolume);
  }

  async update(v: Volume): Promise<void> {
    await this.em.execute(
      `update volumes set name = ?, status = ?, upstream_id = ?, attached_instance_id = ?, billed_hours = ?, deleted_at = ?, commitment_cents = ? where id = ?`,
      [v.name, v.status, v.upstreamId, v.attachedInstanceId, v.billedHours, v.deletedAt, v.commitmentCents, v.id],
    );
  }

  async attach(volumeIds: readonly string[], instanceId: string): Promise<void> {
    if (volumeIds.length === 0) return;
    await this.em.execute(`update volumes set status = 'attached', attached_instance_id = ? where id = any(?::text[])`, [instanceId, textArray(volumeIds)]);
  }

  async detachFrom(instanceId: string): Promise<void> {
    await this.em.execute(`update volumes set status = 'available', attached_instance_id = null where attached_instance_id = ? and status = 'attached'`, [instanceId]);
  }

  async creatingAt(provider: string): Promise<Volume[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from volumes where status = 'creating' and provider = ? order by created_at, id`, [provider]);
    return rows.map(toVolume);
  }

  async byIds(volumeIds: readonly string[]): Promise<Volume[]> {
    if (volumeIds.length === 0) return [];
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from volumes where id = any(?::text[])`, [textArray(volumeIds)]);
    return rows.map(toVolume);
  }

  async lockById(volumeId: string): Promise<Volume | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from volumes where id = ? for update`, [volumeId]);
    return row ? toVolume(row) : null;
  }

  async withHoursToRecord(now: Date): Promise<Volume[]> {
    // started hours from creation to deletion (or now, or the end of its window when that came first) beyond those
    // recorded: ceil(elapsed / 1 h) > billed_hours
    const rows = await this.em.execute<Row[]>(
      `select ${COLUMNS} from volumes
        where status in ('available', 'attached', 'deleted')
          and ceil(extract(epoch from (least(coalesce(deleted_at, ?), ends_at) - created_at)) / 3600) > billed_hours
        order by tenant_id, id`,
      [now],
    );
    return rows.map(toVolume);
  }

  async heldGb(tenantId: string): Promise<number> {
    const [row] = await this.em.execute<Row[]>(`select coalesce(sum(size_gb), 0) as gb from volumes where tenant_id = ? and status in ('creating', 'available', 'attached')`, [tenantId]);
    return num(row!.gb);
  }

  async expired(now: Date, limit: number): Promise<Volume[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${COLUMNS} from volumes where ends_at <= ? and status in ('available', 'attached') order by ends_at, id limit ?`,
      [now, limit],
    );
    return rows.map(toVolume);
  }
}
