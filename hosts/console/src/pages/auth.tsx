import { useEffect, useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, CopyButton, ErrorText, Input } from '../components.tsx';
import { BASE, navigate } from '../router.ts';
import { setSession } from '../session.ts';
import type { DeviceStart, SignedIn } from '../types.ts';

export type AuthStep = 'sign-in' | 'sign-up' | 'confirm' | 'forgot' | 'reset' | 'github';

/** The address typed on one step, offered on the next (memory only). */
let rememberedEmail = '';
const PKCE_KEY = 'gcp.console.pkce';

function signedIn(answer: SignedIn, next = '/market'): void {
  if (answer.token) {
    setSession(answer.token);
    navigate(next, true);
  }
}

export function AuthPage({ step, next }: { step: AuthStep; next?: string }) {
  return (
    <section class="auth">
      {step === 'sign-in' && <SignIn {...(next ? { next } : {})} />}
      {step === 'sign-up' && <SignUp />}
      {step === 'confirm' && <ConfirmEmail />}
      {step === 'forgot' && <Forgot />}
      {step === 'reset' && <Reset />}
      {step === 'github' && <GithubDevice />}
    </section>
  );
}

function useEmail(): [string, (v: string) => void] {
  const [email, setEmail] = useState(rememberedEmail);
  return [email, (v) => setEmail((rememberedEmail = v))];
}

function SignIn({ next }: { next?: string }) {
  const [email, setEmail] = useEmail();
  const [password, setPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [challenge, setChallenge] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [hosted, setHosted] = useState<{ authorize_url: string; client_id: string } | null>(null);
  const [github, setGithub] = useState(false);
  useEffect(() => {
    void run(api().GET('/v1/auth/config')).then(({ data }) => {
      // the GitHub link only where the server has GitHub's device flow configured (otherwise its routes answer 409)
      setGithub(data?.device_flow?.provider === 'github');
      const idp = data?.idp;
      if (idp?.kind === 'cognito' && typeof idp.authorize_url === 'string' && typeof idp.client_id === 'string') setHosted({ authorize_url: idp.authorize_url, client_id: idp.client_id });
    });
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const answer = challenge
      ? await run(api().POST('/v1/auth/new-password', { body: { email, session: challenge, new_password: newPassword } }))
      : await run(api().POST('/v1/auth/sign-in', { body: { email, password } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    if (answer.data.status === 'new_password_required' && answer.data.session) return setChallenge(answer.data.session);
    signedIn(answer.data, next);
  };
  return (
    <>
      <h1>Sign in</h1>
      {next && <p>Sign in to see that page.</p>}
      <form onSubmit={submit}>
        <Input label="Email" type="email" autocomplete="username" required value={email} onInput={setEmail} />
        {challenge ? (
          <Input label="New password" hint="Your account asks for a new password before the first sign-in." type="password" autocomplete="new-password" required value={newPassword} onInput={setNewPassword} />
        ) : (
          <Input label="Password" type="password" autocomplete="current-password" required value={password} onInput={setPassword} />
        )}
        <ErrorText error={error} />
        {error?.status === 409 && /confirm/.test(error.detail) && (
          <p>
            <a href={`${BASE}/confirm`}>Enter the confirmation code</a>
          </p>
        )}
        <Busy busy={busy}>{challenge ? 'Set password and sign in' : 'Sign in'}</Busy>
      </form>
      <ul class="links">
        <li>
          <a href={`${BASE}/sign-up`}>Create an account</a>
        </li>
        <li>
          <a href={`${BASE}/forgot`}>Forgot the password?</a>
        </li>
        {github && (
          <li>
            <a href={`${BASE}/github`}>Sign in with GitHub</a>
          </li>
        )}
        {hosted && (
          <li>
            <button type="button" class="link" onClick={() => void startHosted(hosted)}>
              Sign in on the hosted page
            </button>
          </li>
        )}
      </ul>
    </>
  );
}

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** The hosted sign-in page, OAuth 2 code with PKCE S256; the verifier waits in this tab's sessionStorage. */
async function startHosted(idp: { authorize_url: string; client_id: string }): Promise<void> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state }));
  const url = new URL(idp.authorize_url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: idp.client_id,
    redirect_uri: `${location.origin}${BASE}/callback`,
    scope: 'openid email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

export function HostedCallback() {
  const [error, setError] = useState<ApiError | string | null>(null);
  useEffect(() => {
    const query = new URLSearchParams(location.search);
    const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) ?? 'null') as { verifier: string; state: string } | null;
    sessionStorage.removeItem(PKCE_KEY);
    const code = query.get('code');
    if (!code || !saved || saved.state !== query.get('state')) {
      setError(query.get('error_description') ?? 'The sign-in did not come back from this tab; start it again.');
      return;
    }
    void run(api().POST('/v1/auth/idp/exchange', { body: { code, redirect_uri: `${location.origin}${BASE}/callback`, code_verifier: saved.verifier } })).then((answer) => {
      if (answer.error) setError(answer.error);
      else if (answer.data.status === 'signed_in') signedIn(answer.data);
      else setError('Set a new password on the hosted page first, then sign in again.');
    });
  }, []);
  return (
    <section class="auth">
      <h1>Signing in…</h1>
      <ErrorText error={error} />
      {error && <a href={`${BASE}/sign-in`}>Back to sign in</a>}
    </section>
  );
}

function SignUp() {
  const [email, setEmail] = useEmail();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const answer = await run(api().POST('/v1/auth/sign-up', { body: { email, password } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    navigate('/confirm');
  };
  return (
    <>
      <h1>Create an account</h1>
      <form onSubmit={submit}>
        <Input label="Email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
        <Input label="Password" hint="At least 12 characters; not your email." type="password" autocomplete="new-password" required value={password} onInput={setPassword} />
        <ErrorText error={error} />
        <Busy busy={busy}>Create account</Busy>
      </form>
      <p>
        Have one? <a href={`${BASE}/sign-in`}>Sign in</a>
      </p>
    </>
  );
}

function ConfirmEmail() {
  const [email, setEmail] = useEmail();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const answer = await run(api().POST('/v1/auth/confirm-email', { body: { email, code: code.trim() } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    navigate('/sign-in');
  };
  const resend = async () => {
    const answer = await run(api().POST('/v1/auth/resend-code', { body: { email } }));
    if (answer.error) setError(answer.error);
    else setNote(`A new code was sent to ${answer.data.destination}.`);
  };
  return (
    <>
      <h1>Confirm your email</h1>
      <p>We emailed you a 6-digit code. Enter it to confirm the address, then sign in.</p>
      <form onSubmit={submit}>
        <Input label="Email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
        <Input label="Code" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required value={code} onInput={setCode} />
        <ErrorText error={error} />
        {note && <p role="status">{note}</p>}
        <Busy busy={busy}>Confirm</Busy>{' '}
        <button type="button" class="secondary" onClick={resend}>
          Send a new code
        </button>
      </form>
    </>
  );
}

function Forgot() {
  const [email, setEmail] = useEmail();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const answer = await run(api().POST('/v1/auth/forgot-password', { body: { email } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    navigate('/reset');
  };
  return (
    <>
      <h1>Forgot the password</h1>
      <form onSubmit={submit}>
        <Input label="Email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
        <ErrorText error={error} />
        <Busy busy={busy}>Email me a code</Busy>
      </form>
    </>
  );
}

function Reset() {
  const [email, setEmail] = useEmail();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const answer = await run(api().POST('/v1/auth/reset-password', { body: { email, code: code.trim(), new_password: password } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    navigate('/sign-in');
  };
  return (
    <>
      <h1>Set a new password</h1>
      <p>If the address has an account, a code is on its way to it.</p>
      <form onSubmit={submit}>
        <Input label="Email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
        <Input label="Code" inputMode="numeric" autocomplete="one-time-code" required value={code} onInput={setCode} />
        <Input label="New password" type="password" autocomplete="new-password" required value={password} onInput={setPassword} />
        <ErrorText error={error} />
        <Busy busy={busy}>Set password</Busy>
      </form>
    </>
  );
}

/** GitHub's device flow: the person enters a code on github.com while this page polls. */
function GithubDevice() {
  const [start, setStart] = useState<DeviceStart | null>(null);
  const [error, setError] = useState<ApiError | string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!start) return;
    let stopped = false;
    let interval = start.interval;
    const deadline = Date.now() + start.expires_in * 1000;
    const poll = async () => {
      if (stopped) return;
      const answer = await run(api().POST('/v1/auth/codehost/device/poll', { body: { device_code: start.device_code } }));
      if (stopped) return;
      if (answer.error) return setError(answer.error);
      const { status } = answer.data;
      if (status === 'complete') return signedIn({ status: 'signed_in', ...(answer.data.token && { token: answer.data.token }) });
      if (status === 'expired' || status === 'denied' || Date.now() > deadline) return setError(status === 'denied' ? 'GitHub says the sign-in was denied.' : 'The code expired; start again.');
      interval = answer.data.interval ?? interval;
      setTimeout(poll, interval * 1000);
    };
    const first = setTimeout(poll, interval * 1000);
    return () => {
      stopped = true;
      clearTimeout(first);
    };
  }, [start]);
  const begin = async () => {
    setBusy(true);
    setError(null);
    const answer = await run(api().POST('/v1/auth/codehost/device/start'));
    setBusy(false);
    if (answer.error) setError(answer.error);
    else setStart(answer.data);
  };
  return (
    <>
      <h1>Sign in with GitHub</h1>
      {!start ? (
        <>
          <p>GitHub shows a page where you enter a short code; this page signs you in once you have.</p>
          <Busy busy={busy} type="button" onClick={begin}>
            Get a code
          </Busy>
        </>
      ) : (
        <>
          <p>
            Open{' '}
            <a href={start.verification_uri} target="_blank" rel="noopener noreferrer">
              {start.verification_uri}
            </a>{' '}
            and enter this code:
          </p>
          <p class="code">
            <code>{start.user_code}</code> <CopyButton text={start.user_code} label="Copy the GitHub code" />
          </p>
          {!error && (
            <p role="status">
              <span class="spinner" aria-hidden="true" /> Waiting for GitHub…
            </p>
          )}
        </>
      )}
      <ErrorText error={error} />
      <p>
        <a href={`${BASE}/sign-in`}>Back to sign in</a>
      </p>
    </>
  );
}
