import type { EntityManager } from '@mikro-orm/sql';
import type { LaunchLeaseStore } from '../../../core/ports/launch-lease-storage.ts';
import { date, type Row } from './sql-rows.ts';

export class MikroLaunchLeaseStore implements LaunchLeaseStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async take(instanceId: string, holder: string, until: Date): Promise<void> {
    await this.em.execute(`insert into launch_leases (instance_id, holder, lease_until) values (?, ?, ?)`, [instanceId, holder, until]);
  }

  async renew(holder: string, instanceIds: readonly string[], until: Date): Promise<void> {
    if (instanceIds.length === 0) return;
    const marks = instanceIds.map(() => '?').join(', ');
    await this.em.execute(`update launch_leases set lease_until = ? where holder = ? and instance_id in (${marks})`, [until, holder, ...instanceIds]);
  }

  async release(instanceId: string): Promise<void> {
    await this.em.execute(`delete from launch_leases where instance_id = ?`, [instanceId]);
  }

  async of(instanceId: string): Promise<{ holder: string; until: Date } | null> {
    const [row] = await this.em.execute<Row[]>(`select holder, lease_until from launch_leases where instance_id = ?`, [instanceId]);
    return row ? { holder: String(row.holder), until: date(row.lease_until) } : null;
  }
}
