import { z } from 'zod';
import type { SignInService } from '../../../core/identity/sign-in-service.ts';
import { clientKeyOf } from '../client-address.ts';
import { defineRoute, type RouteDef, type RouteResponse } from '../route.ts';
import {
  AuthConfigOut,
  AuthStepOut,
  CodeSentOut,
  DevicePollIn,
  DevicePollOut,
  DeviceStartOut,
  EmailCodeIn,
  EmailIn,
  EmailPasswordIn,
  IdpExchangeIn,
  PersonTenantOut,
  SignInIn,
  TenantSwitchIn,
  IdpExchangeOut,
  InviteIn,
  InvitedOut,
  NewPasswordIn,
  PasswordResetIn,
  sessionOut,
} from '../schemas/auth.ts';

const publicRoute = { kind: 'public' } as const;
/** A person signs in with what the body carries; a bearer, when sent, links the identity into its tenant: it must be root (an owner's or admin's session, or a token with every scope and no limit), else 403. */
const optionalBearer = { kind: 'bearer-or-body', scope: 'manage' } as const;
const tags = ['sign-in'];

const CONFLICT_UNCONFIRMED: RouteResponse = {
  status: 409,
  description: "The email is not confirmed yet (the detail says how), or an invitation's temporary password expired (ask the operator for a new invitation)",
};
const WRONG_CREDENTIALS: RouteResponse = { status: 401, description: 'Wrong email or password (one answer, whatever was wrong), or an invalid bearer' };
const LINK_REFUSED: RouteResponse = {
  status: 403,
  description: "A bearer was sent that may not link people (ROOT_REQUIRED): only a root credential may, an owner's or admin's console session or a token with every scope and no limit; nothing was linked or spent",
};
const THROTTLED: RouteResponse = {
  status: 429,
  description:
    'Too many failed sign-ins for this email (10 from one client address, 50 from all, in 15 minutes) or wrong codes (5 in 15 minutes), or too many requests; wait Retry-After seconds',
};
const UPSTREAM: RouteResponse = { status: 503, description: 'The identity provider could not be reached' };

/** Every sign-in route beyond tokens, and the operator's invitation. */
export function authRoutes(signIn: SignInService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/auth/config',
      operationId: 'authConfig',
      summary: 'The identity provider in use and its public settings',
      tags,
      access: publicRoute,
      responses: [{ status: 200, description: 'Public settings only', schema: AuthConfigOut }],
      async handle() {
        return { status: 200, body: signIn.config() };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/sign-up',
      operationId: 'signUp',
      summary: 'Make an account: a 6-digit code is emailed to confirm the address',
      tags,
      access: publicRoute,
      body: EmailPasswordIn,
      responses: [{ status: 200, description: 'A code was sent (the same answer for an address that has an account)', schema: CodeSentOut }, UPSTREAM],
      async handle({ body }) {
        const sent = await signIn.signUp(body.email, body.password);
        return { status: 200, body: { status: 'code_sent', destination: sent.destination } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/confirm-email',
      operationId: 'confirmEmail',
      summary: 'Confirm the address with the emailed code',
      tags,
      access: publicRoute,
      body: EmailCodeIn,
      responses: [{ status: 200, description: 'Confirmed: sign in now', schema: AuthStepOut }, THROTTLED, UPSTREAM],
      async handle({ body }) {
        await signIn.confirmEmail(body.email, body.code);
        return { status: 200, body: { status: 'confirmed' } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/resend-code',
      operationId: 'resendCode',
      summary: 'Email a new confirmation code (the old one stops working)',
      tags,
      access: publicRoute,
      body: EmailIn,
      responses: [{ status: 200, description: 'Sent (the same answer for an unknown address)', schema: CodeSentOut }, UPSTREAM],
      async handle({ body }) {
        const sent = await signIn.resendCode(body.email);
        return { status: 200, body: { status: 'code_sent', destination: sent.destination } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/forgot-password',
      operationId: 'forgotPassword',
      summary: 'Email a code to reset the password',
      tags,
      access: publicRoute,
      body: EmailIn,
      responses: [{ status: 200, description: 'Sent (the same answer, in the same time, for an unknown address)', schema: CodeSentOut }, UPSTREAM],
      async handle({ body }) {
        const sent = await signIn.forgotPassword(body.email);
        return { status: 200, body: { status: 'code_sent', destination: sent.destination } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/reset-password',
      operationId: 'resetPassword',
      summary: 'Set a new password with the emailed code; every console session of the person ends (with the tokens they issued)',
      tags,
      access: publicRoute,
      body: PasswordResetIn,
      responses: [{ status: 200, description: 'The password is set and earlier sessions ended: sign in with it', schema: AuthStepOut }, THROTTLED, UPSTREAM],
      async handle({ body }) {
        await signIn.resetPassword(body.email, body.code, body.new_password);
        return { status: 200, body: { status: 'password_reset' } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/sign-in',
      operationId: 'signIn',
      summary: 'Sign in with email and password: a console session (30 days), or the new-password step',
      tags,
      access: optionalBearer,
      body: SignInIn,
      responses: [
        { status: 200, description: 'Signed in, or a new password is required', schema: IdpExchangeOut },
        WRONG_CREDENTIALS,
        LINK_REFUSED,
        { status: 404, description: 'tenant_id names a tenant of which the person is not a person' },
        CONFLICT_UNCONFIRMED,
        THROTTLED,
        UPSTREAM,
      ],
      async handle({ body, caller, req }) {
        const result = await signIn.signIn(caller, body.email, body.password, clientKeyOf(req), body.tenant_id);
        return {
          status: 200,
          body: result.status === 'signed_in' ? { status: 'signed_in', ...sessionOut(result.session) } : { status: 'new_password_required', session: result.session },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/new-password',
      operationId: 'newPassword',
      summary: 'Complete a sign-in that answered new_password_required',
      tags,
      access: optionalBearer,
      body: NewPasswordIn,
      responses: [{ status: 200, description: 'Signed in', schema: IdpExchangeOut }, WRONG_CREDENTIALS, LINK_REFUSED, CONFLICT_UNCONFIRMED, UPSTREAM],
      async handle({ body, caller }) {
        const session = await signIn.completeNewPassword(caller, body.email, body.session, body.new_password);
        return { status: 200, body: { status: 'signed_in', ...sessionOut(session) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/idp/exchange',
      operationId: 'idpExchange',
      summary: 'Swap a hosted sign-in page\'s authorization code for a console session',
      tags,
      access: optionalBearer,
      body: IdpExchangeIn,
      responses: [{ status: 200, description: 'Signed in', schema: IdpExchangeOut }, LINK_REFUSED, CONFLICT_UNCONFIRMED, UPSTREAM],
      async handle({ body, caller }) {
        const session = await signIn.exchange(caller, { code: body.code, redirectUri: body.redirect_uri ?? null, codeVerifier: body.code_verifier ?? null });
        return { status: 200, body: { status: 'signed_in', ...sessionOut(session) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/codehost/device/start',
      operationId: 'deviceStart',
      summary: 'Begin a device sign-in at the code host (GitHub): enter user_code at verification_uri',
      tags,
      access: publicRoute,
      responses: [
        { status: 200, description: 'Begun: poll with device_code every `interval` seconds', schema: DeviceStartOut },
        { status: 409, description: 'Device sign-in is not configured (GITHUB_CLIENT_ID)' },
        UPSTREAM,
      ],
      async handle() {
        const start = await signIn.startDevice();
        return {
          status: 200,
          body: { device_code: start.deviceCode, user_code: start.userCode, verification_uri: start.verificationUri, expires_in: start.expiresIn, interval: start.interval },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/codehost/device/poll',
      operationId: 'devicePoll',
      summary: 'Poll a device sign-in: pending, slow_down, expired, denied, or complete with a console session',
      tags,
      access: optionalBearer,
      body: DevicePollIn,
      responses: [
        { status: 200, description: 'Where the flow stands; wait `interval` seconds before the next poll', schema: DevicePollOut },
        LINK_REFUSED,
        { status: 409, description: 'Device sign-in is not configured, or the identity is linked to another tenant' },
        UPSTREAM,
      ],
      async handle({ body, caller }) {
        const polled = await signIn.pollDevice(caller, body.device_code);
        return {
          status: 200,
          body: polled.status === 'complete' ? { status: 'complete', interval: polled.interval, ...sessionOut(polled.session) } : { status: polled.status, interval: polled.interval },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/operator/users',
      operationId: 'inviteUser',
      summary: 'Invite a person: an account with a temporary password (7 days), mailed; the first sign-in asks for a new one',
      tags: ['operator'],
      access: { kind: 'operator' },
      body: InviteIn,
      responses: [
        { status: 201, description: 'Invited, or a pending invitation renewed (a fresh temporary password mailed)', schema: InvitedOut },
        { status: 404, description: 'No such tenant' },
        { status: 409, description: 'The address has an account in use, or belongs to another tenant' },
        UPSTREAM,
      ],
      async handle({ body }) {
        const invited = await signIn.invite(body.email, body.tenant_id ?? null);
        return { status: 201, body: { email: invited.email, tenant_id: invited.tenantId, status: invited.status } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/auth/tenants',
      operationId: 'listMyTenants',
      summary: "The tenants the session's person belongs to, with their role in each",
      tags,
      access: { kind: 'bearer', scope: null },
      responses: [
        { status: 200, description: 'The first joined first', schema: z.array(PersonTenantOut) },
        { status: 403, description: 'Not a console session: an API token has no person behind it' },
      ],
      async handle({ caller }) {
        return { status: 200, body: (await signIn.tenantsOf(caller!)).map((t) => ({ tenant_id: t.tenantId, name: t.name, role: t.role, current: t.current })) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/switch',
      operationId: 'switchTenant',
      summary: "A session of the same person in another of their tenants (the console's switch); the asking session stays",
      tags,
      access: { kind: 'bearer', scope: null },
      body: TenantSwitchIn,
      responses: [
        { status: 200, description: 'Signed in to that tenant', schema: IdpExchangeOut },
        { status: 403, description: 'Not a console session: an API token has no person behind it' },
        { status: 404, description: 'The person is not a person of that tenant' },
      ],
      async handle({ caller, body }) {
        return { status: 200, body: { status: 'signed_in', ...sessionOut(await signIn.switchTenant(caller!, body.tenant_id)) } };
      },
    }),
  ];
}
