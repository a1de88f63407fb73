import type { AuthorizationRequest } from '../../adapters/identity/builtin/index.ts';

/** The hosted sign-in page's HTML: small, without scripts, every value escaped. */

const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Headers for every page and redirect of the sign-in flow: never cached, never framed (clickjacking), no referrer. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  // no form-action: browsers apply it to the redirect after the post, which goes to the client's own address
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
});

const STYLE = `body{font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;margin-top:1rem;font-weight:600}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#a00000;border-left:4px solid #a00000;padding-left:.75rem}`;

const layout = (title: string, content: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escape(title)}</title><style>${STYLE}</style></head><body><main><h1>${escape(title)}</h1>${content}</main></body></html>`;

const errorNote = (message: string | undefined): string => (message ? `<p class="error" id="form-error" role="alert">${escape(message)}</p>` : '');
const describedBy = (message: string | undefined): string => (message ? ' aria-describedby="form-error" aria-invalid="true"' : '');

/** The OAuth request, carried through the form so the post can be checked again like the first request. */
const requestFields = (request: AuthorizationRequest): string =>
  [
    ['response_type', 'code'],
    ['client_id', 'gpu-control-plane'],
    ['redirect_uri', request.redirectUri],
    ...(request.state !== null ? [['state', request.state]] : []),
    ['code_challenge', request.codeChallenge],
    ['code_challenge_method', 'S256'],
  ]
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escape(value!)}">`)
    .join('');

export function signInPage(request: AuthorizationRequest, options: { email?: string; error?: string } = {}): string {
  const returnsTo = new URL(request.redirectUri).host;
  return layout(
    'Sign in to gpu-control-plane',
    `<p>Signing in sends you back to <strong>${escape(returnsTo)}</strong>.</p>${errorNote(options.error)}` +
      `<form method="post" action="authorize">${requestFields(request)}<input type="hidden" name="step" value="sign_in">` +
      `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escape(options.email ?? '')}"${describedBy(options.error)}>` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required${describedBy(options.error)}>` +
      `<button type="submit">Sign in</button></form>`,
  );
}

export function newPasswordPage(request: AuthorizationRequest, options: { email: string; session: string; error?: string }): string {
  return layout(
    'Choose a new password',
    `<p>Your account has a temporary password. Choose your own to finish signing in: at least 10 characters, not your email address.</p>` +
      errorNote(options.error) +
      `<form method="post" action="authorize">${requestFields(request)}<input type="hidden" name="step" value="new_password">` +
      `<input type="hidden" name="session" value="${escape(options.session)}">` +
      `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" readonly value="${escape(options.email)}">` +
      `<label for="new_password">New password</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="10" maxlength="256" required${describedBy(options.error)}>` +
      `<label for="new_password_again">New password, again</label><input id="new_password_again" name="new_password_again" type="password" autocomplete="new-password" minlength="10" maxlength="256" required>` +
      `<button type="submit">Set password and sign in</button></form>`,
  );
}

/** A request the page cannot serve: said here, never sent on to a redirect URI that was not checked. */
export function errorPage(message: string): string {
  return layout('Cannot sign in', `<p class="error" role="alert">${escape(message)}</p><p>Go back to the application you came from and start the sign-in again.</p>`);
}
