import { Option, type Command } from 'commander';
import { createApiClient, type Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, note, optionsOf, print, printJson, USER_AGENT, withJson, type Session } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { fields, money, relative } from '../format.ts';
import { configPath, DEFAULT_URL, profileName, readConfig, saveProfile, writeConfig, type Profile } from '../profiles.ts';
import { secret } from '../prompt.ts';
import { sleep } from '../spinner.ts';

interface LoginOptions {
  url?: string;
  email?: string;
  password?: string;
  token?: string;
  tenant?: string;
}

/** A client with no bearer: sign-in routes link an identity to the bearer's tenant when one is sent. */
function anonymous(url: string): Session {
  return { connection: { url, token: null, source: 'login', profile: '' }, client: createApiClient({ baseUrl: url, headers: { 'user-agent': USER_AGENT } }) };
}

async function deviceFlow(session: Session): Promise<Schema<'DevicePollOut'>> {
  const begun = await expectOk(session, session.client.POST('/v1/auth/codehost/device/start')).catch((error: unknown) => {
    // 409: this server has no GitHub sign-in; say what else works
    if (error instanceof CliError && error.exitCode === EXIT.conflict) throw new CliError(`${error.message}\nSign in with --email, or save an API token with --token.`, error.exitCode);
    throw error;
  });
  note(`Open ${begun.verification_uri} and enter the code ${begun.user_code}`);
  note(`Waiting for you to approve (the code expires ${relative(new Date(Date.now() + begun.expires_in * 1000).toISOString())})...`);
  let interval = begun.interval;
  for (;;) {
    await sleep(interval * 1000);
    const polled = await expectOk(session, session.client.POST('/v1/auth/codehost/device/poll', { body: { device_code: begun.device_code } }));
    interval = polled.interval;
    if (polled.status === 'complete') return polled;
    if (polled.status === 'expired') throw new CliError('the code expired before it was approved: run `gpuctl login` again', EXIT.unauthorized);
    if (polled.status === 'denied') throw new CliError('the sign-in was denied at GitHub', EXIT.unauthorized);
  }
}

async function passwordSignIn(session: Session, email: string, password: string | undefined, tenantId: string | undefined): Promise<Schema<'IdpExchangeOut'>> {
  const body = { email, password: password ?? (await secret('Password: ')), ...(tenantId && { tenant_id: tenantId }) };
  const answer = await expectOk(session, session.client.POST('/v1/auth/sign-in', { body }));
  if (answer.status !== 'new_password_required') return answer;
  note('This account needs a new password (an invitation).');
  const newPassword = await secret('New password: ');
  return expectOk(session, session.client.POST('/v1/auth/new-password', { body: { email, session: answer.session ?? '', new_password: newPassword } }));
}

/**
 * A sign-in that landed in another tenant than --tenant asked (the device flow and the new-password step take
 * none): the same person's session there (POST /v1/auth/switch). The session it started from was made a moment
 * ago for this and has issued nothing, so it is revoked rather than left valid for 30 days with no holder.
 */
type SignedIn = Schema<'IdpExchangeOut'> | Schema<'DevicePollOut'>;

async function intoTenant(url: string, signedIn: SignedIn, tenantId: string | undefined): Promise<SignedIn> {
  if (!tenantId || signedIn.tenant_id === tenantId) return signedIn;
  const first = bearer(url, signedIn.token!);
  try {
    return await expectOk(first, first.client.POST('/v1/auth/switch', { body: { tenant_id: tenantId } }));
  } finally {
    const self = await first.client.GET('/v1/tokens/self').catch(() => null);
    if (self?.data) await first.client.DELETE('/v1/tokens/{token_id}', { params: { path: { token_id: self.data.id } } }).catch(() => null);
  }
}

const bearer = (url: string, token: string): Session => ({
  connection: { url, token, source: 'login', profile: '' },
  client: createApiClient({ baseUrl: url, token, headers: { 'user-agent': USER_AGENT } }),
});

export function registerAuth(program: Command): void {
  example(
    withJson(
      program
        .command('login')
        .description('Sign in: GitHub device flow by default, --email for a password, --token to save an API token; writes the profile')
        .option('--url <url>', `the API (default: GPUCTL_URL, the profile's, or ${DEFAULT_URL})`)
        .option('--email <address>', 'sign in with email and password (asked on the terminal, or read from stdin)')
        .option('--password <password>', 'the password, for scripts (visible in the process list: prefer stdin)')
        .option('--token <token>', 'save an existing API token in the profile instead of signing in')
        .addOption(
          new Option('--tenant <tenant_id>', 'a person of several tenants signs in to this one (`gpuctl tenants ls`); default: the one joined first').conflicts('token'),
        ),
    ),
    'gpuctl login',
    'gpuctl login --url https://gpus.example.com --email you@example.com',
    'gpuctl login --email you@example.com --tenant ten_abc123',
    'GPUCTL_PROFILE=ci gpuctl login --token "$TOKEN"',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf<LoginOptions>(command);
    const name = profileName(options);
    const saved = readConfig(configPath()).profiles[name];
    const url = (options.url ?? process.env.GPUCTL_URL ?? saved?.url ?? DEFAULT_URL).replace(/\/+$/, '');
    const session = anonymous(url);
    let profile: Profile;
    let answer: unknown;
    if (options.token) {
      const checked = bearer(url, options.token);
      const self = await expectOk(checked, checked.client.GET('/v1/tokens/self'));
      answer = self;
      profile = { url, token: options.token, tenant_id: self.tenant_id, expires_at: self.expires_at };
    } else {
      const first = options.email ? await passwordSignIn(session, options.email, options.password, options.tenant) : await deviceFlow(session);
      if (!first.token) throw new CliError('the sign-in answered no session token', EXIT.unexpected);
      const signedIn = await intoTenant(url, first, options.tenant);
      if (!signedIn.token) throw new CliError('the sign-in answered no session token', EXIT.unexpected);
      answer = signedIn;
      profile = { url, token: signedIn.token, tenant_id: signedIn.tenant_id ?? null, expires_at: signedIn.expires_at ?? null };
    }
    const path = saveProfile(name, profile);
    if (options.json) return printJson(answer);
    print(`Signed in to ${url} (tenant ${profile.tenant_id ?? '?'}${profile.expires_at ? `, expires ${relative(profile.expires_at)}` : ''}); profile "${name}" saved in ${path}`);
  });

  example(
    program
      .command('logout')
      .description("Forget the profile's token; a session from a sign-in is revoked too (an API token saved with --token stays valid)"),
    'gpuctl logout',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf(command);
    const name = profileName(options);
    const path = configPath();
    const config = readConfig(path);
    const saved = config.profiles[name];
    if (!saved) {
      print(`No profile "${name}": nothing to do`);
      return;
    }
    const session: Session = { ...bearer(saved.url, saved.token), connection: { url: saved.url, token: saved.token, source: `profile ${name}`, profile: name } };
    let revoked = false;
    try {
      const self = await expectOk(session, session.client.GET('/v1/tokens/self'));
      if (self.kind === 'session') {
        await expectOk(session, session.client.DELETE('/v1/tokens/{token_id}', { params: { path: { token_id: self.id } } }));
        revoked = true;
      }
    } catch (error) {
      // an expired or revoked token, or a server gone: forgetting it locally is still what was asked
      if (!(error instanceof CliError)) throw error;
      note(`warning: ${error.message}`);
    }
    delete config.profiles[name];
    writeConfig(path, config);
    print(`Signed out of ${saved.url}${revoked ? ' (session revoked)' : ''}; profile "${name}" removed`);
  });

  example(withJson(program.command('whoami').description('The token in use: tenant, role, whether it is root, scopes, spend cap and what remains of it')), 'gpuctl whoami').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const self = await expectOk(session, session.client.GET('/v1/tokens/self'));
      if (optionsOf(command).json) return printJson(self);
      print(
        fields([
          ['url', session.connection.url],
          ['from', session.connection.source],
          ['tenant', self.tenant_id],
          ['token', `${self.id} (${self.kind}${self.name ? `, ${self.name}` : ''})`],
          ['role', self.role ?? 'none (an API token)'],
          ['root', self.root ? 'yes: may change people, invite and write the budget' : 'no'],
          ['scopes', self.scopes.join(', ')],
          ['spend cap', self.spend_limit_cents === null ? 'none' : `${money(self.spend_limit_cents)} (${money(self.committed_cents)} committed)`],
          ['remaining', self.remaining_cents === null ? 'uncapped' : money(self.remaining_cents)],
          ['max hours', self.effective_max_rental_hours ?? 'none'],
          ['burn', `${money(self.burn_cents_per_hour)} an hour${self.max_burn_cents_per_hour === null ? '' : ` of ${money(self.max_burn_cents_per_hour)}`}${self.burn_left_cents_per_hour === null ? '' : ` (${money(self.burn_left_cents_per_hour)} left)`}`],
          ['expires', self.expires_at ? `${relative(self.expires_at)} (${self.expires_at})` : 'never'],
        ]),
      );
    },
  );
}
