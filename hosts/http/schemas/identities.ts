import { z } from 'zod';
import type { IdentityLink } from '../../../core/identity/links.ts';
import { ROLES } from '../../../core/tenancy/roles.ts';
import { dateTimeOut, resourceId, usdAmount } from './common.ts';

export const IdentityOut = z
  .object({
    id: z.string().meta({ description: 'idn_…: remove the person with DELETE /v1/identities/{identity_id}.' }),
    provider: z.string().meta({ description: 'Who vouches for the person: builtin (email and password), cognito, github.' }),
    email: z.string().nullable().meta({ description: 'The verified address, when the provider has one.' }),
    login: z.string().nullable().meta({ description: 'The handle at the provider (GitHub\'s login), when it has one.' }),
    linked_at: dateTimeOut(),
    linked_by_token_id: z
      .string()
      .nullable()
      .meta({ description: 'The token whose bearer linked the person in (see GET /v1/tokens); null: their first sign-in made the tenant, or an operator invited them.' }),
    role: z.enum(ROLES).meta({
      description:
        'owner: everything, and only owners make or change owners; admin: everything but owners; member: read and rent, and tokens, SSH keys, images and templates of its own, within spend_limit_cents and max_rental_hours (not people nor webhook endpoints); billing: read and billing; viewer: read.',
    }),
    spend_limit_cents: z.int().nullable().meta({ description: "A member's cap on what their sessions and every token those issue may commit together; null: none." }),
    max_rental_hours: z.int().nullable().meta({ description: "A member's longest rental; null: none." }),
  })
  .meta({ id: 'IdentityOut' });

export const IdentityUpdate = z
  .strictObject({
    role: z.enum(ROLES).optional(),
    spend_limit_usd: usdAmount().nullable().optional().meta({ description: 'A member\'s spend limit, > 0; null removes it. Only a member carries one.' }),
    max_rental_hours: z.int().min(1).max(100_000).nullable().optional().meta({ description: "A member's longest rental in hours; null removes it." }),
  })
  .meta({ id: 'IdentityUpdate', examples: [{ role: 'member', spend_limit_usd: '50.00', max_rental_hours: 24 }] });

export const IdentityIdParams = z.object({ identity_id: resourceId('idn') });

export const identityOut = (link: IdentityLink): z.input<typeof IdentityOut> => ({
  id: link.id,
  provider: link.provider,
  email: link.email,
  login: link.login,
  linked_at: link.createdAt.toISOString(),
  linked_by_token_id: link.linkedByTokenId,
  role: link.role,
  spend_limit_cents: link.spendLimitCents,
  max_rental_hours: link.maxRentalHours,
});
