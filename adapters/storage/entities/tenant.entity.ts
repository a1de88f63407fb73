import { defineEntity, p } from '@mikro-orm/core';

export const TenantEntity = defineEntity({
  name: 'TenantRow',
  tableName: 'tenants',
  properties: {
    id: p.string().primary().columnType('text'),
    name: p.string().columnType('text'),
    createdAt: p.datetime().columnType('timestamptz'),
    bootstrapDigest: p.string().columnType('text'),
    bootstrapExpiresAt: p.datetime().columnType('timestamptz'),
    bootstrapUsedAt: p.datetime().columnType('timestamptz').nullable(),
  },
});
