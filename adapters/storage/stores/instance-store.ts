import type { EntityManager } from '@mikro-orm/sql';
import type { Instance, InstanceRecovery, InstanceStatus, LaunchOutcome } from '../../../core/rentals/instance.ts';
import type { InstanceStore } from '../../../core/ports/storage.ts';
import { date, dateOrNull, num, numOrNull, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = [
  'id', 'tenant_id', 'token_id', 'node_id', 'provider', 'offer_id', 'name', 'status', 'gpu_type', 'gpu_count',
  'rate_cents_per_hour', 'created_at', 'started_at', 'paid_until', 'removal_scheduled_at', 'window_ends_at', 'terminated_at',
  'machine_id', 'ssh_host', 'ssh_port', 'idempotency_key', 'request_digest', 'charged_cents', 'commitment_cents', 'last_seen_at', 'failure', 'launch', 'image', 'template_id', 'ssh_key_id', 'volume_ids', 'ledger_note', 'minimum_minutes', 'preempted_at', 'ssh_user',
] as const;
/** With its managed recovery, when it has one: a lookup by primary key, so every read of instances answers it. */
const RECOVERY = `(select json_build_object('max_attempts', r.max_attempts, 'attempts_left', r.attempts_left, 'failure', r.failure,
  'replaces', r.replaces, 'replaced_by', r.replaced_by, 'left_volume_ids', r.left_volume_ids)
  from instance_recoveries r where r.instance_id = instances.id) as recovery`;
const SELECT = `${COLUMNS.join(', ')}, ${RECOVERY}`;

const recoveryOf = (value: unknown): InstanceRecovery | null => {
  if (value === null || value === undefined) return null;
  const r = (typeof value === 'string' ? JSON.parse(value) : value) as Row;
  return {
    maxAttempts: num(r.max_attempts),
    attemptsLeft: num(r.attempts_left),
    failure: textOrNull(r.failure),
    replaces: textOrNull(r.replaces),
    replacedBy: textOrNull(r.replaced_by),
    leftVolumeIds: Array.isArray(r.left_volume_ids) ? r.left_volume_ids.map(String) : [],
  };
};
const LIVE = `status in ('provisioning', 'running', 'rebooting', 'terminating')`;

const toInstance = (row: Row): Instance => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  tokenId: String(row.token_id),
  nodeId: String(row.node_id),
  provider: String(row.provider),
  offerId: String(row.offer_id),
  name: textOrNull(row.name),
  status: row.status as InstanceStatus,
  gpuType: String(row.gpu_type),
  gpuCount: num(row.gpu_count),
  rateCentsPerHour: num(row.rate_cents_per_hour),
  createdAt: date(row.created_at),
  startedAt: dateOrNull(row.started_at),
  paidUntil: date(row.paid_until),
  removalScheduledAt: dateOrNull(row.removal_scheduled_at),
  windowEndsAt: dateOrNull(row.window_ends_at),
  terminatedAt: dateOrNull(row.terminated_at),
  machineId: textOrNull(row.machine_id),
  sshHost: textOrNull(row.ssh_host),
  sshPort: numOrNull(row.ssh_port),
  idempotencyKey: textOrNull(row.idempotency_key),
  requestDigest: textOrNull(row.request_digest),
  chargedCents: num(row.charged_cents),
  commitmentCents: num(row.commitment_cents),
  lastSeenAt: dateOrNull(row.last_seen_at),
  failure: textOrNull(row.failure),
  launch: textOrNull(row.launch) as LaunchOutcome | null,
  image: textOrNull(row.image),
  templateId: textOrNull(row.template_id),
  sshKeyId: textOrNull(row.ssh_key_id),
  volumeIds: Array.isArray(row.volume_ids) ? row.volume_ids.map(String) : [],
  ledgerNote: textOrNull(row.ledger_note),
  minimumMinutes: num(row.minimum_minutes),
  preemptedAt: dateOrNull(row.preempted_at),
  sshUser: textOrNull(row.ssh_user),
  recovery: recoveryOf(row.recovery),
});

const values = (i: Instance): unknown[] => [
  i.id, i.tenantId, i.tokenId, i.nodeId, i.provider, i.offerId, i.name, i.status, i.gpuType, i.gpuCount,
  i.rateCentsPerHour, i.createdAt, i.startedAt, i.paidUntil, i.removalScheduledAt, i.windowEndsAt, i.terminatedAt,
  i.machineId, i.sshHost, i.sshPort, i.idempotencyKey, i.requestDigest, i.chargedCents, i.commitmentCents, i.lastSeenAt, i.failure, i.launch, i.image, i.templateId, i.sshKeyId, textArray(i.volumeIds), i.ledgerNote, i.minimumMinutes, i.preemptedAt, i.sshUser ?? null,
];

export class MikroInstanceStore implements InstanceStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(instance: Instance): Promise<void> {
    const marks = COLUMNS.map((column) => (column === 'volume_ids' ? '?::text[]' : '?')).join(', ');
    await this.em.execute(`insert into instances (${COLUMNS.join(', ')}) values (${marks})`, values(instance));
  }

  async get(tenantId: string, instanceId: string): Promise<Instance | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from instances where tenant_id = ? and id = ?`, [tenantId, instanceId]);
    return row ? toInstance(row) : null;
  }

  async lock(tenantId: string, instanceId: string): Promise<Instance | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from instances where tenant_id = ? and id = ? for update`, [tenantId, instanceId]);
    return row ? toInstance(row) : null;
  }

  async byIdempotencyKey(tenantId: string, key: string): Promise<Instance | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from instances where tenant_id = ? and idempotency_key = ?`, [tenantId, key]);
    return row ? toInstance(row) : null;
  }

  async list(tenantId: string, limit: number): Promise<Instance[]> {
    const rows = await this.em.execute<Row[]>(`select ${SELECT} from instances where tenant_id = ? order by created_at desc, id desc limit ?`, [tenantId, limit]);
    return rows.map(toInstance);
  }

  async live(tenantId: string): Promise<Instance[]> {
    const rows = await this.em.execute<Row[]>(`select ${SELECT} from instances where tenant_id = ? and ${LIVE} order by created_at, id`, [tenantId]);
    return rows.map(toInstance);
  }

  async overdue(tenantId: string, now: Date): Promise<Instance[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${SELECT} from instances where tenant_id = ? and status in ('provisioning', 'running', 'rebooting') and paid_until < ? order by created_at, id`,
      [tenantId, now],
    );
    return rows.map(toInstance);
  }

  async allLive(): Promise<Instance[]> {
    const rows = await this.em.execute<Row[]>(`select ${SELECT} from instances where ${LIVE} order by tenant_id, created_at, id`);
    return rows.map(toInstance);
  }

  async liveAt(provider: string): Promise<Instance[]> {
    const rows = await this.em.execute<Row[]>(`select ${SELECT} from instances where provider = ? and ${LIVE} order by tenant_id, created_at, id`, [provider]);
    return rows.map(toInstance);
  }

  async lockById(instanceId: string): Promise<Instance | null> {
    const [row] = await this.em.execute<Row[]>(`select ${SELECT} from instances where id = ? for update`, [instanceId]);
    return row ? toInstance(row) : null;
  }

  async dueForRemoval(now: Date): Promise<Instance[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${SELECT} from instances
        where status in ('provisioning', 'running', 'rebooting') and least(removal_scheduled_at, window_ends_at) <= ?
        order by tenant_id, id`,
      [now],
    );
    return rows.map(toInstance);
  }

  async update(i: Instance): Promise<void> {
    await this.em.execute(
      `update instances set status = ?, started_at = ?, paid_until = ?, removal_scheduled_at = ?, window_ends_at = ?, terminated_at = ?,
              machine_id = ?, ssh_host = ?, ssh_port = ?, charged_cents = ?, commitment_cents = ?, last_seen_at = ?, failure = ?, launch = ?, preempted_at = ?, ssh_user = ?
        where id = ?`,
      [i.status, i.startedAt, i.paidUntil, i.removalScheduledAt, i.windowEndsAt, i.terminatedAt, i.machineId, i.sshHost, i.sshPort, i.chargedCents, i.commitmentCents, i.lastSeenAt, i.failure, i.launch, i.preemptedAt, i.sshUser ?? null, i.id],
    );
  }
}
