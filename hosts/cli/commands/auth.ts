import type { Command } from 'commander';
import { createApiClient, type Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, note, optionsOf, print, printJson, USER_AGENT, withJson, type Session } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { fields, money, relative } from '../format.ts';
import { configPath, DEFAULT_URL, readConfig, writeConfig, type Profile } from '../profiles.ts';
import { secret } from '../prompt.ts';
import { sleep } from '../spinner.ts';

interface LoginOptions {
  url?: string;
  email?: string;
  password?: string;
  token?: string;
}

/** The profile a login writes: --profile, GPUCTL_PROFILE, or the current one. */
const profileName = (options: { profile?: string }) => options.profile ?? process.env.GPUCTL_PROFILE ?? readConfig(configPath()).current;

function saveProfile(name: string, profile: Profile): string {
  const path = configPath();
  const config = readConfig(path);
  config.profiles[name] = profile;
  config.current = name;
  writeConfig(path, config);
  return path;
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

async function passwordSignIn(session: Session, email: string, password: string | undefined): Promise<Schema<'IdpExchangeOut'>> {
  const answer = await expectOk(session, session.client.POST('/v1/auth/sign-in', { body: { email, password: password ?? (await secret('Password: ')) } }));
  if (answer.status !== 'new_password_required') return answer;
  note('This account needs a new password (an invitation).');
  const newPassword = await secret('New password: ');
  return expectOk(session, session.client.POST('/v1/auth/new-password', { body: { email, session: answer.session ?? '', new_password: newPassword } }));
}

export function registerAuth(program: Command): void {
  example(
    withJson(
      program
        .command('login')
        .description('Sign in: GitHub device flow by default, --email for a password, --token to save an API token; writes the profile')
        .option('--url <url>', `the API (default: GPUCTL_URL, the profile's, or ${DEFAULT_URL})`)
        .option('--email <address>', 'sign in with email and password (asked on the terminal, or read from stdin)')
        .option('--password <password>', 'the password, for scripts (visible in the process list: prefer stdin)')
        .option('--token <token>', 'save an existing API token in the profile instead of signing in'),
    ),
    'gpuctl login',
    'gpuctl login --url https://gpus.example.com --email you@example.com',
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
      const checked = { ...session, client: createApiClient({ baseUrl: url, token: options.token, headers: { 'user-agent': USER_AGENT } }) };
      const self = await expectOk(checked, checked.client.GET('/v1/tokens/self'));
      answer = self;
      profile = { url, token: options.token, tenant_id: self.tenant_id, expires_at: self.expires_at };
    } else {
      const signedIn = options.email ? await passwordSignIn(session, options.email, options.password) : await deviceFlow(session);
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
    const session: Session = { connection: { url: saved.url, token: saved.token, source: `profile ${name}`, profile: name }, client: createApiClient({ baseUrl: saved.url, token: saved.token, headers: { 'user-agent': USER_AGENT } }) };
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

  example(withJson(program.command('whoami').description('The token in use: tenant, scopes, spend cap and what remains of it')), 'gpuctl whoami').action(
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
