import { defineEntity, p } from '@mikro-orm/core';

export const TokenEntity = defineEntity({
  name: 'TokenRow',
  tableName: 'tokens',
  properties: {
    id: p.string().primary().columnType('text'),
    tenantId: p.string().columnType('text').index('tokens_tenant_id_index'),
    kind: p.string().columnType('text').default('api'),
    name: p.string().columnType('text').nullable(),
    scopes: p.array().columnType('text[]'),
    spendLimitCents: p.bigint('number').nullable(),
    committedCents: p.bigint('number').default(0),
    maxRentalHours: p.integer().nullable(),
    maxBurnCentsPerHour: p.bigint('number').nullable(),
    expiresAt: p.datetime().columnType('timestamptz').nullable(),
    parentId: p.string().columnType('text').nullable(),
    ancestorIds: p.array().columnType('text[]'),
    createdAt: p.datetime().columnType('timestamptz'),
    revokedAt: p.datetime().columnType('timestamptz').nullable(),
    secretDigest: p.string().columnType('text'),
    idleTimeoutMinutes: p.integer().nullable(),
    idleDeadlineAt: p.datetime().columnType('timestamptz').nullable(),
    idledAt: p.datetime().columnType('timestamptz').nullable(),
    role: p.string().columnType('text').nullable(),
  },
});
