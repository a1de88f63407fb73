import type { Request } from 'express';
import { z } from 'zod';
import { redirectWithCode, type AuthorizationRequest } from '../../../adapters/identity/builtin/index.ts';
import { DomainError } from '../../../core/errors.ts';
import type { IdentityRef, SignInOutcome } from '../../../core/ports/identity.ts';
import { errorPage, newPasswordPage, PAGE_HEADERS, signInPage } from '../authorize-page.ts';
import { clientKeyOf } from '../client-address.ts';
import { readFormBody } from '../form-body.ts';
import { HttpProblem } from '../json-body.ts';
import { defineRoute, type HandlerResult, type RouteDef } from '../route.ts';

/** What the hosted sign-in page needs: the built-in provider's side of OAuth, and the (throttled) sign-in steps. */
export interface AuthorizeDeps {
  /** The built-in provider: checks an OAuth request, issues authorization codes. */
  identity: {
    authorizationRequest(query: Record<string, unknown>): { request: AuthorizationRequest } | { problem: string };
    issueAuthorizationCode(identity: IdentityRef, request: AuthorizationRequest): Promise<string>;
  };
  /** Checks an email and password (the core's throttled sign-in); `client` is the caller's address as throttles count it. */
  signIn(email: string, password: string, client: string): Promise<SignInOutcome>;
  /** Completes a sign-in that answered new_password_required. */
  completeNewPassword(email: string, session: string, newPassword: string): Promise<IdentityRef>;
}

/**
 * The OAuth query, documented with the rules the page checks (readAuthorizationRequest). Not enforced by the
 * schema: a wrong request is answered with the page's own 400, in HTML for the browser that followed a link.
 */
const text = (description: string, rules: Record<string, unknown>) => z.string().optional().meta({ description, ...rules });
const AuthorizeQuery = z.object({
  response_type: text('Must be `code`.', { enum: ['code'], examples: ['code'] }),
  client_id: text('Must be `gpu-control-plane`.', { enum: ['gpu-control-plane'], examples: ['gpu-control-plane'] }),
  redirect_uri: text("Where the code is sent: this server's origin, a loopback address on any port (http://127.0.0.1:<port>/…, RFC 8252), or one listed in AUTH_REDIRECT_URIS.", {
    format: 'uri',
    examples: ['http://127.0.0.1:53682/callback'],
  }),
  state: text('Sent back unchanged with the code (at most 1,024 characters).', { maxLength: 1024, examples: ['af0ifjsldkj'] }),
  code_challenge: text('The base64url SHA-256 of the PKCE code verifier (43 characters).', {
    pattern: '^[A-Za-z0-9._~-]{43,128}$',
    examples: ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'],
  }),
  code_challenge_method: text('Must be `S256`.', { enum: ['S256'], examples: ['S256'] }),
});

const LOCATION = z.string().meta({ description: 'The redirect URI with `code` (and `state`) added.' });
const PAGE = { contentType: 'text/html' as const, schema: z.string() };

/** Whether the caller is a browser (it prefers HTML): then errors are pages too; other clients get `{detail}`. */
const wantsHtml = (req: Request): boolean => req.accepts(['application/json', 'text/html']) === 'text/html';

const page = (status: number, html: string, headers: Record<string, string> = {}): HandlerResult => ({
  status,
  raw: { contentType: 'text/html', text: html },
  headers: { ...PAGE_HEADERS, ...headers },
});

/** A request the page cannot serve (400): a page for a browser, `{detail}` for anyone else. */
const refuse = (req: Request, problem: string): HandlerResult => {
  if (wantsHtml(req)) return page(400, errorPage(problem));
  throw new HttpProblem(400, problem);
};

/** The status a form post that the provider refused is answered with (the page shows why). */
const STATUS_OF: Partial<Record<DomainError['code'], number>> = { INVALID_CREDENTIALS: 401, CONFLICT: 409, INVALID_INPUT: 422, RATE_LIMITED: 429 };

/**
 * The provider refused the post: a browser sees the form again with the reason; anyone else gets the error
 * as any route answers it. Anything else (an outage) goes on to the error handler.
 */
const refusedPost = (req: Request, error: unknown, form: () => string): HandlerResult => {
  const status = error instanceof DomainError ? STATUS_OF[error.code] : undefined;
  if (!status || !wantsHtml(req)) throw error;
  const retry = (error as DomainError).retryAfterSeconds;
  return page(status, form(), retry !== null ? { 'retry-after': String(retry) } : {});
};

/** The detail of a domain error, without the API hints a person on the page has no use for. */
const reasonOf = (error: unknown): string => {
  if (!(error instanceof DomainError)) return 'something went wrong; try again';
  if (error.code === 'INVALID_CREDENTIALS' && /session/.test(error.message)) return 'This step took too long. Sign in again with your temporary password.';
  if (error.code === 'INVALID_CREDENTIALS') return 'Wrong email or password.';
  if (error.code === 'INVALID_INPUT' && error.problems[0]) return `The password ${error.problems[0].msg}.`;
  return error.message.charAt(0).toUpperCase() + error.message.slice(1);
};

/**
 * The built-in provider's hosted sign-in page (OAuth 2 authorization code with PKCE, for the public client
 * `gpu-control-plane`): GET shows the form, POST checks the password (and a new one, for an invited person)
 * and sends the browser to the redirect URI with a single-use code, which POST /v1/auth/idp/exchange swaps.
 */
export function authorizeRoutes(deps: AuthorizeDeps): RouteDef[] {
  const codeFor = async (identity: IdentityRef, request: AuthorizationRequest): Promise<HandlerResult> => {
    const code = await deps.identity.issueAuthorizationCode(identity, request);
    return { status: 303, headers: { ...PAGE_HEADERS, location: redirectWithCode(request, code) } };
  };

  return [
    defineRoute({
      method: 'get',
      path: '/auth/authorize',
      operationId: 'authorizePage',
      summary: 'The built-in sign-in page (HTML; OAuth 2 authorization code with PKCE S256, client `gpu-control-plane`)',
      tags: ['auth'],
      access: { kind: 'public' },
      query: AuthorizeQuery,
      responses: [
        { status: 200, description: 'The sign-in form', ...PAGE },
        { status: 400, description: 'The OAuth request is wrong (an HTML page for a browser); nothing is sent to the redirect URI' },
      ],
      async handle({ req }) {
        const checked = deps.identity.authorizationRequest(req.query as Record<string, unknown>);
        if ('problem' in checked) return refuse(req, checked.problem);
        return page(200, signInPage(checked.request));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/authorize',
      operationId: 'authorizeSubmit',
      summary:
        'The sign-in form posted (application/x-www-form-urlencoded: the OAuth fields, `step` sign_in with email and password, ' +
        'or new_password with email, session, new_password and new_password_again)',
      tags: ['auth'],
      access: { kind: 'public' },
      bodyOptional: true,
      responses: [
        { status: 200, description: 'The next step: choose a new password (an invited person)', ...PAGE },
        { status: 303, description: 'Signed in: to the redirect URI with the code', headers: { Location: LOCATION } },
        { status: 400, description: 'The OAuth fields are wrong; nothing is sent to the redirect URI' },
        { status: 401, description: 'Wrong email or password, or the new-password step expired (the form again, for a browser)' },
        { status: 409, description: 'The email address is not confirmed yet' },
        { status: 413, description: 'The form is over 100 kB' },
        { status: 415, description: 'The body is not a form (application/x-www-form-urlencoded)' },
        { status: 422, description: 'A field is missing, or the new password is refused by the policy' },
      ],
      async handle({ req, res }) {
        const form = await readFormBody(req, res);
        const checked = deps.identity.authorizationRequest(form);
        if ('problem' in checked) return refuse(req, checked.problem);
        const { request } = checked;
        const email = (form.email ?? '').trim();

        if (form.step === 'new_password') {
          const session = form.session ?? '';
          const newPassword = form.new_password ?? '';
          const again = (error: string) => newPasswordPage(request, { email, session, error });
          if (newPassword !== (form.new_password_again ?? newPassword)) {
            return refusedPost(req, new DomainError('INVALID_INPUT', 'the two new passwords differ', [{ loc: ['body', 'new_password_again'], msg: 'must be the same as new_password' }]), () => again('The two passwords differ; type the same one twice.'));
          }
          try {
            return await codeFor(await deps.completeNewPassword(email, session, newPassword), request);
          } catch (error) {
            const expired = error instanceof DomainError && error.code === 'INVALID_CREDENTIALS';
            return refusedPost(req, error, () => (expired ? signInPage(request, { email, error: reasonOf(error) }) : again(reasonOf(error))));
          }
        }

        const password = form.password ?? '';
        if (!email || !password) {
          return refusedPost(req, new DomainError('INVALID_INPUT', 'enter an email and a password', [{ loc: ['body', email ? 'password' : 'email'], msg: 'required' }]), () =>
            signInPage(request, { email, error: 'Enter your email and your password.' }),
          );
        }
        try {
          const outcome = await deps.signIn(email, password, clientKeyOf(req));
          if (outcome.kind === 'signed_in') return await codeFor(outcome.identity, request);
          return page(200, newPasswordPage(request, { email, session: outcome.session }));
        } catch (error) {
          return refusedPost(req, error, () => signInPage(request, { email, error: reasonOf(error) }));
        }
      },
    }),
  ];
}
