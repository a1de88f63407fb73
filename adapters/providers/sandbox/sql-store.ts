import type { ProviderDatabase } from '../provider-module.ts';
import type { MachineRecord, MachineRecordOptions, OfferState, ProvisioningMishap, SandboxStore, VolumeRecord } from './store.ts';

type Row = Record<string, unknown>;

const num = (value: unknown): number => {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`sandbox: not a safe integer from the database: ${String(value)}`);
  return n;
};
const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : num(value));
/** jsonb arrives parsed from PostgreSQL and as text from some drivers. */
const json = <T>(value: unknown, fallback: T): T =>
  value === null || value === undefined ? fallback : typeof value === 'string' ? (JSON.parse(value) as T) : (value as T);

const MACHINE_COLUMNS = `machine_id, serial, offer_id, label, name, image, price_usd_per_hour, ssh_host, ssh_port,
  created_at_ms, ready_at_ms, mishap, reboot_until_ms, terminated_at_ms, holds_capacity,
  ssh_public_keys, registry_username, registry_password_sha256, command, env, ports, startup_script, volume_ids,
  spot_bid_units, preempt_at_ms`;

const toOptions = (row: Row): MachineRecordOptions => ({
  sshPublicKeys: json<string[]>(row.ssh_public_keys, []),
  registryUsername: text(row.registry_username),
  registryPasswordSha256: text(row.registry_password_sha256),
  command: text(row.command),
  env: json<Record<string, string>>(row.env, {}),
  ports: json<number[]>(row.ports, []),
  startupScript: text(row.startup_script),
  volumeIds: json<string[]>(row.volume_ids, []),
});

const toMachine = (row: Row): MachineRecord => ({
  machineId: String(row.machine_id),
  serial: num(row.serial),
  offerId: String(row.offer_id),
  label: text(row.label),
  name: String(row.name),
  image: String(row.image),
  options: toOptions(row),
  priceUsdPerHour: String(row.price_usd_per_hour),
  sshHost: String(row.ssh_host),
  sshPort: num(row.ssh_port),
  createdAt: num(row.created_at_ms),
  readyAt: num(row.ready_at_ms),
  mishap: text(row.mishap) as ProvisioningMishap | null,
  rebootUntil: num(row.reboot_until_ms),
  terminatedAt: row.terminated_at_ms === null || row.terminated_at_ms === undefined ? null : num(row.terminated_at_ms),
  holdsCapacity: row.holds_capacity === true,
  spotBidUnits: numOrNull(row.spot_bid_units),
  preemptAt: numOrNull(row.preempt_at_ms),
});

const toOfferState = (row: Row): OfferState => ({
  taken: num(row.taken),
  withdrawn: row.withdrawn === true,
  priceUsdPerHour: text(row.price_usd_per_hour),
  spotPriceUsdPerHour: text(row.spot_price_usd_per_hour),
});

/** The machine's values in MACHINE_COLUMNS order, typed so they can stand in a select list. */
const MACHINE_VALUES = `?::text, ?::bigint, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::integer,
  ?::bigint, ?::bigint, ?::text, ?::bigint, ?::bigint, ?::boolean,
  ?::jsonb, ?::text, ?::text, ?::text, ?::jsonb, ?::jsonb, ?::text, ?::jsonb,
  ?::bigint, ?::bigint`;
const machineParams = ({ options: o, ...r }: MachineRecord): unknown[] => [
  r.machineId, r.serial, r.offerId, r.label, r.name, r.image, r.priceUsdPerHour, r.sshHost, r.sshPort,
  r.createdAt, r.readyAt, r.mishap, r.rebootUntil, r.terminatedAt, r.holdsCapacity,
  JSON.stringify(o.sshPublicKeys), o.registryUsername, o.registryPasswordSha256, o.command, JSON.stringify(o.env),
  JSON.stringify(o.ports), o.startupScript, JSON.stringify(o.volumeIds),
  r.spotBidUnits, r.preemptAt,
];

const toVolume = (row: Row): VolumeRecord => ({
  volumeId: String(row.volume_id),
  label: String(row.label),
  name: String(row.name),
  region: String(row.region),
  sizeGb: num(row.size_gb),
  createdAt: num(row.created_at_ms),
});

/** A live machine that has the volume `?` attached. */
const ATTACHED = `exists (select 1 from sandbox_machines m
  where m.terminated_at_ms is null and m.volume_ids @> jsonb_build_array(?::text))`;

/** Frees the unit of capacity a machine held, for the machine rows the CTE `ended` returns. */
const RELEASE = `update sandbox_offers o set taken = greatest(o.taken - 1, 0)
   from ended where ended.holds_capacity and o.offer_id = ended.offer_id`;

/**
 * The sandbox's state in the control plane's database (migrations 0006, 0011 and 0016): tables `sandbox_machines`,
 * `sandbox_offers` and `sandbox_volumes`, ids from the sequences `sandbox_machine_serial` and `sandbox_volume_serial`. Every method is one statement, so no
 * transaction is ever held open around a call (PGlite runs one query at a time).
 */
export class SqlSandboxStore implements SandboxStore {
  private readonly db: ProviderDatabase;

  constructor(db: ProviderDatabase) {
    this.db = db;
  }

  async offerStates(): Promise<Map<string, OfferState>> {
    const rows = await this.db.execute<Row[]>(
      `select offer_id, taken, withdrawn, price_usd_per_hour, spot_price_usd_per_hour from sandbox_offers
        where taken > 0 or withdrawn or price_usd_per_hour is not null or spot_price_usd_per_hour is not null`,
    );
    return new Map(rows.map((row) => [String(row.offer_id), toOfferState(row)]));
  }

  async offerState(offerId: string): Promise<OfferState | null> {
    const [row] = await this.db.execute<Row[]>(`select taken, withdrawn, price_usd_per_hour, spot_price_usd_per_hour from sandbox_offers where offer_id = ?`, [offerId]);
    return row ? toOfferState(row) : null;
  }

  async setWithdrawn(offerId: string, withdrawn: boolean): Promise<void> {
    await this.db.execute(
      `insert into sandbox_offers (offer_id, withdrawn) values (?, ?) on conflict (offer_id) do update set withdrawn = excluded.withdrawn`,
      [offerId, withdrawn],
    );
  }

  async setPrice(offerId: string, priceUsdPerHour: string): Promise<void> {
    await this.db.execute(
      `insert into sandbox_offers (offer_id, price_usd_per_hour) values (?, ?)
       on conflict (offer_id) do update set price_usd_per_hour = excluded.price_usd_per_hour`,
      [offerId, priceUsdPerHour],
    );
  }

  async setSpotPrice(offerId: string, spotPriceUsdPerHour: string | null): Promise<void> {
    await this.db.execute(
      `insert into sandbox_offers (offer_id, spot_price_usd_per_hour) values (?, ?)
       on conflict (offer_id) do update set spot_price_usd_per_hour = excluded.spot_price_usd_per_hour`,
      [offerId, spotPriceUsdPerHour],
    );
  }

  async nextMachine(): Promise<{ machineId: string; serial: number }> {
    const [row] = await this.db.execute<Row[]>(`select nextval('sandbox_machine_serial') as serial`);
    const serial = num(row!.serial);
    return { machineId: `sbx-${serial}`, serial };
  }

  async addMachine(record: MachineRecord, capacity: number | null): Promise<boolean> {
    if (capacity === null) {
      await this.db.execute(`insert into sandbox_machines (${MACHINE_COLUMNS}) values (${MACHINE_VALUES})`, machineParams(record));
      return true;
    }
    // one statement: the unit is taken only while one is left, and the machine exists only if it was
    const rows = await this.db.execute<Row[]>(
      `with took as (
         insert into sandbox_offers as o (offer_id, taken) select ?::text, 1 where ?::integer >= 1
         on conflict (offer_id) do update set taken = o.taken + 1 where o.taken < ?::integer and not o.withdrawn
         returning offer_id
       )
       insert into sandbox_machines (${MACHINE_COLUMNS}) select ${MACHINE_VALUES} from took
       returning machine_id`,
      [record.offerId, capacity, capacity, ...machineParams(record)],
    );
    return rows.length === 1;
  }

  async machine(machineId: string): Promise<MachineRecord | null> {
    const [row] = await this.db.execute<Row[]>(`select ${MACHINE_COLUMNS} from sandbox_machines where machine_id = ?`, [machineId]);
    return row ? toMachine(row) : null;
  }

  async liveMachines(forgetBefore: number): Promise<MachineRecord[]> {
    const rows = await this.db.execute<Row[]>(
      `with forgotten as (delete from sandbox_machines where terminated_at_ms <= ?)
       select ${MACHINE_COLUMNS} from sandbox_machines where terminated_at_ms is null order by serial`,
      [forgetBefore],
    );
    return rows.map(toMachine);
  }

  async setRebootUntil(machineId: string, until: number): Promise<void> {
    await this.db.execute(`update sandbox_machines set reboot_until_ms = ? where machine_id = ? and terminated_at_ms is null`, [until, machineId]);
  }

  async liveSpotMachines(offerId: string): Promise<MachineRecord[]> {
    const rows = await this.db.execute<Row[]>(
      `select ${MACHINE_COLUMNS} from sandbox_machines
        where offer_id = ? and terminated_at_ms is null and spot_bid_units is not null order by serial`,
      [offerId],
    );
    return rows.map(toMachine);
  }

  async reschedulePreemption(machineId: string, at: number | null, now: number): Promise<boolean> {
    // one statement: a machine preempted by `now` (by another process, or a knob) stays preempted
    const rows = await this.db.execute<Row[]>(
      `update sandbox_machines set preempt_at_ms = ?::bigint
        where machine_id = ? and terminated_at_ms is null and spot_bid_units is not null
          and (preempt_at_ms is null or preempt_at_ms > ?::bigint)
        returning machine_id`,
      [at, machineId, now],
    );
    return rows.length === 1;
  }

  async reclaim(machineId: string, now: number): Promise<boolean> {
    const rows = await this.db.execute<Row[]>(
      `update sandbox_machines set preempt_at_ms = ?::bigint
        where machine_id = ? and terminated_at_ms is null and (preempt_at_ms is null or preempt_at_ms > ?::bigint)
        returning machine_id`,
      [now, machineId, now],
    );
    return rows.length === 1;
  }

  async terminate(machineId: string, at: number): Promise<void> {
    await this.db.execute(
      `with ended as (
         update sandbox_machines set terminated_at_ms = ? where machine_id = ? and terminated_at_ms is null
         returning offer_id, holds_capacity
       ) ${RELEASE}`,
      [at, machineId],
    );
  }

  async remove(machineId: string): Promise<void> {
    await this.db.execute(
      `with removed as (delete from sandbox_machines where machine_id = ? returning offer_id, holds_capacity, terminated_at_ms),
       ended as (select offer_id, holds_capacity from removed where terminated_at_ms is null)
       ${RELEASE}`,
      [machineId],
    );
  }

  async nextVolumeId(): Promise<string> {
    const [row] = await this.db.execute<Row[]>(`select nextval('sandbox_volume_serial') as serial`);
    return `sbv-${num(row!.serial)}`;
  }

  async addVolume(record: VolumeRecord): Promise<void> {
    await this.db.execute(
      `insert into sandbox_volumes (volume_id, label, name, region, size_gb, created_at_ms) values (?, ?, ?, ?, ?, ?)`,
      [record.volumeId, record.label, record.name, record.region, record.sizeGb, record.createdAt],
    );
  }

  async volume(volumeId: string): Promise<VolumeRecord | null> {
    const [row] = await this.db.execute<Row[]>(
      `select volume_id, label, name, region, size_gb, created_at_ms from sandbox_volumes where volume_id = ?`,
      [volumeId],
    );
    return row ? toVolume(row) : null;
  }

  async allVolumes(): Promise<VolumeRecord[]> {
    const rows = await this.db.execute<Row[]>(`select volume_id, label, name, region, size_gb, created_at_ms from sandbox_volumes order by created_at_ms, volume_id`);
    return rows.map(toVolume);
  }

  async volumeInUse(volumeId: string): Promise<boolean> {
    const [row] = await this.db.execute<Row[]>(`select ${ATTACHED} as in_use`, [volumeId]);
    return row?.in_use === true;
  }

  async deleteVolume(volumeId: string): Promise<'deleted' | 'gone' | 'in_use'> {
    // one statement: a volume a live machine has attached is never deleted
    const [row] = await this.db.execute<Row[]>(
      `with target as (select volume_id, ${ATTACHED} as in_use from sandbox_volumes where volume_id = ?),
       deleted as (delete from sandbox_volumes v using target t where v.volume_id = t.volume_id and not t.in_use returning v.volume_id)
       select (select count(*) from target) as found, (select count(*) from deleted) as deleted`,
      [volumeId, volumeId],
    );
    if (num(row!.found) === 0) return 'gone';
    return num(row!.deleted) === 1 ? 'deleted' : 'in_use';
  }
}
