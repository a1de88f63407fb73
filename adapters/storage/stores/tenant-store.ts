import { LockMode, type EntityManager, type InferEntity } from '@mikro-orm/sql';
import type { TenantStore } from '../../../core/ports/storage.ts';
import type { BootstrapSecret, Tenant } from '../../../core/tenancy/tenant.ts';
import { TenantEntity } from '../entities/tenant.entity.ts';

type TenantRow = InferEntity<typeof TenantEntity>;

const toBootstrap = (row: TenantRow): BootstrapSecret => ({
  tenantId: row.id,
  digest: row.bootstrapDigest,
  expiresAt: row.bootstrapExpiresAt,
  usedAt: row.bootstrapUsedAt ?? null,
});

export class MikroTenantStore implements TenantStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(tenant: Tenant, bootstrap: BootstrapSecret): Promise<void> {
    this.em.create(TenantEntity, {
      id: tenant.id,
      name: tenant.name,
      createdAt: tenant.createdAt,
      bootstrapDigest: bootstrap.digest,
      bootstrapExpiresAt: bootstrap.expiresAt,
      bootstrapUsedAt: bootstrap.usedAt,
    });
    await this.em.flush();
  }

  async get(tenantId: string): Promise<Tenant | null> {
    const row = await this.em.findOne(TenantEntity, { id: tenantId });
    return row ? { id: row.id, name: row.name, createdAt: row.createdAt } : null;
  }

  async lockBootstrap(tenantId: string): Promise<BootstrapSecret | null> {
    const row = await this.em.findOne(
      TenantEntity,
      { id: tenantId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    return row ? toBootstrap(row) : null;
  }

  async markBootstrapUsed(tenantId: string, at: Date): Promise<void> {
    await this.em.nativeUpdate(TenantEntity, { id: tenantId }, { bootstrapUsedAt: at });
  }
}
