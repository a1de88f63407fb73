import { z } from 'zod';
import type { Session } from '../../../core/identity/link-or-provision.ts';
import { ROLES } from '../../../core/tenancy/roles.ts';
import { dateTimeOut, exampleId, resourceId } from './common.ts';

const email = z
  .string()
  .trim()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an email address, e.g. you@example.com')
  .meta({ description: 'Your email address.', examples: ['me@example.com'] });
const password = z.string().min(1, 'must not be empty').max(256).meta({ description: 'At least 10 characters, not your email.', examples: ['a long passphrase'] });
const code = z.string().trim().regex(/^\d{6}$/, 'must be the 6-digit code from the email').meta({ description: 'The 6-digit code from the email.', examples: ['123456'] });

export const EmailPasswordIn = z.strictObject({ email, password }).meta({ id: 'EmailPasswordIn', examples: [{ email: 'me@example.com', password: 'a long passphrase' }] });
export const SignInIn = z
  .strictObject({
    email,
    password,
    tenant_id: resourceId('ten')
      .optional()
      .meta({ description: 'A person of several tenants signs in to this one (404 when they are not a person there); without it, the tenant they joined first.' }),
  })
  .meta({ id: 'SignInIn', examples: [{ email: 'me@example.com', password: 'a long passphrase' }, { email: 'me@example.com', password: 'a long passphrase', tenant_id: exampleId('ten') }] });
export const TenantSwitchIn = z.strictObject({ tenant_id: resourceId('ten') }).meta({ id: 'TenantSwitchIn', examples: [{ tenant_id: exampleId('ten') }] });
export const PersonTenantOut = z
  .object({
    tenant_id: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    current: z.boolean().meta({ description: "Whether the session asking is this tenant's." }),
  })
  .meta({ id: 'PersonTenantOut' });
export const EmailIn = z.strictObject({ email }).meta({ id: 'EmailIn', examples: [{ email: 'me@example.com' }] });
export const EmailCodeIn = z.strictObject({ email, code }).meta({ id: 'EmailCodeIn', examples: [{ email: 'me@example.com', code: '123456' }] });
export const PasswordResetIn = z
  .strictObject({ email, code, new_password: password })
  .meta({ id: 'PasswordResetIn', examples: [{ email: 'me@example.com', code: '123456', new_password: 'another long passphrase' }] });
export const NewPasswordIn = z
  .strictObject({ email, session: z.string().min(1).max(4096).meta({ description: 'From the sign-in answer that said new_password_required.' }), new_password: password })
  .meta({ id: 'NewPasswordIn', examples: [{ email: 'me@example.com', session: 'the session of the sign-in answer', new_password: 'another long passphrase' }] });
export const IdpExchangeIn = z
  .strictObject({
    code: z.string().min(1).max(2048).meta({ description: 'The authorization code the hosted sign-in page sent to redirect_uri.' }),
    redirect_uri: z.url().max(2048).optional().meta({ description: 'The redirect_uri the sign-in page was opened with.' }),
    code_verifier: z.string().min(43).max(128).regex(/^[A-Za-z0-9._~-]+$/, 'must be a PKCE code verifier (RFC 7636)').optional(),
  })
  .meta({
    id: 'IdpExchangeIn',
    examples: [{ code: 'the code sent to redirect_uri', redirect_uri: 'http://127.0.0.1:53682/callback', code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' }],
  });
export const DevicePollIn = z.strictObject({ device_code: z.string().min(1).max(512) }).meta({ id: 'DevicePollIn', examples: [{ device_code: '3584d83530557fdd1f46af8289938c8ef79f9dc5' }] });
export const InviteIn = z
  .strictObject({ email, tenant_id: resourceId('ten').optional().meta({ description: 'The tenant the user joins; without it a new tenant is made now.' }) })
  .meta({ id: 'InviteIn', examples: [{ email: 'new.colleague@example.com', tenant_id: exampleId('ten') }] });

export const CodeSentOut = z
  .object({ status: z.literal('code_sent'), destination: z.string().meta({ description: 'Where the code went, masked.' }) })
  .meta({ id: 'CodeSentOut' });
export const AuthStepOut = z.object({ status: z.string().meta({ description: 'confirmed, or password_reset.' }) }).meta({ id: 'AuthStepOut' });
export const AuthConfigOut = z
  .object({
    idp: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The identity provider\'s public settings (kind builtin or cognito); never a secret.' }),
    device_flow: z
      .object({ provider: z.string().meta({ description: '"github": the code host whose device flow POST /v1/auth/codehost/device/start begins.' }) })
      .nullable()
      .meta({ description: 'Sign-in by a code host\'s device flow, when the server has one configured (GITHUB_CLIENT_ID); null: the device routes answer 409.' }),
  })
  .meta({ id: 'AuthConfigOut' });

const sessionFields = {
  token: z.string().optional().meta({ description: 'A console session (every scope, 30 days), shown once.' }),
  tenant_id: z.string().optional(),
  expires_at: dateTimeOut().optional(),
  linked: z.boolean().optional().meta({ description: 'The identity was linked to the calling bearer\'s tenant.' }),
};
export const IdpExchangeOut = z
  .object({
    status: z.enum(['signed_in', 'new_password_required']),
    ...sessionFields,
    session: z.string().optional().meta({ description: 'With new_password_required: send it to POST /v1/auth/new-password.' }),
  })
  .meta({ id: 'IdpExchangeOut' });
export const DeviceStartOut = z
  .object({ device_code: z.string(), user_code: z.string(), verification_uri: z.string(), expires_in: z.int(), interval: z.int() })
  .meta({ id: 'DeviceStartOut' });
export const DevicePollOut = z
  .object({
    status: z.enum(['pending', 'slow_down', 'expired', 'denied', 'complete']),
    interval: z.int().meta({ description: 'Seconds to wait before the next poll.' }),
    ...sessionFields,
  })
  .meta({ id: 'DevicePollOut' });
export const InvitedOut = z.object({ email: z.string(), tenant_id: z.string(), status: z.literal('invited') }).meta({ id: 'InvitedOut' });

export const sessionOut = (session: Session) => ({
  token: session.secret,
  tenant_id: session.tenantId,
  expires_at: session.expiresAt.toISOString(),
  linked: session.linked,
});
