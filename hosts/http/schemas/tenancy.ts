import { z } from 'zod';
import { SCOPES } from '../../../core/tenancy/scopes.ts';
import { ROLES } from '../../../core/tenancy/roles.ts';
import { isRoot, type Token } from '../../../core/tenancy/token.ts';
import type { TokenView } from '../../../core/tenancy/tenancy-service.ts';
import { dateTime, dateTimeOut, exampleId, isoOrNull, resourceId, usdAmount } from './common.ts';

const scope = z.enum(SCOPES);

export const TenantCreate = z
  .strictObject({ name: z.string().trim().min(1, 'must not be blank').max(200) })
  .meta({ id: 'TenantCreate', examples: [{ name: 'acme' }] });

export const TenantOut = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: dateTimeOut(),
    bootstrap_secret: z.string().meta({ description: 'Single use, shown once, valid 24 hours: exchange it at POST /v1/tokens.' }),
    bootstrap_expires_at: dateTimeOut(),
  })
  .meta({ id: 'TenantOut' });

export const TokenCreate = z
  .strictObject({
    tenant_id: resourceId('ten').optional().meta({ description: 'With bootstrap_secret, when no bearer is sent.' }),
    bootstrap_secret: z.string().min(1).max(200).optional(),
    name: z.string().trim().max(200).optional(),
    scopes: z.array(scope).min(1).optional().meta({ description: 'Default ["read"]; a subset of the caller\'s scopes.' }),
    spend_limit_usd: usdAmount().optional().meta({ description: 'Cap on what rentals through this token (and its children) may commit; > 0.' }),
    max_rental_hours: z.int().min(1).max(100_000).optional(),
    max_burn_usd_per_hour: usdAmount({}, '5.00')
      .optional()
      .meta({ description: 'The most the live machines and volumes rented under this token (and its children) may cost together an hour; > 0. Left out: the issuer\'s.' }),
    expires_at: dateTime().optional().meta({ description: 'Must be in the future.' }),
    idle_timeout_minutes: z.int().min(5).max(1440).nullable().optional().meta({
      description:
        'Dead-man switch: after this many minutes with no request from the token or any token it issued, the sweep terminates every machine rented under them and they stop working. Left out: the issuer\'s; a child\'s is at most its issuer\'s, and null (none) only under an issuer without one.',
    }),
  })
  .meta({
    id: 'TokenCreate',
    examples: [
      { name: 'agent', scopes: ['read', 'rent'], spend_limit_usd: '25.00', max_rental_hours: 8, max_burn_usd_per_hour: '5.00', idle_timeout_minutes: 30 },
      { tenant_id: exampleId('ten'), bootstrap_secret: 'gcp_boot_9q4m2xk7c3rwh8vt', scopes: ['read', 'rent', 'manage', 'billing'] },
    ],
  });

const tokenFields = {
  id: z.string(),
  kind: z.enum(['api', 'session', 'link']).meta({
    description: "api: from POST /v1/tokens; session: a person's console session from a sign-in (30 days), whose parent_id is the person's link: their place in the tenant, never a bearer and never listed.",
  }),
  role: z.enum(ROLES).nullable().meta({ description: "A session's person's role in the tenant (owner, admin, member, billing, viewer); null for an API token." }),
  name: z.string().nullable(),
  scopes: z.array(scope),
  spend_limit_cents: z.int().nullable(),
  committed_cents: z.int(),
  max_rental_hours: z.int().nullable(),
  max_burn_cents_per_hour: z.int().nullable().meta({ description: 'Its burn ceiling in cents an hour; null when none.' }),
  burn_cents_per_hour: z.int().meta({ description: 'What the live machines and volumes under it and its descendants cost an hour now.' }),
  expires_at: dateTimeOut().nullable(),
  parent_id: z.string().nullable(),
  created_at: dateTimeOut(),
  revoked_at: dateTimeOut().nullable(),
  idle_timeout_minutes: z.int().nullable().meta({ description: 'The dead-man switch, in minutes; null: none.' }),
  idle_deadline_at: dateTimeOut()
    .nullable()
    .meta({ description: 'When the token times out idle unless it or a token it issued sends a request (recorded at most once a minute); null without a timeout.' }),
};

export const TokenOut = z.object(tokenFields).meta({ id: 'TokenOut' });

export const TokenCreatedOut = z
  .object({ ...tokenFields, token: z.string().meta({ description: 'The bearer secret, shown once.' }) })
  .meta({ id: 'TokenCreatedOut' });

export const TokenSelfOut = z
  .object({
    ...tokenFields,
    tenant_id: z.string(),
    remaining_cents: z.int().nullable().meta({ description: 'What may still be committed: the smallest remaining cap along the token\'s chain; null when uncapped.' }),
    effective_max_rental_hours: z.int().nullable(),
    root: z.boolean().meta({
      description: 'Whether this credential is root: a session of an owner or admin, or a token with every scope and no limit. Only root links, removes and changes people, invites, and writes the monthly budget.',
    }),
    burn_left_cents_per_hour: z.int().nullable().meta({ description: 'What may still be added an hour: the least any burn ceiling along the token\'s chain leaves; null when none has one.' }),
    tenant_manage: z.boolean().meta({
      description:
        "Whether this credential manages the tenant as a whole: it has manage and is not a member's console session nor a token under one. Only such a credential registers webhook endpoints and reads people; a member's manage reaches only its own tokens, SSH keys, images and templates.",
    }),
  })
  .meta({ id: 'TokenSelfOut' });

export const TokenIdParams = z.object({ token_id: resourceId('tok') });

export const TokenHeartbeatOut = z
  .object({ idle_timeout_minutes: tokenFields.idle_timeout_minutes, idle_deadline_at: tokenFields.idle_deadline_at })
  .meta({ id: 'TokenHeartbeatOut', examples: [{ idle_timeout_minutes: 30, idle_deadline_at: '2026-11-21T12:30:00.000Z' }] });


export const tokenOut = (token: Token, burnCentsPerHour: number): z.input<typeof TokenOut> => ({
  id: token.id,
  kind: token.kind,
  role: token.role,
  name: token.name,
  scopes: token.scopes,
  spend_limit_cents: token.spendLimitCents,
  committed_cents: token.committedCents,
  max_rental_hours: token.maxRentalHours,
  max_burn_cents_per_hour: token.maxBurnCentsPerHour,
  burn_cents_per_hour: burnCentsPerHour,
  expires_at: isoOrNull(token.expiresAt),
  parent_id: token.parentId,
  created_at: token.createdAt.toISOString(),
  revoked_at: isoOrNull(token.revokedAt),
  ...tokenHeartbeatOut(token),
});

export const tokenHeartbeatOut = (token: Token): z.input<typeof TokenHeartbeatOut> => ({
  idle_timeout_minutes: token.idleTimeoutMinutes,
  idle_deadline_at: isoOrNull(token.idleDeadlineAt),
});

export const tokenSelfOut = (view: TokenView): z.input<typeof TokenSelfOut> => ({
  ...tokenOut(view.token, view.burnCentsPerHour),
  tenant_id: view.token.tenantId,
  remaining_cents: view.remainingCents,
  effective_max_rental_hours: view.effectiveMaxRentalHours,
  burn_left_cents_per_hour: view.burnLeftCentsPerHour,
  root: isRoot(view.token),
  tenant_manage: view.managesTenant,
});
