import type { EntityManager } from '@mikro-orm/sql';
import type { RecoveryStore } from '../../../core/ports/recovery-storage.ts';
import type { Recovery, RecoveryOptions, RecoveryStatus } from '../../../core/recovery/recovery.ts';
import { date, dateOrNull, num, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = [
  'instance_id', 'tenant_id', 'status', 'max_attempts', 'attempts_left', 'gpu_type', 'gpu_count', 'min_cpus', 'min_ram_gb', 'min_disk_gb',
  'ceiling_per_gpu_cents', 'options', 'provider', 'region', 'replaces', 'replaced_by', 'left_volume_ids', 'failure', 'due_at', 'claimed_at', 'created_at',
] as const;
const SELECT = COLUMNS.join(', ');

const textList = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

const toRecovery = (row: Row): Recovery => ({
  instanceId: String(row.instance_id),
  tenantId: String(row.tenant_id),
  status: row.status as RecoveryStatus,
  maxAttempts: num(row.max_attempts),
  attemptsLeft: num(row.attempts_left),
  spec: {
    gpuType: String(row.gpu_type),
    gpuCount: num(row.gpu_count),
    minCpus: num(row.min_cpus),
    minRamGb: Number(row.min_ram_gb),
    minDiskGb: Number(row.min_disk_gb),
    ceilingPerGpuCents: num(row.ceiling_per_gpu_cents),
  },
  options: (typeof row.options === 'string' ? JSON.parse(row.options) : row.options) as RecoveryOptions,
  provider: String(row.provider),
  region: textOrNull(row.region),
  replaces: textOrNull(row.replaces),
  replacedBy: textOrNull(row.replaced_by),
  leftVolumeIds: textList(row.left_volume_ids),
  failure: textOrNull(row.failure),
  dueAt: dateOrNull(row.due_at),
  claimedAt: dateOrNull(row.claimed_at),
  createdAt: date(row.created_at),
});

export class MikroRecoveryStore implements RecoveryStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(r: Recovery): Promise<void> {
    const marks = COLUMNS.map((column) => (column === 'options' ? '?::jsonb' : column === 'left_volume_ids' ? '?::text[]' : '?')).join(', ');
    const { spec } = r;
    await this.em.execute(`insert into instance_recoveries (${SELECT}) values (${marks})`, [
      r.instanceId, r.tenantId, r.status, r.maxAttempts, r.attemptsLeft, spec.gpuType, spec.gpuCount, spec.minCpus, spec.minRamGb, spec.minDiskGb,
      spec.ceilingPerGpuCents, JSON.stringify(r.options), r.provider, r.region, r.replaces, r.replacedBy, textArray(r.leftVolumeIds), r.failure, r.dueAt, r.claimedAt, r.createdAt,
    ]);
  }

  async lock(instanceId: string): Promise<Recovery | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from instance_recoveries where instance_id = ? for update`, [instanceId]);
    return row ? toRecovery(row) : null;
  }

  async markDue(instanceId: string, at: Date): Promise<boolean> {
    const rows = await this.em.execute<Row[]>(
      `update instance_recoveries set status = 'due', due_at = ? where instance_id = ? and status = 'watching' returning instance_id`,
      [at, instanceId],
    );
    return rows.length === 1;
  }

  async claimDue(now: Date, staleBefore: Date, limit: number, except: readonly string[]): Promise<Recovery[]> {
    const rows = await this.em.execute<Row[]>(
      `update instance_recoveries r set status = 'recovering', claimed_at = ?
        where r.instance_id in (
          select instance_id from instance_recoveries
           where (status = 'due' and instance_id <> all(?::text[])) or (status = 'recovering' and claimed_at < ?)
           order by due_at, instance_id
           limit ?
           for update skip locked)
        returning ${COLUMNS.map((column) => `r.${column}`).join(', ')}`,
      [now, textArray(except), staleBefore, limit],
    );
    return rows.map(toRecovery).sort((a, b) => (a.dueAt?.getTime() ?? 0) - (b.dueAt?.getTime() ?? 0) || (a.instanceId < b.instanceId ? -1 : 1));
  }

  async update(r: Recovery): Promise<void> {
    await this.em.execute(
      `update instance_recoveries set status = ?, replaced_by = ?, failure = ?, due_at = ?, claimed_at = ? where instance_id = ?`,
      [r.status, r.replacedBy, r.failure, r.dueAt, r.claimedAt, r.instanceId],
    );
  }

  async chainNodes(instanceId: string): Promise<string[]> {
    const rows = await this.em.execute<{ node_id: string }[]>(
      `with recursive chain (instance_id, replaces) as (
         select instance_id, replaces from instance_recoveries where instance_id = ?
         union all
         select r.instance_id, r.replaces from instance_recoveries r join chain c on r.instance_id = c.replaces)
       select distinct i.node_id from chain c join instances i on i.id = c.instance_id`,
      [instanceId],
    );
    return rows.map((row) => row.node_id);
  }
}
