import { z } from 'zod';
import type { IdentityLink } from '../../../core/identity/links.ts';
import { dateTimeOut, resourceId } from './common.ts';

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
  })
  .meta({ id: 'IdentityOut' });

export const IdentityIdParams = z.object({ identity_id: resourceId('idn') });

export const identityOut = (link: IdentityLink): z.input<typeof IdentityOut> => ({
  id: link.id,
  provider: link.provider,
  email: link.email,
  login: link.login,
  linked_at: link.createdAt.toISOString(),
  linked_by_token_id: link.linkedByTokenId,
});
