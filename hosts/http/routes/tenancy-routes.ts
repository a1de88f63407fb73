import { DomainError } from '../../../core/errors.ts';
import type { TenancyService } from '../../../core/tenancy/tenancy-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import {
  TenantCreate,
  TenantOut,
  TokenCreate,
  TokenCreatedOut,
  TokenHeartbeatOut,
  TokenIdParams,
  TokenOut,
  TokenSelfOut,
  tokenHeartbeatOut,
  tokenOut,
  tokenSelfOut,
} from '../schemas/tenancy.ts';
import { z } from 'zod';

export function tenancyRoutes(tenancy: TenancyService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/tenants',
      operationId: 'createTenant',
      summary: 'Create a tenant; answers its single-use bootstrap secret once',
      tags: ['tenants'],
      access: { kind: 'public' },
      body: TenantCreate,
      responses: [{ status: 201, description: 'Created', schema: TenantOut }],
      async handle({ body }) {
        const { tenant, bootstrapSecret, bootstrapExpiresAt } = await tenancy.createTenant(body.name);
        return {
          status: 201,
          body: {
            id: tenant.id,
            name: tenant.name,
            created_at: tenant.createdAt.toISOString(),
            bootstrap_secret: bootstrapSecret,
            bootstrap_expires_at: bootstrapExpiresAt.toISOString(),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/tokens',
      operationId: 'createToken',
      summary: 'Issue a token: with a bearer that has manage, or with tenant_id and bootstrap_secret',
      tags: ['tokens'],
      access: { kind: 'bearer-or-body', scope: 'manage' },
      body: TokenCreate,
      responses: [{ status: 201, description: 'Created; `token` is shown once', schema: TokenCreatedOut }],
      async handle({ body, caller }) {
        const { tenant_id, bootstrap_secret, name, scopes, spend_limit_usd, max_rental_hours, max_burn_usd_per_hour, expires_at, idle_timeout_minutes } = body;
        const request = {
          name: name ?? null,
          ...(scopes && { scopes }),
          ...(spend_limit_usd !== undefined && { spendLimitCents: spend_limit_usd }),
          ...(max_rental_hours !== undefined && { maxRentalHours: max_rental_hours }),
          ...(max_burn_usd_per_hour !== undefined && { maxBurnCentsPerHour: max_burn_usd_per_hour }),
          ...(expires_at && { expiresAt: expires_at }),
          ...(idle_timeout_minutes !== undefined && { idleTimeoutMinutes: idle_timeout_minutes }),
        };
        let issued;
        if (caller) {
          issued = await tenancy.issueToken({ kind: 'token', token: caller }, request);
        } else {
          if (!tenant_id || !bootstrap_secret) {
            throw new DomainError(
              'BOOTSTRAP_SECRET_INVALID',
              'send Authorization: Bearer <token with manage>, or tenant_id and bootstrap_secret in the body',
            );
          }
          issued = await tenancy.issueToken({ kind: 'bootstrap', tenantId: tenant_id, secret: bootstrap_secret }, request);
        }
        // nothing runs under a token just made
        return { status: 201, body: { ...tokenOut(issued.token, 0), token: issued.secret } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tokens',
      operationId: 'listTokens',
      summary: "The tokens this token administers: a root token sees the tenant's, others their own subtree",
      tags: ['tokens'],
      access: { kind: 'bearer', scope: null },
      responses: [{ status: 200, description: 'Tokens, oldest first', schema: z.array(TokenOut) }],
      async handle({ caller }) {
        const tokens = await tenancy.listTokens(caller!);
        return { status: 200, body: tokens.map((listed) => tokenOut(listed.token, listed.burnCentsPerHour)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tokens/self',
      operationId: 'getTokenSelf',
      summary: 'The calling token: scopes, spend cap and what remains of it, burn ceiling and burn, idle timeout and deadline',
      tags: ['tokens'],
      access: { kind: 'bearer', scope: null },
      responses: [{ status: 200, description: 'The calling token', schema: TokenSelfOut }],
      async handle({ caller }) {
        return { status: 200, body: tokenSelfOut(await tenancy.describe(caller!)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/tokens/self/heartbeat',
      operationId: 'heartbeatToken',
      summary: "Keep the calling token alive (its dead-man switch): any request does; this one costs no more than authentication",
      tags: ['tokens'],
      access: { kind: 'bearer', scope: null },
      responses: [{ status: 200, description: 'The idle timeout and the deadline it moved', schema: TokenHeartbeatOut }],
      async handle({ caller }) {
        // authentication recorded the activity (at most one write a minute per token): the caller carries its deadline
        return { status: 200, body: tokenHeartbeatOut(caller!) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/tokens/{token_id}',
      operationId: 'revokeToken',
      summary: 'Revoke a token and every token it issued (manage; a token may always revoke itself)',
      tags: ['tokens'],
      access: { kind: 'bearer', scope: null },
      params: TokenIdParams,
      responses: [
        { status: 204, description: 'Revoked' },
        { status: 403, description: "Revoking another token needs the manage scope; an owner's session or token (one whose nearest person is an owner) is revoked only by an owner's authority or a root token with no person above it (OWNER_REQUIRED)" },
      ],
      async handle({ caller, params }) {
        await tenancy.revokeToken(caller!, params.token_id);
        return { status: 204 };
      },
    }),
  ];
}
