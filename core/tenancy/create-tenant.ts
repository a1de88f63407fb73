import { invalidInput } from '../errors.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { BOOTSTRAP_SECRET_PREFIX, type TenancyContext } from './context.ts';
import { BOOTSTRAP_SECRET_LIFETIME_MS, type Tenant } from './tenant.ts';

/** An operator makes a tenant: its single-use bootstrap secret (shown once) issues the first token within 24 hours. */
export async function createTenant(ctx: TenancyContext, name: string): Promise<{ tenant: Tenant; bootstrapSecret: string; bootstrapExpiresAt: Date }> {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw invalidInput(['body', 'name'], 'must not be blank');
  const now = ctx.clock.now();
  const tenant: Tenant = { id: ctx.ids.newId('ten'), name: trimmed, createdAt: now };
  const bootstrapSecret = ctx.secrets.newSecret(BOOTSTRAP_SECRET_PREFIX);
  const bootstrapExpiresAt = new Date(now.getTime() + BOOTSTRAP_SECRET_LIFETIME_MS);
  await ctx.storage.transaction((uow) =>
    uow.tenants.add(tenant, {
      tenantId: tenant.id,
      digest: ctx.secrets.digest(bootstrapSecret),
      expiresAt: bootstrapExpiresAt,
      usedAt: null,
    }),
  );
  return { tenant, bootstrapSecret, bootstrapExpiresAt };
}

/**
 * A tenant made for a person who signed in for the first time, inside the caller's transaction. It needs no
 * bootstrap secret (the sign-in is the credential), so its secret is stored as already used.
 */
export async function provisionTenant(ctx: TenancyContext, uow: UnitOfWork, name: string, now: Date): Promise<Tenant> {
  const tenant: Tenant = { id: ctx.ids.newId('ten'), name: name.trim() || 'tenant', createdAt: now };
  await uow.tenants.add(tenant, { tenantId: tenant.id, digest: ctx.secrets.digest(ctx.secrets.newSecret(BOOTSTRAP_SECRET_PREFIX)), expiresAt: now, usedAt: now });
  return tenant;
}
